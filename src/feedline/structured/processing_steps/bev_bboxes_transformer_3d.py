"""The 3-D box augmentation step (module path as upstream)."""

from feedline.plugins.structured.steps import BEVBBoxesTransformer3D

__all__ = ["BEVBBoxesTransformer3D"]
