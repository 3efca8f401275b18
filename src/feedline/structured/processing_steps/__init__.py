"""Processing steps, their base classes and the wrappers that apply a step to selected groups."""

from feedline.plugins.structured.steps import (
    AffineTransformer,
    DataGroupArrayInPathElementsAppliedStep,
    DataGroupArrayWithNameElementsAppliedStep,
    DataGroupInPathAppliedStep,
    DataGroupsWithNameAppliedStep,
    GroupToApplyToSelectedStepBase,
    ImageDecoder,
    PaddingToUniform,
    PhotoMetricDistorter,
    PipelineStepBase,
    UnneededFieldRemover,
)

__all__ = [
    "AffineTransformer",
    "DataGroupArrayInPathElementsAppliedStep",
    "DataGroupArrayWithNameElementsAppliedStep",
    "DataGroupInPathAppliedStep",
    "DataGroupsWithNameAppliedStep",
    "GroupToApplyToSelectedStepBase",
    "ImageDecoder",
    "PaddingToUniform",
    "PhotoMetricDistorter",
    "PipelineStepBase",
    "UnneededFieldRemover",
]
