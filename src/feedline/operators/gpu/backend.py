"""Where GPU kernels run: a CUDA device (CuPy arrays, the CUDA library) or the host emulation
(NumPy arrays, the same kernels compiled for the CPU).

Kernel classes compute through a :class:`Backend`, so the code that prepares per-sample shapes
and arguments, launches the kernels and assembles the batch is the same code in both cases: the
tests run it with :func:`host_backend` on machines without a GPU and compare it with the CPU
kernels.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.types import from_numpy_dtype
from feedline.operators.gpu.build import GpuUnavailableError, cuda_library, host_library

__all__ = ["Backend", "GpuKernelError", "cuda_backend", "host_backend", "type_id"]


class GpuKernelError(RuntimeError):
    """A launcher returned an error code."""


def type_id(dtype: Any) -> int:
    """The kernels' number of a NumPy dtype (``feedline.types.DataType``)."""
    return int(from_numpy_dtype(np.dtype(dtype)))


class Backend:
    """Array module, kernel library and stream of one place kernels run.

    Attributes:
        xp: ``cupy`` or ``numpy``.
        ffi: the cffi FFI that read the kernels' header.
        lib: the opened library.
        emulated: True for the host emulation.
    """

    def __init__(self, xp: Any, ffi: Any, lib: Any, emulated: bool) -> None:
        self.xp, self.ffi, self.lib, self.emulated = xp, ffi, lib, emulated

    def stream(self) -> int:
        """The stream kernels launch on: CuPy's current stream (the pipeline's, while it runs
        a GPU stage); 0 in the emulation."""
        if self.emulated:
            return 0
        return int(self.xp.cuda.get_current_stream().ptr)

    def asarray(self, values: Any, dtype: Any = None) -> Any:
        """Host values as an array of this backend (copied to the device for CUDA)."""
        return self.xp.asarray(np.ascontiguousarray(values, dtype=dtype))

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        """An uninitialised array."""
        return self.xp.empty(tuple(shape), dtype=dtype)

    def pointer(self, array: Any) -> int:
        """The address of an array's first element."""
        if self.emulated:
            return int(array.__array_interface__["data"][0])
        return int(array.data.ptr)

    def pointers(self, arrays: Sequence[Any]) -> Any:
        """A uint64 array (on this backend) of the arrays' addresses."""
        return self.asarray([self.pointer(a) for a in arrays], np.uint64)

    def call(self, name: str, *args: Any) -> None:
        """Launch ``name``; array arguments pass their address, ``None`` a null pointer.

        Raises:
            GpuKernelError: the launcher returned an error (the CUDA error's name if it is one).
        """
        if not self.emulated:
            status = self.lib.flg_use_device(int(self.xp.cuda.Device().id))
            if status:
                raise GpuKernelError(f"flg_use_device failed: {self._describe(status)}")
        function = getattr(self.lib, name)
        types = self.ffi.typeof(function).args[:-1]  # the stream comes last
        converted = []
        for kind, value in zip(types, args, strict=True):
            if kind.kind == "pointer":
                address = 0 if value is None else self.pointer(value)
                converted.append(self.ffi.cast(kind, address))
            else:
                converted.append(value)
        status = function(*converted, self.ffi.cast("void *", self.stream()))
        if status:
            raise GpuKernelError(f"{name} failed: {self._describe(status)}")

    def _describe(self, status: int) -> str:
        if status == 10001:
            return "unsupported element type"
        if status == 10002:
            return "invalid argument"
        if self.emulated:
            return f"status {status}"
        runtime = self.xp.cuda.runtime
        return f"{runtime.getErrorName(status)}: {runtime.getErrorString(status)}"

    def output(self, shapes: Sequence[tuple[int, ...]], dtype: Any) -> list[Any]:
        """Per-sample output arrays: rows of one contiguous batch buffer when every shape is the
        same (the batch is then dense), separate arrays otherwise."""
        if shapes and all(s == shapes[0] for s in shapes):
            batch = self.empty((len(shapes), *shapes[0]), dtype)
            return [batch[i] for i in range(len(shapes))]
        return [self.empty(s, dtype) for s in shapes]


_LOCK = threading.Lock()
_BACKENDS: dict[str, Backend] = {}


def host_backend() -> Backend:
    """The host emulation (NumPy arrays, the kernels compiled for the CPU)."""
    with _LOCK:
        if "host" not in _BACKENDS:
            ffi, lib = host_library()
            _BACKENDS["host"] = Backend(np, ffi, lib, emulated=True)
        return _BACKENDS["host"]


def cuda_backend() -> Backend:
    """The CUDA backend (CuPy, the nvcc-built library).

    Raises:
        GpuUnavailableError: CuPy is missing, no device is visible, or the library cannot be
            built or opened; the message says which and what was tried.
    """
    with _LOCK:
        if "cuda" in _BACKENDS:
            return _BACKENDS["cuda"]
        try:
            import cupy
        except ImportError as error:
            raise GpuUnavailableError(
                f"GPU kernels need CuPy ({error}); install feedline[gpu] (or gpu-cuda12 / "
                "gpu-cuda13 to pick the CUDA version)"
            ) from None
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as error:
            raise GpuUnavailableError(
                f"no usable CUDA device: the CUDA runtime reported {error} (is the NVIDIA "
                "driver installed?)"
            ) from None
        if count == 0:
            raise GpuUnavailableError("no CUDA device is visible (CUDA_VISIBLE_DEVICES?)")
        ffi, lib = cuda_library()
        _BACKENDS["cuda"] = Backend(cupy, ffi, lib, emulated=False)
        return _BACKENDS["cuda"]
