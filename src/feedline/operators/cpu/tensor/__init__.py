"""Operator family ``tensor``: operators on whole tensors (constant, cast, reshape, copy,
transpose, pad, slice, normalize). Schemas and registration: :mod:`.schemas`."""
