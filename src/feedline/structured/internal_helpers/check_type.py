"""The element-type check of graph nodes (module path as upstream)."""

from feedline.plugins.structured.helpers import check_type

__all__ = ["check_type"]
