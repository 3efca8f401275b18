"""Operator family ``color``: brightness, contrast, hue, saturation and colour spaces.
Schemas and registration: :mod:`.schemas`."""
