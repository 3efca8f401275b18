"""CPU↔GPU copies: the kernels of the core's transfer operators (``DataNode.gpu()`` / ``.cpu()``)
and the pinned staging they share with the ``mixed`` decoders.

A batch goes to the GPU in one asynchronous host-to-device copy: its samples are packed into one
page-locked (pinned) host buffer and copied into one device buffer, whose slices become the
samples of the ``TensorListGPU`` (a dense batch when every sample has the same shape). Pinned
buffers are reused once the copy out of them has finished (an event recorded on the stream).

Everything goes through the pipeline's stream (``KernelContext.stream``, a
:class:`~feedline.core.execution.device.DeviceStream`), so the kernels run unchanged against the
test suite's stand-in stream. ``external_source(device="gpu")`` takes device data as it is and
copies host data the same way. This module is also the plugin (entry point ``gpu-transfer``)
registering these kernels and the ``mixed`` decoders.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import DataType
from feedline.operators.cpu.external_source import ExternalSourceKernel

__all__ = [
    "MIXED_KERNELS",
    "GpuExternalSourceKernel",
    "PinnedStaging",
    "ToCpuKernel",
    "ToGpuKernel",
    "feedline_register_kernels",
    "require_stream",
    "upload",
]

_ALIGN = 256  # sample offsets in the packed buffer: aligned for any element type and vector load
_MIB = 1 << 20
_DECODE = "feedline.operators.gpu.mixed_decode"

#: (operator, device) → kernel registered by :func:`feedline_register_kernels`
MIXED_KERNELS: dict[tuple[str, str], str] = {
    ("_transfer_to_gpu", "mixed"): f"{__name__}:ToGpuKernel",
    ("_transfer_to_cpu", "gpu"): f"{__name__}:ToCpuKernel",
    ("external_source", "gpu"): f"{__name__}:GpuExternalSourceKernel",
    ("decoders.image", "mixed"): f"{_DECODE}:MixedDecodeKernel",
    ("decoders.image_crop", "mixed"): f"{_DECODE}:MixedDecodeCropKernel",
    ("decoders.image_random_crop", "mixed"): f"{_DECODE}:MixedDecodeRandomCropKernel",
    ("decoders.image_slice", "mixed"): f"{_DECODE}:MixedDecodeSliceKernel",
}


@hookimpl
def feedline_register_kernels(registry: Any) -> None:
    """Give the transfers their kernels and the image decoders (when their plugin is loaded) a
    ``mixed`` kernel."""
    for (op_name, device), kernel in MIXED_KERNELS.items():
        if registry.entry(op_name) is not None:
            registry.add_kernel(op_name, device, kernel)


def require_stream(kernel: Kernel) -> Any:
    """The pipeline stream of a ``mixed``/``gpu`` kernel.

    Raises:
        RuntimeError: the kernel was built without one (outside a pipeline's device stage).
    """
    stream = kernel.ctx.stream
    if stream is None:
        raise RuntimeError(
            f"{kernel.ctx.name}: a {kernel.ctx.device} kernel needs the pipeline's device "
            "stream (build it in a pipeline with a device_id)"
        )
    return stream


class PinnedStaging:
    """Pinned host buffers for host-to-device copies, reused once their copy is done.

    Args:
        stream: the pipeline's stream (allocates the buffers, records the copies' events).
        keep: how many buffers to keep for reuse.
    """

    def __init__(self, stream: Any, keep: int = 4) -> None:
        self._stream = stream
        self._keep = keep
        self._free: list[np.ndarray] = []
        self._busy: deque[tuple[np.ndarray, Any]] = deque()

    def acquire(self, nbytes: int) -> np.ndarray:
        """A pinned uint8 buffer of at least ``nbytes`` that no pending copy reads."""
        pending: deque[tuple[np.ndarray, Any]] = deque()
        for buffer, event in self._busy:
            if event.done():
                self._free.append(buffer)
            else:
                pending.append((buffer, event))
        self._busy = pending
        if len(self._busy) >= self._keep:
            buffer, event = self._busy.popleft()
            event.synchronize()
            self._free.append(buffer)
        fitting = [i for i, b in enumerate(self._free) if b.nbytes >= nbytes]
        if fitting:
            return self._free.pop(min(fitting, key=lambda i: self._free[i].nbytes))
        if len(self._free) >= self._keep:
            self._free.pop(min(range(len(self._free)), key=lambda i: self._free[i].nbytes))
        return self._stream.pinned_empty(max(_MIB, -(-nbytes // _MIB) * _MIB))

    def release(self, buffer: np.ndarray, event: Any) -> None:
        """``buffer`` is read by the copies before ``event``; reusable after it."""
        self._busy.append((buffer, event))


def _offsets(samples: Sequence[np.ndarray]) -> tuple[list[int], int, bool]:
    """Byte offsets of the samples in the packed buffer, its size, and whether it is dense."""
    shapes = {(s.shape, s.dtype) for s in samples}
    dense = len(shapes) == 1
    offsets, total = [], 0
    for sample in samples:
        offsets.append(total)
        total += sample.nbytes if dense else -(-sample.nbytes // _ALIGN) * _ALIGN
    return offsets, total, dense


def upload(
    stream: Any,
    staging: PinnedStaging,
    samples: Sequence[np.ndarray],
    layout: str,
    source_info: Sequence[str],
    mapper: Callable[[Callable[[int], None], int], Any] | None = None,
) -> Any:
    """Copy host samples to the GPU in one asynchronous transfer; the device batch.

    The samples are packed into a pinned buffer (by ``mapper`` on the thread pool when given),
    which is copied on ``stream`` into one device buffer; the device samples are its slices.
    """
    offsets, total, dense = _offsets(samples)
    host = staging.acquire(total)

    def pack(i: int) -> None:
        sample = np.ascontiguousarray(samples[i])
        host[offsets[i] : offsets[i] + sample.nbytes] = sample.reshape(-1).view(np.uint8)

    if mapper is not None and len(samples) > 1:
        mapper(pack, len(samples))
    else:
        for i in range(len(samples)):
            pack(i)
    device = stream.device_empty((total,), np.uint8)
    if total:
        stream.to_device(device, host[:total])
    staging.release(host, stream.record())
    on_device = []
    for sample, offset in zip(samples, offsets, strict=True):
        flat = device[offset : offset + sample.nbytes].view(sample.dtype)
        on_device.append(flat.reshape(sample.shape))
    if dense and samples:
        whole = device.view(samples[0].dtype).reshape((len(samples), *samples[0].shape))
        on_device = [whole[i] for i in range(len(samples))]
    return stream.batch(on_device, layout, source_info)


class ToGpuKernel(Kernel):
    """``_transfer_to_gpu`` (``DataNode.gpu()``): one asynchronous copy per batch."""

    def setup(self) -> None:
        """Fetch the stream and create the pinned staging buffers."""
        self._stream = require_stream(self)
        self._staging = PinnedStaging(self._stream)

    def run(self, batch: Batch) -> list[Any]:
        """Copy the batch to the GPU (a batch there already passes through)."""
        data = batch.inputs[0]
        if self._stream.is_device_batch(data):
            return [data]
        infos = data.source_infos()
        return [upload(self._stream, self._staging, data.samples(), data.layout(), infos)]


class ToCpuKernel(Kernel):
    """``_transfer_to_cpu`` (``DataNode.cpu()``): the batch copied to host memory, complete when
    the kernel returns (CPU operators read it next)."""

    def setup(self) -> None:
        """Fetch the stream."""
        self._stream = require_stream(self)

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Copy the batch to host memory and wait for the copy."""
        data = batch.inputs[0]
        if not self._stream.is_device_batch(data):
            return [data]
        samples = data.samples()
        shapes = {(tuple(s.shape), np.dtype(s.dtype)) for s in samples}
        infos = data.source_infos()
        if len(shapes) == 1:
            shape, dtype = shapes.pop()
            host = np.empty((len(samples), *shape), dtype)
            for i, sample in enumerate(samples):
                self._stream.to_host(host[i], sample)
            self._stream.synchronize()
            return [TensorListCPU.from_dense(host, data.layout(), infos)]
        arrays = [np.empty(tuple(s.shape), np.dtype(s.dtype)) for s in samples]
        for array, sample in zip(arrays, samples, strict=True):
            self._stream.to_host(array, sample)
        self._stream.synchronize()
        return [TensorListCPU.from_samples(arrays, data.layout(), infos, stack=False)]


class GpuExternalSourceKernel(ExternalSourceKernel):
    """``external_source(device="gpu")``: device data (a ``TensorListGPU``, CuPy arrays, CUDA
    torch tensors, anything with the CUDA array interface) is used without a copy; host data is
    checked as on the CPU and copied in one transfer. It runs in the CPU stage (a source), and
    ``feed_input`` copies at once, on the pipeline's stream."""

    def setup(self) -> None:
        """Set up the external source, fetch the stream and create the staging buffers."""
        super().setup()
        self._stream = require_stream(self)
        self._staging = PinnedStaging(self._stream)
        self._lock = threading.Lock()  # feed_input on the user's thread, run() on the pipeline's

    def _to_batch(self, data: Any, index: int, layout: str | None) -> Any:
        device = self._stream.device_batch(data, layout or "")
        if device is None:
            host = super()._to_batch(data, index, layout)
            with self._lock, self._stream.activate():
                samples, infos = host.samples(), host.source_infos()
                return upload(self._stream, self._staging, samples, host.layout(), infos)
        what = f"{self._what} output {index}" if self._num_outputs is not None else self._what
        if not 0 < len(device) <= self.ctx.batch_size:
            raise ValueError(
                f"{what}: the GPU batch has {len(device)} samples; expected 1 to the pipeline's "
                f"batch size {self.ctx.batch_size}"
            )
        dtype, ndim = self._dtypes[index], self._ndims[index]
        if (dtype is not None and device.dtype != DataType(dtype)) or (
            ndim is not None and device.ndim != ndim
        ):
            raise TypeError(
                f"{what}: expected {ndim if ndim is not None else 'any'}-D samples of type "
                f"{DataType(dtype).name.lower() if dtype is not None else 'any'}, got "
                f"{device.ndim}-D {device.dtype.name.lower()} on the GPU"
            )
        return device
