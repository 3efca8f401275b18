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
    feed_ndarray,
)

__all__ = [
    "ClassificationIterator",
    "DALIClassificationIterator",
    "DALIGenericIterator",
    "DALIRaggedIterator",
    "GenericIterator",
    "LastBatchPolicy",
    "RaggedIterator",
    "feed_ndarray",
]
