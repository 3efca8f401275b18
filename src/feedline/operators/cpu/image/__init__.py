"""Operator family ``image``: decoding, resizing, cropping and normalising images.
Schemas and registration: :mod:`.schemas`."""
