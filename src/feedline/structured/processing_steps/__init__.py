"""Processing steps, their base classes and the wrappers that apply a step to selected groups."""

from feedline.plugins.structured.steps import (
    AffineTransformer,
    AnnotationElementConditionEval,
    AxesLayoutSetter,
    DataGroupArrayInPathElementsAppliedStep,
    DataGroupArrayWithNameElementsAppliedStep,
    DataGroupInPathAppliedStep,
    DataGroupsWithNameAppliedStep,
    GroupToApplyToSelectedStepBase,
    ImageDecoder,
    ImageMeanStdDevNormalizer,
    ImageRange01Normalizer,
    ImageToTileSizePadder,
    PaddingToUniform,
    PhotoMetricDistorter,
    PipelineStepBase,
    UnneededFieldRemover,
)

__all__ = [
    "AffineTransformer",
    "AnnotationElementConditionEval",
    "AxesLayoutSetter",
    "DataGroupArrayInPathElementsAppliedStep",
    "DataGroupArrayWithNameElementsAppliedStep",
    "DataGroupInPathAppliedStep",
    "DataGroupsWithNameAppliedStep",
    "GroupToApplyToSelectedStepBase",
    "ImageDecoder",
    "ImageMeanStdDevNormalizer",
    "ImageRange01Normalizer",
    "ImageToTileSizePadder",
    "PaddingToUniform",
    "PhotoMetricDistorter",
    "PipelineStepBase",
    "UnneededFieldRemover",
]
