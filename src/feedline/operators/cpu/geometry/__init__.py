"""Operator family ``geometry``: flipping, warping and pasting images; boxes and points.
Schemas and registration: :mod:`.schemas`."""
