"""NumPy iterators: pipeline batches as NumPy arrays, with DALI's epoch semantics.

Needs no framework. CPU outputs are handed over without a copy; GPU outputs are copied to the
host.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.plugins.iterator import BaseIterator, LastBatchPolicy, TaggedOutputs

__all__ = ["GenericIterator", "LastBatchPolicy", "RaggedIterator", "feedline_register_iterators"]

DENSE_TAG = "dense"
LIST_TAG = "list"


class GenericIterator(BaseIterator):
    """Batches as ``[{name: np.ndarray}]``, one dict per pipeline (see :class:`BaseIterator`).

    Every output must be dense (all samples of a batch of one shape); arrays have shape
    ``(batch, *sample_shape)`` and share the pipeline's memory.
    """

    framework = "NumPy"
    ragged_hint = "use feedline.plugins.numpy.RaggedIterator (lists of per-sample arrays)"

    def _convert(self, batch: Any, name: str, pipe_index: int) -> np.ndarray:
        return np.asarray(self._dense(batch.as_cpu(), name, pipe_index))


class RaggedIterator(TaggedOutputs, GenericIterator):
    """Like :class:`GenericIterator`, but outputs tagged ``"list"`` in ``output_types`` come as
    a list of per-sample arrays (zero-copy views), so samples may differ in shape (boxes per
    image). Untagged (``output_types=None``) means every output is dense. The arguments after
    ``output_types`` are :class:`GenericIterator`'s, in its order from ``auto_reset`` on.
    """

    DENSE_TAG = DENSE_TAG
    LIST_TAG = LIST_TAG
    TAGS = (DENSE_TAG, LIST_TAG)

    def _convert(self, batch: Any, name: str, pipe_index: int) -> Any:
        if self._tag(name) == LIST_TAG:
            return batch.as_cpu().samples()
        return super()._convert(batch, name, pipe_index)


@hookimpl
def feedline_register_iterators(registry: Any) -> None:
    """Register the NumPy iterators."""
    registry.add_iterator("numpy", "feedline.plugins.numpy:GenericIterator")
    registry.add_iterator("numpy.ragged", "feedline.plugins.numpy:RaggedIterator")
