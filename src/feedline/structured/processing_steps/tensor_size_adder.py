"""The tensor size step (module path as upstream, which does not export it from the package)."""

from feedline.plugins.structured.steps import TensorSizeAdder

__all__ = ["TensorSizeAdder"]
