"""CPU tensors and tensor lists (batches), with DALI's ``TensorCPU``/``TensorListCPU`` behaviour.

A dense batch (every sample the same shape) lives in one contiguous buffer whose outer dimension
is the batch; a ragged batch is a list of per-sample arrays. Samples handed out with ``tl[i]`` are
zero-copy views, slices ``tl[a:b]`` are zero-copy batches; ``tl.at(i)`` copies. Both types speak
DLPack and the NumPy array interface, and copy out to a raw address (an int or a
``ctypes.c_void_p``). GPU counterparts live in the GPU plugin (they wrap CuPy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.host_memory import CPU_DLPACK_DEVICE, address_of, copy_to_address, to_array
from feedline.core.tensor_accessors import BatchAccessors, TensorAccessors, check_layout
from feedline.core.types import (
    dali_type_name,
    from_numpy_dtype,
    refuse_enum_buffer,
)

__all__ = ["TensorCPU", "TensorListCPU"]


def _uniform(samples: Sequence[np.ndarray]) -> bool:
    """Whether there are samples and they all have the same shape."""
    if not samples:
        return False
    first = samples[0].shape
    return all(s.shape == first for s in samples)


def _gather(samples: Sequence[np.ndarray]) -> np.ndarray:
    """Uniform samples as one ``(n, *shape)`` array: a view of their buffer when there is one
    C-contiguous sample (a batch of one) or they already lie back to back in one C-contiguous
    array, in order (a batch split and merged again, or passed through), else a stacked copy."""
    first = samples[0]
    if len(samples) == 1 and first.flags.c_contiguous:
        return first[np.newaxis]
    base, size = first.base, first.nbytes
    if isinstance(base, np.ndarray) and base.flags.c_contiguous and size:
        start = first.__array_interface__["data"][0]
        if all(
            sample.base is base
            and sample.dtype == first.dtype
            and sample.flags.c_contiguous
            and sample.__array_interface__["data"][0] == start + i * size
            for i, sample in enumerate(samples)
        ):
            offset = start - base.__array_interface__["data"][0]
            raw = base.reshape(-1).view(np.uint8)[offset : offset + size * len(samples)]
            return raw.view(first.dtype).reshape((len(samples), *first.shape))
    return _stack(samples)


def _stack(samples: Sequence[np.ndarray]) -> np.ndarray:
    """``np.stack`` that keeps the samples' dtype metadata (which marks enum-typed data)."""
    stacked = np.stack(samples)
    if samples[0].dtype.metadata:
        return stacked.view(samples[0].dtype)
    return stacked


def _list_item(item: Any, position: int) -> np.ndarray:
    """One element of a list given to ``TensorListCPU``, as an array (DALI's error otherwise)."""
    if isinstance(item, TensorCPU):
        return item.raw_array()
    try:
        array = np.asarray(item)
    except (TypeError, ValueError):
        array = None
    if array is None or array.dtype.kind in "OUS":
        raise TypeError(f"Object at position {position} cannot be converted to TensorCPU.")
    return array


def _item_layout(item: Any) -> str:
    return item.layout() if isinstance(item, TensorCPU) else ""


def _type_name(dtype: np.dtype) -> str:
    try:
        return dali_type_name(from_numpy_dtype(dtype))
    except TypeError:
        return str(dtype)


class TensorCPU(TensorAccessors):
    """One sample (or a whole dense batch) in CPU memory.

    Args:
        data: an array-like (anything with the buffer protocol or the NumPy array interface), a
            DLPack capsule or a ``__dlpack__`` producer.
        layout: the layout string (``""`` for none); its length must equal ``ndim``.
        is_pinned: whether the memory is page-locked (reported by :meth:`is_pinned`).
        source_info: where the data came from (usually a file path).
    """

    __slots__ = ("_array", "_layout", "_pinned", "_source_info")

    def __init__(
        self,
        data: Any,
        layout: str | None = None,
        is_pinned: bool = False,
        source_info: str = "",
    ) -> None:
        array = to_array(data)
        from_numpy_dtype(array.dtype)
        self._array = array
        self._layout = check_layout(layout, array.ndim)
        self._pinned = bool(is_pinned)
        self._source_info = source_info

    @classmethod
    def _view(cls, array: np.ndarray, layout: str, source_info: str) -> TensorCPU:
        """Wrap ``array`` without the constructor's checks (internal)."""
        tensor = cls.__new__(cls)
        tensor._array, tensor._layout, tensor._source_info = array, layout, source_info
        tensor._pinned = False
        return tensor

    def squeeze(self, dim: int | None = None) -> bool:
        """Remove unit dimensions in place (one, or all when ``dim`` is None).

        Returns:
            True if the shape changed.

        Raises:
            RuntimeError: if ``dim`` is out of range or not of extent 1.
        """
        array = self._array
        if dim is None:
            axes = tuple(i for i, n in enumerate(array.shape) if n == 1)
        else:
            if not -array.ndim <= dim < array.ndim:
                raise RuntimeError(f"squeeze: dimension {dim} out of range for ndim {array.ndim}")
            dim %= array.ndim
            if array.shape[dim] != 1:
                raise RuntimeError(f"squeeze: dimension {dim} has extent {array.shape[dim]}, not 1")
            axes = (dim,)
        if not axes:
            return False
        self._array = np.squeeze(array, axis=axes)
        if self._layout:
            self._layout = "".join(c for i, c in enumerate(self._layout) if i not in axes)
        return True

    def data_ptr(self) -> int:
        """Address of the first element."""
        return int(self._array.__array_interface__["data"][0])

    def is_pinned(self) -> bool:
        """Whether the memory was declared page-locked (``is_pinned=True`` at construction)."""
        return self._pinned

    def copy_to_external(self, ptr: Any) -> None:
        """Copy the data (C order) to raw memory at ``ptr``, which must hold ``nbytes`` bytes.

        Args:
            ptr: the destination address, an int or a ``ctypes.c_void_p``.
        """
        copy_to_address(address_of(ptr), self._array)

    def as_cpu(self) -> TensorCPU:
        """Return itself (already in CPU memory)."""
        return self

    def raw_array(self) -> np.ndarray:
        """The data as a NumPy array sharing memory, enum-typed data as its int32 storage."""
        return self._array

    def as_array(self) -> np.ndarray:
        """The data as a NumPy array sharing memory.

        Raises:
            TypeError: for enum-typed data, as DALI (``fn.cast`` it to an integer type).
        """
        refuse_enum_buffer(self._array.dtype)
        return self._array

    @property
    def __array_interface__(self) -> dict[str, Any]:
        return self.as_array().__array_interface__

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if dtype is None and not copy:
            return self.as_array()
        return np.array(self.as_array(), dtype=dtype, copy=True)

    def __buffer__(self, flags: int) -> memoryview:
        return memoryview(self.as_array())

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self.as_array().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return CPU_DLPACK_DEVICE

    def __repr__(self) -> str:
        return f"TensorCPU(shape={self.shape()}, dtype={self.dtype.name}, layout={self._layout!r})"


class TensorListCPU(BatchAccessors):
    """A batch of CPU samples (DALI's ``TensorListCPU``).

    Args:
        data: an ndarray (or any buffer) whose outer dimension is the batch, a list of arrays or
            ``TensorCPU`` (copied into one buffer; dense when all shapes agree), a DLPack
            capsule/producer or another TensorList.
        layout: the sample layout; its length must equal the sample ``ndim``.
        is_pinned: whether the memory is page-locked (reported by :meth:`is_pinned`).

    Raises:
        ValueError: 0-D input, bad layout.
        TypeError: a list mixing dtypes (DALI's message), ndims or layouts, or holding what is
            not an array.
        RuntimeError: a non-contiguous (strided) array.
    """

    __slots__ = ("_dense", "_layout", "_pinned", "_samples", "_source_info")

    def __init__(self, data: Any, layout: str | None = None, is_pinned: bool = False) -> None:
        self._source_info: list[str] | None = None
        self._pinned = bool(is_pinned)
        if isinstance(data, TensorListCPU):
            self._dense, self._samples = data._dense, data._samples
            self._source_info = data._source_info
            self._pinned = data._pinned or self._pinned
            self._layout = data._layout if layout is None else check_layout(layout, data.ndim)
            return
        if isinstance(data, list | tuple):
            self._init_from_list(data)
        else:
            array = to_array(data)
            if array.ndim == 0:
                raise ValueError("a TensorList needs at least one dimension (the batch)")
            if not array.flags.c_contiguous:
                raise RuntimeError("strided arrays are not supported: pass a contiguous array")
            from_numpy_dtype(array.dtype)
            self._dense, self._samples = array, None
        self._layout = check_layout(layout, self.ndim) if len(self) else str(layout or "")

    def _init_from_list(self, items: Sequence[Any]) -> None:
        arrays = [_list_item(x, i) for i, x in enumerate(items)]
        if not arrays:
            self._dense, self._samples = None, []
            return
        first = arrays[0]
        for position, array in enumerate(arrays[1:], start=1):
            if array.dtype != first.dtype:
                raise TypeError(
                    "Tensors cannot have different data types. Tensor at position "
                    f"{position} has type '{_type_name(array.dtype)}' expected to have type "
                    f"'{_type_name(first.dtype)}'."
                )
            if array.ndim != first.ndim or _item_layout(items[position]) != _item_layout(items[0]):
                raise TypeError(f"Object at position {position} cannot be converted to TensorCPU.")
        from_numpy_dtype(first.dtype)
        if len({a.shape for a in arrays}) == 1:
            self._dense, self._samples = _stack(arrays), None
        else:
            self._dense, self._samples = None, [np.array(a, copy=True) for a in arrays]

    @classmethod
    def from_samples(
        cls,
        samples: Sequence[np.ndarray],
        layout: str = "",
        source_info: Sequence[str] | None = None,
        stack: bool = True,
    ) -> TensorListCPU:
        """Build a batch from per-sample arrays without the public constructor's checks.

        Uniform shapes become one contiguous buffer (unless ``stack`` is False: then the
        samples are gathered only if someone asks for the whole batch): a view when the samples
        already are one (a single contiguous sample, or rows of one array in order), else a
        stacked copy. Ragged samples are kept as given (no copy). Used by kernels and the
        executor on the hot path.
        """
        tl = cls.__new__(cls)
        if stack and _uniform(samples):
            tl._dense, tl._samples = _gather(samples), None
        else:
            tl._dense, tl._samples = None, list(samples)
        tl._layout = layout
        tl._source_info = list(source_info) if source_info is not None else None
        tl._pinned = False
        return tl

    @classmethod
    def from_dense(
        cls, array: np.ndarray, layout: str = "", source_info: Sequence[str] | None = None
    ) -> TensorListCPU:
        """Wrap a contiguous ``(batch, *sample_shape)`` array without copying."""
        tl = cls.__new__(cls)
        tl._dense, tl._samples = array, None
        tl._layout = layout
        tl._source_info = list(source_info) if source_info is not None else None
        tl._pinned = False
        return tl

    def _sample(self, index: int) -> np.ndarray:
        if self._dense is not None:
            return self._dense[index, ...]
        return self._samples[index]

    def __getitem__(self, index: int | slice) -> Any:
        """Sample ``index`` as a zero-copy :class:`TensorCPU`, or a slice of the batch as a
        zero-copy :class:`TensorListCPU`."""
        if isinstance(index, slice):
            return self._slice(index)
        if not isinstance(index, int | np.integer):
            raise TypeError(
                f"TensorList indices must be integers or slices, not {type(index).__name__}"
            )
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"sample index {index} out of range for a batch of {n}")
        index = int(index) % n
        return TensorCPU._view(self._sample(index), self._layout, self.source_info(index))

    def _slice(self, index: slice) -> TensorListCPU:
        picked = range(len(self))[index]
        infos = [self._source_info[i] for i in picked] if self._source_info else None
        if self._dense is not None and picked.step == 1:
            out = TensorListCPU.from_dense(self._dense[index], self._layout, infos)
        else:
            samples = [self._sample(i) for i in picked]
            out = TensorListCPU.from_samples(samples, self._layout, infos, stack=False)
        out._pinned = self._pinned
        return out

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def at(self, index: int) -> np.ndarray:
        """A copy of sample ``index`` as a NumPy array (negative indices are rejected)."""
        if not isinstance(index, int | np.integer) or not 0 <= index < len(self):
            raise IndexError(f"sample index {index} out of range for a batch of {len(self)}")
        return np.array(self._sample(int(index)), copy=True)

    def samples(self) -> list[np.ndarray]:
        """The samples as zero-copy NumPy views (internal fast path)."""
        dense = self._dense
        if dense is not None:
            return list(dense) if dense.ndim > 1 else [dense[i, ...] for i in range(len(dense))]
        return list(self._samples or ())

    def is_dense_tensor(self) -> bool:
        """True when every sample has the same shape (the batch is then one contiguous buffer,
        gathered on first request when it was built from separate samples)."""
        return self._dense is not None or len(self) == 0 or _uniform(self._samples or ())

    def as_array(self) -> np.ndarray:
        """The batch as one ``(n, *shape)`` NumPy array sharing memory.

        Raises:
            RuntimeError: if the samples do not all have the same shape.
            TypeError: for enum-typed data, as DALI (``fn.cast`` it to an integer type).
        """
        refuse_enum_buffer(self.numpy_dtype)
        return self.raw_array()

    def raw_array(self) -> np.ndarray:
        """:meth:`as_array`, enum-typed data included (as its int32 storage)."""
        if self._dense is None:
            if not self._samples:
                return np.empty((0,), dtype=np.uint8)
            if _uniform(self._samples):
                self._dense, self._samples = _gather(self._samples), None
                return self._dense
            raise RuntimeError(
                "as_array() needs a dense batch, but not all samples have the same shape: "
                f"{self.shape()}; pad the samples or read them one by one"
            )
        return self._dense

    def as_tensor(self) -> TensorCPU:
        """The batch as one :class:`TensorCPU` of shape ``(n, *shape)`` sharing memory.

        Raises:
            RuntimeError: if the batch is not dense.
        """
        layout = ("N" + self._layout) if self._layout and "N" not in self._layout else ""
        return TensorCPU._view(self.as_array(), layout, "")

    def as_reshaped_tensor(self, shape: Sequence[int]) -> TensorCPU:
        """Reinterpret the contiguous data of the whole batch with a new shape."""
        return TensorCPU(self.as_array().reshape(tuple(shape)))

    @property
    def numpy_dtype(self) -> np.dtype:
        """The NumPy dtype of the elements."""
        if self._dense is not None:
            return self._dense.dtype
        return self._samples[0].dtype if self._samples else np.dtype(np.uint8)

    def nbytes(self) -> int:
        """Bytes held by the samples."""
        if self._dense is not None:
            return int(self._dense.nbytes)
        return sum(int(s.nbytes) for s in self._samples or ())

    def data_ptr(self) -> int:
        """Address of the first element of a dense batch."""
        return int(self.as_array().__array_interface__["data"][0])

    def is_pinned(self) -> bool:
        """Whether the memory was declared page-locked (``is_pinned=True`` at construction)."""
        return self._pinned

    def copy_to_external(self, ptr: Any) -> None:
        """Copy all samples back to back (C order) into raw memory at ``ptr``.

        Args:
            ptr: the destination address, an int or a ``ctypes.c_void_p``; it must hold
                :meth:`nbytes` bytes.
        """
        offset = address_of(ptr)
        for sample in self.samples():
            copy_to_address(offset, sample)
            offset += sample.nbytes

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        """Export a dense batch as one ``(n, *shape)`` DLPack tensor (zero copy).

        Raises:
            BufferError: if the samples do not all have the same shape.
        """
        if not self.is_dense_tensor():
            raise BufferError(
                "a ragged TensorList cannot be exported with DLPack (sample shapes "
                f"{self.shape()}); export the samples one by one"
            )
        return self.as_array().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return CPU_DLPACK_DEVICE

    def as_cpu(self) -> TensorListCPU:
        """Return itself (already in CPU memory)."""
        return self

    def __repr__(self) -> str:
        return (
            f"TensorListCPU(batch={len(self)}, dtype={self.dtype.name}, "
            f"layout={self._layout!r}, dense={self.is_dense_tensor()})"
        )
