"""PyTorch iterators with DALI's API and epoch semantics (``DALIGenericIterator`` & co).

Batches are handed over through DLPack without a copy: a CPU output becomes a CPU
``torch.Tensor`` sharing the pipeline's buffer, a GPU output a CUDA tensor on the pipeline's
device. ``torch`` is imported when an iterator is created, not when this module is imported (the
plugin system imports it to register the iterators).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from feedline.core.hookspecs import hookimpl
from feedline.plugins.iterator import BaseIterator, LastBatchPolicy, TaggedOutputs

__all__ = [
    "ClassificationIterator",
    "DALIClassificationIterator",
    "DALIGenericIterator",
    "DALIRaggedIterator",
    "FeedError",
    "GenericIterator",
    "LastBatchPolicy",
    "RaggedIterator",
    "feed_ndarray",
    "feedline_register_iterators",
]


def _import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise ImportError(
            "the PyTorch iterators need PyTorch: pip install 'feedline[torch]'"
        ) from exc
    return torch


class FeedError(AssertionError, ValueError):
    """:func:`feed_ndarray` was given a target of another dtype or shape (an
    ``AssertionError`` as in DALI, and a ``ValueError``)."""


def feed_ndarray(tensor: Any, arr: Any, cuda_stream: Any = None) -> Any:
    """Copy a pipeline tensor or dense tensor list into the existing ``torch.Tensor`` ``arr``.

    Args:
        tensor: a ``TensorCPU``/``TensorGPU`` or a dense ``TensorListCPU``/``TensorListGPU``.
        arr: the target, of the same dtype and shape, on the CPU or a GPU.
        cuda_stream: for a GPU target, the stream to copy on (a ``torch.cuda.Stream`` or a raw
            stream handle); None: PyTorch's current stream.

    Returns:
        ``arr``.

    Raises:
        FeedError: the dtypes or shapes differ.
    """
    torch = _import_torch()
    source = torch.from_dlpack(tensor)
    if source.dtype != arr.dtype:
        raise FeedError(
            "The element type of DALI Tensor/TensorList doesn't match the element type of the "
            f"target PyTorch Tensor: {source.dtype} vs {arr.dtype}"
        )
    if tuple(source.shape) != tuple(arr.shape):
        raise FeedError(
            f"Shapes do not match: the tensor has shape {list(source.shape)}, but the PyTorch "
            f"Tensor has shape {list(arr.shape)}"
        )
    if arr.is_cuda and cuda_stream is not None:
        stream = cuda_stream
        if not isinstance(stream, torch.cuda.Stream):
            stream = torch.cuda.ExternalStream(int(stream), device=arr.device)
        with torch.cuda.stream(stream):
            arr.copy_(source, non_blocking=True)
    else:
        arr.copy_(source)
    return arr


class GenericIterator(BaseIterator):
    """Batches as ``[{name: torch.Tensor}]``, one dict per pipeline, in ``pipelines`` order.

    Arguments as :class:`~feedline.plugins.iterator.BaseIterator` (``last_batch_padded``,
    ``last_batch_policy`` and ``prepare_first_batch`` come after ``dynamic_shape``, as in DALI),
    plus ``dynamic_shape``, which is accepted for DALI compatibility and has no effect: every
    batch gets its own tensors, so shapes may always change from batch to batch. Every output
    must be dense (all samples of a batch of one shape): tensors have shape
    ``(batch, *sample_shape)``.

    Raises:
        RuntimeError: a ragged output (use :class:`RaggedIterator` or pad the samples).
        TypeError: an output whose dtype PyTorch cannot take (strings).
    """

    framework = "PyTorch"
    ragged_hint = "use feedline.plugins.pytorch.RaggedIterator (lists or sparse tensors)"

    def __init__(
        self,
        pipelines: Any,
        output_map: Sequence[str],
        size: int = -1,
        reader_name: str | None = None,
        auto_reset: bool | str | None = False,
        fill_last_batch: bool | None = None,
        dynamic_shape: bool = False,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        self._torch = _import_torch()
        self.dynamic_shape = bool(dynamic_shape)
        super().__init__(
            pipelines, output_map, size, reader_name, auto_reset, fill_last_batch, *args, **kwargs
        )

    def _convert(self, batch: Any, name: str, pipe_index: int) -> Any:
        return self._from_dlpack(self._dense(batch, name, pipe_index), name, pipe_index)

    def _from_dlpack(self, tensor: Any, name: str, pipe_index: int) -> Any:
        try:
            return self._torch.from_dlpack(tensor)
        except (BufferError, TypeError, RuntimeError) as exc:
            dtype = getattr(tensor.dtype, "name", tensor.dtype)
            raise TypeError(
                f"output {name!r} of pipeline {pipe_index} (dtype {dtype}) cannot be handed to "
                f"PyTorch through DLPack ({exc})"
            ) from exc


class ClassificationIterator(GenericIterator):
    """:class:`GenericIterator` with ``output_map=["data", "label"]``; the other arguments in
    :class:`GenericIterator`'s order, from ``size`` on."""

    def __init__(self, pipelines: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(pipelines, ["data", "label"], *args, **kwargs)


class RaggedIterator(TaggedOutputs, GenericIterator):
    """:class:`GenericIterator` for outputs whose samples differ in shape (boxes per image).

    ``output_types`` gives one tag per output (None: all dense):

    * ``DENSE_TAG`` (``"dense"``): one tensor ``(batch, *sample_shape)``;
    * ``SPARSE_LIST_TAG`` (``"sparse_list"``): a list of per-sample tensors (zero-copy);
    * ``SPARSE_COO_TAG`` (``"sparse_coo"``): a sparse COO tensor ``(batch, max_n, *rest)`` of
      samples ``(n_i, *rest)`` (a copy).

    The arguments after ``output_types`` are :class:`GenericIterator`'s, in its order from
    ``auto_reset`` on.
    """

    DENSE_TAG = "dense"
    SPARSE_LIST_TAG = "sparse_list"
    SPARSE_COO_TAG = "sparse_coo"
    TAGS = (DENSE_TAG, SPARSE_LIST_TAG, SPARSE_COO_TAG)
    ragged_hint = "tag the output 'sparse_list' or 'sparse_coo' in output_types"

    def _convert(self, batch: Any, name: str, pipe_index: int) -> Any:
        tag = self._tag(name)
        if tag == self.DENSE_TAG:
            return super()._convert(batch, name, pipe_index)
        samples = [self._from_dlpack(batch[i], name, pipe_index) for i in range(len(batch))]
        if tag == self.SPARSE_LIST_TAG:
            return samples
        try:
            return self._sparse_coo(samples)
        except (RuntimeError, ValueError) as exc:
            raise RuntimeError(
                f"output {name!r} of pipeline {pipe_index} (sample shapes {batch.shape()}) "
                f"cannot become a {tag!r} tensor: {exc}; tag it 'sparse_list' instead"
            ) from exc

    def _sparse_coo(self, samples: list[Any]) -> Any:
        torch = self._torch
        if any(s.ndim == 0 for s in samples):
            raise ValueError("0-D samples have no first dimension to index")
        device = samples[0].device
        counts = torch.tensor([s.shape[0] for s in samples], dtype=torch.int64, device=device)
        rows = torch.repeat_interleave(torch.arange(len(samples), device=device), counts)
        cols = torch.cat([torch.arange(int(n), device=device) for n in counts])
        values = torch.cat(samples)
        shape = (len(samples), int(counts.max()), *values.shape[1:])
        return torch.sparse_coo_tensor(
            torch.stack([rows, cols]), values, shape, check_invariants=True
        )

    def _trim(self, value: Any, count: int) -> Any:
        if isinstance(value, list) or not value.is_sparse:
            return value[:count]
        return value.index_select(0, self._torch.arange(count, device=value.device))


DALIGenericIterator = GenericIterator
DALIClassificationIterator = ClassificationIterator
DALIRaggedIterator = RaggedIterator


@hookimpl
def feedline_register_iterators(registry: Any) -> None:
    """Register the PyTorch iterators (PyTorch itself is imported only when one is created)."""
    registry.add_iterator("pytorch", "feedline.plugins.pytorch:GenericIterator")
    registry.add_iterator("pytorch.ragged", "feedline.plugins.pytorch:RaggedIterator")
