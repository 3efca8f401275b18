"""The per-sample input contract (module path as upstream)."""

from feedline.plugins.structured.inputs import CallableBase

__all__ = [
    "CallableBase",
]
