"""The box visibility step (module path as upstream)."""

from feedline.plugins.structured.steps import VisibleBboxSelector

__all__ = ["VisibleBboxSelector"]
