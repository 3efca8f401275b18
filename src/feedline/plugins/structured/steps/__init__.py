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
from feedline.plugins.structured.steps.bev import BEVBBoxesTransformer3D
from feedline.plugins.structured.steps.conditions import AnnotationElementConditionEval
from feedline.plugins.structured.steps.heatmap import BoundingBoxToHeatmapConverter
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
from feedline.plugins.structured.steps.visibility import VisibleBboxSelector

__all__ = [
    "AffineTransformer",
    "AnnotationElementConditionEval",
    "AxesLayoutSetter",
    "BEVBBoxesTransformer3D",
    "BoundingBoxToHeatmapConverter",
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
    "VisibleBboxSelector",
]
