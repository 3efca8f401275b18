"""``feedline.plugin.numpy``: DALI's ``nvidia.dali.plugin.numpy`` path for the iterators of
:mod:`feedline.plugins.numpy`."""

from feedline.plugins.numpy import (
    GenericIterator,
    LastBatchPolicy,
    RaggedIterator,
)

__all__ = [
    "GenericIterator",
    "LastBatchPolicy",
    "RaggedIterator",
]
