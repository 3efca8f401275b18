"""``feedline.plugin.pytorch``: DALI's ``nvidia.dali.plugin.pytorch`` path for the iterators of
:mod:`feedline.plugins.pytorch`."""

from feedline.plugins.pytorch import (
    ClassificationIterator,
    DALIClassificationIterator,
    DALIGenericIterator,
    DALIRaggedIterator,
    GenericIterator,
    LastBatchPolicy,
    RaggedIterator,
)

__all__ = [
    "ClassificationIterator",
    "DALIClassificationIterator",
    "DALIGenericIterator",
    "DALIRaggedIterator",
    "GenericIterator",
    "LastBatchPolicy",
    "RaggedIterator",
]
