"""The device seam: everything the GPU stage needs from a GPU, behind one small interface.

A pipeline with ``mixed``/``gpu`` operators opens one :class:`DeviceStream` on its ``device_id``
at build. The device stage runs with that stream current (:meth:`DeviceStream.activate`), its
kernels find it in ``KernelContext.stream``, and the stage records an event on it
(:meth:`DeviceStream.record`) that the consumer waits for before it receives the outputs.

:class:`CupyStream` is the real one (CuPy, imported only when a GPU pipeline is built). Tests put
a stand-in in its place with :func:`use_device`, so that the stage logic runs on machines
without CUDA: NumPy arrays play device arrays and the stream records the order of operations.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

__all__ = ["CupyStream", "DeviceEvent", "DeviceStream", "open_stream", "use_device"]


class DeviceEvent(Protocol):
    """A point in a stream's work (``cupy.cuda.Event``)."""

    def synchronize(self) -> None:
        """Wait until the work recorded before the event is done."""

    def done(self) -> bool:
        """Whether that work is done (without waiting)."""


class DeviceStream(Protocol):
    """The pipeline's stream on one GPU and the memory operations the GPU stage needs.

    Attributes:
        device_id: the GPU.
        ptr: the native stream handle (``cudaStream_t`` as an int) that launchers take.
        handle: the array library's stream object (``cupy.cuda.Stream``).
    """

    device_id: int
    ptr: int
    handle: Any

    def activate(self) -> contextlib.AbstractContextManager[Any]:
        """Make the device and this stream current on the calling thread for a block."""

    def record(self) -> DeviceEvent:
        """An event after everything queued on the stream so far."""

    def synchronize(self) -> None:
        """Wait for everything queued on the stream."""

    def pinned_empty(self, nbytes: int) -> np.ndarray:
        """A 1-D uint8 host array of ``nbytes`` in page-locked (pinned) memory."""

    def device_empty(self, shape: Sequence[int], dtype: Any) -> Any:
        """An uninitialised device array."""

    def to_device(self, dst: Any, src: np.ndarray) -> None:
        """Queue a copy of host array ``src`` into device array ``dst`` (same size) on the
        stream; asynchronous when ``src`` is pinned."""

    def to_host(self, dst: np.ndarray, src: Any) -> None:
        """Queue a copy of device array ``src`` into host array ``dst`` on the stream."""

    def batch(self, samples: Sequence[Any], layout: str, source_info: Sequence[str]) -> Any:
        """A device batch (``TensorListGPU``) of device arrays, without copying them."""

    def is_device_batch(self, value: Any) -> bool:
        """Whether ``value`` is a device batch."""

    def device_batch(self, data: Any, layout: str) -> Any:
        """``data`` as a device batch without copying it if it is in device memory (a
        ``TensorListGPU``, an array or a list of arrays with the CUDA array interface, such as
        CuPy arrays or CUDA torch tensors); None for host data."""

    def close(self) -> None:
        """Wait for the stream's work and release it."""


_NO_CUDA = (
    "You are trying to create a GPU DALI pipeline while CUDA is not available. Please install "
    "CUDA or set `device_id = None` in Pipeline constructor."
)
"""DALI's wording for a pipeline with GPU operators on a machine without CUDA, kept so that
code matching DALI's message keeps working."""


def _cupy() -> tuple[Any, Any]:
    try:
        import cupy
        import cupyx
    except ImportError as error:
        raise RuntimeError(
            f"{_NO_CUDA} A pipeline with GPU operators needs CuPy ({error}): pip install "
            "'feedline[gpu]' (or feedline[gpu-cuda12] / feedline[gpu-cuda13]); or run every "
            "operator with device='cpu' and device_id=None"
        ) from None
    return cupy, cupyx


class CupyStream:
    """A non-blocking CUDA stream on ``device_id``, through CuPy (``priority``: the CUDA stream
    priority, lower is more urgent; 0 is the default).

    Device arrays are allocated from CuPy's memory pool with this stream current (the pool then
    reuses their memory in stream order), pinned host arrays from CuPy's pinned memory pool.

    Raises:
        RuntimeError: CuPy is missing or the device does not exist.
    """

    def __init__(self, device_id: int, priority: int = 0) -> None:
        cupy, cupyx = _cupy()
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as error:
            raise RuntimeError(
                f"{_NO_CUDA} device_id={device_id}: no usable CUDA device ({error})"
            ) from None
        if device_id >= count:
            raise RuntimeError(f"device_id={device_id}, but only {count} CUDA device(s) visible")
        self._cupy, self._cupyx = cupy, cupyx
        self.device_id = device_id
        self._device = cupy.cuda.Device(device_id)
        options = {"priority": priority} if priority else {}
        with self._device:
            self.handle = cupy.cuda.Stream(non_blocking=True, **options)
        self.ptr = int(self.handle.ptr)

    @contextlib.contextmanager
    def activate(self) -> Iterator[None]:
        """Make the device and the stream current on this thread for a block."""
        with self._device, self.handle:
            yield

    def record(self) -> DeviceEvent:
        """An event after everything queued so far."""
        return _CupyEvent(self.handle.record())

    def synchronize(self) -> None:
        """Wait for everything queued."""
        self.handle.synchronize()

    def pinned_empty(self, nbytes: int) -> np.ndarray:
        """Page-locked host bytes."""
        return self._cupyx.empty_pinned((int(nbytes),), np.uint8)

    def device_empty(self, shape: Sequence[int], dtype: Any) -> Any:
        """A device array allocated in stream order."""
        with self.activate():
            return self._cupy.empty(tuple(shape), dtype)

    def to_device(self, dst: Any, src: np.ndarray) -> None:
        """Asynchronous host-to-device copy on the stream."""
        dst.set(src, stream=self.handle)

    def to_host(self, dst: np.ndarray, src: Any) -> None:
        """Asynchronous device-to-host copy on the stream."""
        src.get(stream=self.handle, out=dst, blocking=False)

    def batch(self, samples: Sequence[Any], layout: str, source_info: Sequence[str]) -> Any:
        """A ``TensorListGPU`` of the samples."""
        from feedline.core.tensor_gpu import TensorListGPU

        return TensorListGPU.from_samples(samples, layout, source_info)

    def is_device_batch(self, value: Any) -> bool:
        """Whether ``value`` is a ``TensorListGPU``."""
        from feedline.core.tensor_gpu import TensorListGPU

        return isinstance(value, TensorListGPU)

    def device_batch(self, data: Any, layout: str) -> Any:
        """A ``TensorListGPU`` over device data, or None for host data."""
        from feedline.core.tensor_gpu import TensorGPU, TensorListGPU

        if isinstance(data, TensorListGPU):
            return data if not layout else TensorListGPU(data, layout)
        items = list(data) if isinstance(data, list | tuple) else [data]
        on_device = [
            isinstance(x, TensorGPU) or hasattr(x, "__cuda_array_interface__") for x in items
        ]
        if not items or not all(on_device):
            return None
        with self.activate():
            return TensorListGPU(data, layout or None, device_id=self.device_id)

    def close(self) -> None:
        """Wait for the stream's work (CuPy frees the stream with its last reference)."""
        self.handle.synchronize()


class _CupyEvent:
    __slots__ = ("_event",)

    def __init__(self, event: Any) -> None:
        self._event = event

    def synchronize(self) -> None:
        self._event.synchronize()

    def done(self) -> bool:
        return bool(self._event.done)


_factory_lock = threading.Lock()
_factory: Callable[[int, int], DeviceStream] = CupyStream


def open_stream(device_id: int, priority: int = 0) -> DeviceStream:
    """The stream a pipeline's GPU stage runs on (a :class:`CupyStream` unless a test put a
    stand-in in place with :func:`use_device`)."""
    with _factory_lock:
        factory = _factory
    return factory(device_id, priority)


@contextlib.contextmanager
def use_device(factory: Callable[[int, int], DeviceStream]) -> Iterator[None]:
    """Open pipeline streams with ``factory`` inside the block (for tests without CUDA)."""
    global _factory
    with _factory_lock:
        previous, _factory = _factory, factory
    try:
        yield
    finally:
        with _factory_lock:
            _factory = previous
