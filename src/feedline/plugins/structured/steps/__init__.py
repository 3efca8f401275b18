"""Processing steps: the base contract, sub-tree wrappers and a few ready steps."""

from feedline.plugins.structured.steps.affine import AffineTransformer
from feedline.plugins.structured.steps.base import (
    DataGroupArrayInPathElementsAppliedStep,
    DataGroupArrayWithNameElementsAppliedStep,
    DataGroupInPathAppliedStep,
    DataGroupsWithNameAppliedStep,
    FieldNotFoundError,
    FormatError,
    GroupToApplyToSelectedStepBase,
    PipelineStepBase,
)
from feedline.plugins.structured.steps.conditions import AnnotationElementConditionEval
from feedline.plugins.structured.steps.image import ImageDecoder, PhotoMetricDistorter
from feedline.plugins.structured.steps.normalize import (
    AxesLayoutSetter,
    ImageMeanStdDevNormalizer,
    ImageRange01Normalizer,
    ImageToTileSizePadder,
    TensorSizeAdder,
)
from feedline.plugins.structured.steps.points import CoordinateCropper, PointsInRangeCheck
from feedline.plugins.structured.steps.removal import ConditionalElementRemover
from feedline.plugins.structured.steps.structural import PaddingToUniform, UnneededFieldRemover

__all__ = [
    "AffineTransformer",
    "AnnotationElementConditionEval",
    "AxesLayoutSetter",
    "ConditionalElementRemover",
    "CoordinateCropper",
    "DataGroupArrayInPathElementsAppliedStep",
    "DataGroupArrayWithNameElementsAppliedStep",
    "DataGroupInPathAppliedStep",
    "DataGroupsWithNameAppliedStep",
    "FieldNotFoundError",
    "FormatError",
    "GroupToApplyToSelectedStepBase",
    "ImageDecoder",
    "ImageMeanStdDevNormalizer",
    "ImageRange01Normalizer",
    "ImageToTileSizePadder",
    "PaddingToUniform",
    "PhotoMetricDistorter",
    "PipelineStepBase",
    "PointsInRangeCheck",
    "TensorSizeAdder",
    "UnneededFieldRemover",
]
