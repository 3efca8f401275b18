"""The data-set access contract (module path as upstream)."""

from feedline.plugins.structured.inputs import DataProvider

__all__ = [
    "DataProvider",
]
