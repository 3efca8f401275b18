"""How ``external_source`` turns what a source returns into a batch: copies into recycled
memory, the layout a batch carries itself, and DALI's checks of layouts and types."""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline.core.buffers import BufferPool, Slab
from feedline.core.tensor import TensorCPU, TensorListCPU
from feedline.core.types import DataType

__all__ = ["as_samples", "check_layout_ndims", "data_layout", "type_name"]


def as_samples(data: Any, no_copy: bool, buffers: BufferPool) -> list[np.ndarray] | np.ndarray:
    """The samples of ``data`` (a batch array, or a list of arrays), copied unless ``no_copy``.

    Raises:
        TypeError: ``data`` is not a batch.
    """
    if isinstance(data, TensorListCPU):
        return data.raw_array() if data.is_dense_tensor() else data.samples()
    if isinstance(data, np.ndarray):
        return data if no_copy else _copied([data], buffers, stacked=False)
    if isinstance(data, list | tuple):
        arrays = [np.asarray(x.raw_array() if isinstance(x, TensorCPU) else x) for x in data]
        return arrays if no_copy else _copied(arrays, buffers)
    if hasattr(data, "__dlpack__") or hasattr(data, "__array__"):
        array = np.from_dlpack(data) if hasattr(data, "__dlpack__") else np.asarray(data)
        return array if no_copy else _copied([array], buffers, stacked=False)
    raise TypeError(f"unsupported batch type {type(data).__name__}")


def _copied(
    arrays: list[np.ndarray], buffers: BufferPool, stacked: bool = True
) -> list[np.ndarray] | np.ndarray:
    """A copy of the samples ``arrays`` (of the one batch array, when not ``stacked``) made in
    one pass into memory recycled from ``buffers`` once an earlier batch's is no longer
    referenced (a fresh array costs a page fault per page on its first write): samples of one
    shape and dtype go into one batch array, others are carved from one block."""
    first = arrays[0] if arrays else None
    if first is None or any(a.shape != first.shape or a.dtype != first.dtype for a in arrays):
        slab = Slab(buffers, sum(Slab.room(a.shape, a.dtype) for a in arrays))
        copies = [slab.empty(a.shape, a.dtype) for a in arrays]
        for copy, array in zip(copies, arrays, strict=True):
            np.copyto(copy, array)
        return copies
    shape = (len(arrays), *first.shape) if stacked else first.shape
    out = buffers.empty(shape, first.dtype)
    if stacked:
        np.stack(arrays, out=out)
    else:
        np.copyto(out, first)
    # a view keeps the dtype's metadata (enum-typed data)
    return out.view(first.dtype) if first.dtype.metadata else out


def data_layout(data: Any) -> str:
    """The layout a batch carries itself (a TensorList, or a list of Tensors), else ``""``.

    DALI keeps it when ``external_source`` is given no ``layout``.
    """
    if isinstance(data, TensorListCPU):
        return data.layout()
    if isinstance(data, list | tuple) and data and isinstance(data[0], TensorCPU):
        return data[0].layout()
    return ""


def type_name(dtype: DataType) -> str:
    """DALI's lower-case type name in messages (``float``, ``uint8``)."""
    return dtype.name.lower()


def check_layout_ndims(layouts: list[Any], ndims: list[Any]) -> None:
    """A layout given together with ``ndim`` must have ``ndim`` letters (DALI's check).

    Raises:
        RuntimeError: they disagree, quoting both.
    """
    for layout, ndim in zip(layouts, ndims, strict=True):
        if layout and ndim is not None and len(layout) != ndim:
            raise RuntimeError(
                "Number of dimensions in the provided layout does not match the ndim argument. "
                f'The arguments provided:\n ndim = {ndim},\n layout: "{layout}".'
            )
