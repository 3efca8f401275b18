"""``feedline.plugin.jax``: DALI's ``nvidia.dali.plugin.jax`` path for the iterators of
:mod:`feedline.plugins.jax`."""

from feedline.plugins.jax import (
    DALIGenericIterator,
    GenericIterator,
    LastBatchPolicy,
)

__all__ = [
    "DALIGenericIterator",
    "GenericIterator",
    "LastBatchPolicy",
]
