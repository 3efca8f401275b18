"""Operator family ``random``: random numbers and noise. Schemas and registration:
:mod:`.schemas`."""
