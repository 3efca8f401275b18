"""Operator functions used by the processing steps."""

__all__: list[str] = []
