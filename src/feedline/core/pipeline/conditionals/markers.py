"""The mark of a function transformed for conditionals, readable without loading the
transformation itself (operator schemas check it when an operator is called)."""

from __future__ import annotations

from typing import Any

__all__ = ["CONVERTED", "is_converted"]

CONVERTED = "_feedline_converted"
"""The attribute set on a function the transformation rewrote."""


def is_converted(func: Any) -> bool:
    """Whether ``func`` is a transformed function."""
    return bool(getattr(func, CONVERTED, False))
