"""Operator family ``math``: the arithmetic operators behind ``x + y`` and
:mod:`feedline.math`. Schemas and registration: :mod:`.schemas`."""
