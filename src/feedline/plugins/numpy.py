"""NumPy iterators: pipeline batches as NumPy arrays, with DALI's epoch semantics.

Needs no framework. CPU outputs are handed over without a copy; GPU outputs are copied to the
host.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.plugins.iterator import BaseIterator, LastBatchPolicy, check_output_types

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


class RaggedIterator(GenericIterator):
    """Like :class:`GenericIterator`, but outputs tagged ``"list"`` in ``output_types`` come as
    a list of per-sample arrays (zero-copy views), so samples may differ in shape (boxes per
    image). Untagged (``output_types=None``) means every output is dense.
    """

    DENSE_TAG = DENSE_TAG
    LIST_TAG = LIST_TAG

    def __init__(
        self,
        pipelines: Any,
        output_map: Sequence[str],
        size: int = -1,
        reader_name: str | None = None,
        output_types: Sequence[str] | None = None,
        auto_reset: bool | str | None = False,
        fill_last_batch: bool | None = None,
        last_batch_padded: bool = False,
        last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
        prepare_first_batch: bool = True,
    ) -> None:
        self._output_types = check_output_types(output_types, output_map, (DENSE_TAG, LIST_TAG))
        super().__init__(
            pipelines,
            output_map,
            size=size,
            reader_name=reader_name,
            auto_reset=auto_reset,
            fill_last_batch=fill_last_batch,
            last_batch_padded=last_batch_padded,
            last_batch_policy=last_batch_policy,
            prepare_first_batch=prepare_first_batch,
        )

    def _convert(self, batch: Any, name: str, pipe_index: int) -> Any:
        if self._output_types is not None and self._output_types[name] == LIST_TAG:
            return batch.as_cpu().samples()
        return super()._convert(batch, name, pipe_index)


@hookimpl
def feedline_register_iterators(registry: Any) -> None:
    """Register the NumPy iterators."""
    registry.add_iterator("numpy", "feedline.plugins.numpy:GenericIterator")
    registry.add_iterator("numpy.ragged", "feedline.plugins.numpy:RaggedIterator")
