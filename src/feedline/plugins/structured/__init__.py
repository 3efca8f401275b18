"""Structured samples: nested, typed data through a pipeline and out of its iterator.

``SampleDataGroup`` describes and holds a sample as a tree of named fields; ``PipelineDefinition``
builds a pipeline from an input callable/iterable and a list of steps (``PipelineStepBase``), each
of which checks and transforms the format before it adds its part of the graph;
``StructuredOutputIterator`` turns the flat pipeline outputs back into the tree (nested dicts of
PyTorch tensors by default). Nothing here imports PyTorch until an iterator is created.
"""

from feedline.plugins.structured.definition import PipelineDefinition
from feedline.plugins.structured.inputs import (
    CallableBase,
    DataProvider,
    IterableBase,
    ShuffledShardedInputCallable,
)
from feedline.plugins.structured.iterator import (
    DALIStructuredOutputIterator,
    StructuredOutputIterator,
)
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps import (
    AffineTransformer,
    DataGroupArrayInPathElementsAppliedStep,
    DataGroupArrayWithNameElementsAppliedStep,
    DataGroupInPathAppliedStep,
    DataGroupsWithNameAppliedStep,
    FormatError,
    GroupToApplyToSelectedStepBase,
    ImageDecoder,
    PaddingToUniform,
    PhotoMetricDistorter,
    PipelineStepBase,
    UnneededFieldRemover,
)

__all__ = [
    "AffineTransformer",
    "CallableBase",
    "DALIStructuredOutputIterator",
    "DataGroupArrayInPathElementsAppliedStep",
    "DataGroupArrayWithNameElementsAppliedStep",
    "DataGroupInPathAppliedStep",
    "DataGroupsWithNameAppliedStep",
    "DataProvider",
    "FormatError",
    "GroupToApplyToSelectedStepBase",
    "ImageDecoder",
    "IterableBase",
    "PaddingToUniform",
    "PhotoMetricDistorter",
    "PipelineDefinition",
    "PipelineStepBase",
    "SampleDataGroup",
    "ShuffledShardedInputCallable",
    "StructuredOutputIterator",
    "UnneededFieldRemover",
]
