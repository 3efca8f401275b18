"""The per-batch input contract (module path as upstream)."""

from feedline.plugins.structured.inputs import IterableBase

__all__ = [
    "IterableBase",
]
