"""The pipeline definition (module path as upstream)."""

from feedline.plugins.structured.definition import PipelineDefinition

__all__ = ["PipelineDefinition"]
