"""The base class of every processing step (module path as upstream)."""

from feedline.plugins.structured.steps import PipelineStepBase

__all__ = ["PipelineStepBase"]
