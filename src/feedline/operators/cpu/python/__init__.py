"""Operator family ``python``: data and functions from the user's Python code
(``external_source``, ``python_function``). Schemas and registration: :mod:`.schemas`."""
