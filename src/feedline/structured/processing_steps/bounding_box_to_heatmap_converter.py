"""The box-to-heatmap step (module path as upstream)."""

from feedline.plugins.structured.steps import BoundingBoxToHeatmapConverter

__all__ = ["BoundingBoxToHeatmapConverter"]
