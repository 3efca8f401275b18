"""GPU tensors and tensor lists (batches), with DALI's ``TensorGPU``/``TensorListGPU`` behaviour.

Both wrap CuPy arrays; CuPy is imported on first use only (``import feedline`` never imports
it). A dense batch (every sample the same shape) lives in one contiguous device buffer whose
outer dimension is the batch; a ragged batch is a list of device arrays. They exchange data
without copies through the CUDA array interface and DLPack (``torch.from_dlpack(tensor)``), and
accept any producer of either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.tensor import TensorCPU, TensorListCPU
from feedline.core.tensor_accessors import BatchAccessors, TensorAccessors, check_layout
from feedline.core.types import from_numpy_dtype

__all__ = ["TensorGPU", "TensorListGPU", "cupy_module"]


def cupy_module() -> Any:
    """The ``cupy`` module.

    Raises:
        ImportError: CuPy is not installed (the message says which extra installs it).
    """
    try:
        import cupy
    except ImportError as error:
        raise ImportError(
            f"GPU tensors need CuPy ({error}): pip install 'feedline[gpu]' "
            "(or feedline[gpu-cuda12] / feedline[gpu-cuda13])"
        ) from None
    return cupy


def _as_device_array(data: Any, device_id: int = -1) -> Any:
    """A CuPy array sharing the memory of ``data`` (capsule, DLPack or CUDA-array-interface
    producer, CuPy array)."""
    cp = cupy_module()
    if isinstance(data, cp.ndarray):
        return data
    if type(data).__name__ == "PyCapsule":
        return cp.from_dlpack(data)
    if hasattr(data, "__cuda_array_interface__"):
        if device_id >= 0:
            with cp.cuda.Device(device_id):
                return cp.asarray(data)
        return cp.asarray(data)
    if hasattr(data, "__dlpack__"):
        return cp.from_dlpack(data)
    raise TypeError(
        f"cannot wrap a {type(data).__name__} as GPU memory: expected a DLPack capsule or an "
        "object with __dlpack__ or __cuda_array_interface__ (use TensorCPU for host data)"
    )


def _copy_to_pointer(array: Any, ptr: Any, cuda_stream: Any, non_blocking: bool) -> None:
    """Copy a device array to raw device memory at ``ptr`` on ``cuda_stream`` (an int handle,
    a CuPy/torch stream, or None for the current stream)."""
    cp = cupy_module()
    source = cp.ascontiguousarray(array)
    address = int(getattr(ptr, "value", ptr) or 0)
    if cuda_stream is None:
        stream = cp.cuda.get_current_stream().ptr
    else:
        stream = int(getattr(cuda_stream, "ptr", getattr(cuda_stream, "cuda_stream", cuda_stream)))
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    cp.cuda.runtime.memcpyAsync(address, source.data.ptr, source.nbytes, kind, stream)
    if not non_blocking:
        cp.cuda.runtime.streamSynchronize(stream)


class TensorGPU(TensorAccessors):
    """One sample (or a whole dense batch) in GPU memory.

    Args:
        data: a DLPack capsule, or an object with ``__dlpack__`` or ``__cuda_array_interface__``
            (a CuPy array, a torch CUDA tensor...); the memory is shared, not copied.
        layout: the layout string; its length must equal ``ndim``.
        device_id: the device of a CUDA-array-interface object (-1: the current one).
    """

    __slots__ = ("_array", "_layout", "_source_info")

    def __init__(self, data: Any, layout: str | None = None, device_id: int = -1) -> None:
        array = _as_device_array(data, device_id)
        from_numpy_dtype(array.dtype)
        self._array = array
        self._layout = check_layout(layout, array.ndim)
        self._source_info = ""

    @classmethod
    def _wrap(cls, array: Any, layout: str, source_info: str = "") -> TensorGPU:
        tensor = cls.__new__(cls)
        tensor._array, tensor._layout, tensor._source_info = array, layout, source_info
        return tensor

    def data_ptr(self) -> int:
        """Device address of the first element."""
        return int(self._array.data.ptr)

    def as_array(self) -> Any:
        """The data as a CuPy array sharing memory."""
        return self._array

    def as_cpu(self) -> TensorCPU:
        """A copy in host memory."""
        host = TensorCPU(self._array.get(), self._layout or None)
        host._source_info = self._source_info
        return host

    def copy_to_external(
        self, ptr: Any, cuda_stream: Any = None, non_blocking: bool = False
    ) -> None:
        """Copy the data to device memory at ``ptr`` (``nbytes`` bytes) on ``cuda_stream``;
        waits for the copy unless ``non_blocking``."""
        _copy_to_pointer(self._array, ptr, cuda_stream, non_blocking)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self._array.__cuda_array_interface__

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self._array.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._array.__dlpack_device__()

    def __repr__(self) -> str:
        return f"TensorGPU(shape={self.shape()}, dtype={self.dtype.name}, layout={self._layout!r})"


class TensorListGPU(BatchAccessors):
    """A batch of samples in GPU memory (DALI's ``TensorListGPU``).

    Args:
        data: a device array (CuPy, torch, DLPack capsule or producer, CUDA array interface)
            whose outer dimension is the batch; a list of :class:`TensorGPU` or device arrays
            (gathered into one buffer when their shapes agree); another TensorListGPU.
        layout: the sample layout; its length must equal the sample ``ndim``.
        device_id: the device of a CUDA-array-interface object (-1: the current one).

    Raises:
        ValueError: a 0-D array, mixed dtypes or ndims in a list, a bad layout.
    """

    __slots__ = ("_dense", "_layout", "_samples", "_source_info")

    def __init__(self, data: Any = None, layout: str | None = None, device_id: int = -1) -> None:
        self._source_info: list[str] | None = None
        self._dense: Any = None
        self._samples: list[Any] | None = None
        if data is None:
            self._samples, self._layout = [], str(layout or "")
            return
        if isinstance(data, TensorListGPU):
            self._dense, self._samples = data._dense, data._samples
            self._source_info = data._source_info
            self._layout = data._layout if layout is None else check_layout(layout, data.ndim)
            return
        if isinstance(data, list | tuple):
            arrays = [
                x.as_array() if isinstance(x, TensorGPU) else _as_device_array(x, device_id)
                for x in data
            ]
            if len({a.ndim for a in arrays}) > 1 or len({a.dtype for a in arrays}) > 1:
                raise ValueError("all samples must have the same ndim and dtype")
            if arrays and len({a.shape for a in arrays}) == 1:
                self._dense = cupy_module().stack(arrays)
            else:
                self._samples = arrays
        else:
            array = _as_device_array(data, device_id)
            if array.ndim == 0:
                raise ValueError("a TensorList needs at least one dimension (the batch)")
            from_numpy_dtype(array.dtype)
            self._dense = cupy_module().ascontiguousarray(array)
        self._layout = check_layout(layout, self.ndim) if len(self) else str(layout or "")

    @classmethod
    def from_samples(
        cls, samples: Sequence[Any], layout: str = "", source_info: Sequence[str] | None = None
    ) -> TensorListGPU:
        """A batch of device arrays, without copying: rows of one contiguous buffer form a
        dense batch over that buffer, other samples are kept as a list."""
        tl = cls.__new__(cls)
        tl._dense, tl._samples = _rows_of_one_buffer(samples), None
        if tl._dense is None:
            tl._samples = list(samples)
        tl._layout = layout
        tl._source_info = list(source_info) if source_info is not None else None
        return tl

    @classmethod
    def from_dense(
        cls, array: Any, layout: str = "", source_info: Sequence[str] | None = None
    ) -> TensorListGPU:
        """Wrap a contiguous ``(batch, *sample_shape)`` device array without copying."""
        tl = cls.__new__(cls)
        tl._dense, tl._samples = array, None
        tl._layout = layout
        tl._source_info = list(source_info) if source_info is not None else None
        return tl

    def samples(self) -> list[Any]:
        """The samples as CuPy arrays sharing memory."""
        if self._dense is not None:
            return [self._dense[i] for i in range(len(self._dense))]
        return list(self._samples or ())

    def __getitem__(self, index: int) -> TensorGPU:
        if not isinstance(index, int | np.integer):
            raise TypeError(f"TensorList indices must be integers, not {type(index).__name__}")
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"sample index {index} out of range for a batch of {n}")
        index = int(index) % n
        array = self._dense[index] if self._dense is not None else self._samples[index]
        return TensorGPU._wrap(array, self._layout, self.source_info(index))

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def at(self, index: int) -> TensorGPU:
        """Sample ``index`` (a view, as DALI's ``TensorListGPU.at``)."""
        if not isinstance(index, int | np.integer) or not 0 <= index < len(self):
            raise IndexError(f"sample index {index} out of range for a batch of {len(self)}")
        return self[int(index)]

    def is_dense_tensor(self) -> bool:
        """True when every sample has the same shape (one contiguous buffer)."""
        if self._dense is not None or not self._samples:
            return True
        return len({s.shape for s in self._samples}) == 1

    def _as_dense(self) -> Any:
        if self._dense is None:
            if not self.is_dense_tensor():
                raise RuntimeError(
                    "the batch is not dense (samples have different shapes: "
                    f"{self.shape()}); pad the samples or read them one by one"
                )
            cp = cupy_module()
            self._dense = cp.stack(self._samples) if self._samples else cp.empty((0,), cp.uint8)
            self._samples = None
        return self._dense

    def as_tensor(self) -> TensorGPU:
        """The batch as one TensorGPU of shape ``(n, *shape)`` sharing memory.

        Raises:
            RuntimeError: the batch is not dense.
        """
        layout = ("N" + self._layout) if self._layout and "N" not in self._layout else ""
        return TensorGPU._wrap(self._as_dense(), layout)

    def as_reshaped_tensor(self, shape: Sequence[int]) -> TensorGPU:
        """The contiguous data of the whole batch with a new shape."""
        return TensorGPU._wrap(self._as_dense().reshape(tuple(shape)), "")

    def as_cpu(self) -> TensorListCPU:
        """A copy of the batch in host memory."""
        if self._dense is not None:
            host = TensorListCPU.from_dense(self._dense.get(), self._layout, self._source_info)
        else:
            host = TensorListCPU.from_samples(
                [s.get() for s in self._samples or ()], self._layout, self._source_info
            )
        return host

    def nbytes(self) -> int:
        """Bytes held by the samples."""
        return sum(int(s.nbytes) for s in self.samples())

    def data_ptr(self) -> int:
        """Device address of the first element of the (dense) batch."""
        return int(self._as_dense().data.ptr)

    def copy_to_external(
        self, ptr: Any, cuda_stream: Any = None, non_blocking: bool = False
    ) -> None:
        """Copy all samples back to back to device memory at ``ptr`` on ``cuda_stream``; waits
        for the copy unless ``non_blocking``."""
        address = int(getattr(ptr, "value", ptr) or 0)
        for sample in self.samples():
            _copy_to_pointer(sample, address, cuda_stream, non_blocking=True)
            address += int(sample.nbytes)
        if not non_blocking:
            cp = cupy_module()
            stream = cuda_stream if cuda_stream is not None else cp.cuda.get_current_stream()
            cp.cuda.runtime.streamSynchronize(int(getattr(stream, "ptr", stream)))

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self._as_dense().__cuda_array_interface__

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self._as_dense().__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._as_dense().__dlpack_device__()

    def __repr__(self) -> str:
        return (
            f"TensorListGPU(batch={len(self)}, dtype={self.dtype.name}, "
            f"layout={self._layout!r}, dense={self.is_dense_tensor()})"
        )


def _rows_of_one_buffer(samples: Sequence[Any]) -> Any:
    """The ``(n, *shape)`` buffer whose rows the samples are, in order; None if they are not."""
    if not samples:
        return None
    first = samples[0]
    base = getattr(first, "base", None)
    if base is None or base.ndim != first.ndim + 1 or len(base) != len(samples):
        return None
    if not base.flags.c_contiguous:
        return None
    step = base.strides[0]
    start = base.data.ptr
    for i, sample in enumerate(samples):
        if sample.base is not base or sample.data.ptr != start + i * step:
            return None
    return base
