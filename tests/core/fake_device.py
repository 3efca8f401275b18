"""A stand-in for the GPU behind the device seam (``feedline.core.execution.device``): NumPy
arrays play device arrays, and the stream records what was done on it, in order, with the
thread that did it, so tests check the GPU stage's logic on machines without CUDA."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from feedline.core.tensor import TensorListCPU

_current = threading.local()


class FakeDeviceBatch(TensorListCPU):
    """A batch "in device memory": a TensorListCPU that says it is not one."""

    def as_cpu(self) -> TensorListCPU:
        return TensorListCPU.from_samples(
            [np.array(s) for s in self.samples()], self.layout(), self.source_infos()
        )


class FakeEvent:
    def __init__(self, stream: FakeStream, position: int) -> None:
        self.stream, self.position = stream, position

    def synchronize(self) -> None:
        self.stream.log("sync", self.position)

    def done(self) -> bool:
        return True


class FakeStream:
    """Records ``(operation, detail, thread name)`` tuples in :attr:`ops`."""

    instances: list[FakeStream] = []  # noqa: RUF012 (every stream opened, for the tests)

    def __init__(self, device_id: int, priority: int = 0) -> None:
        self.device_id = device_id
        self.priority = priority
        self.ptr = 0xF00 + device_id
        self.handle = self
        self.ops: list[tuple[str, Any, str]] = []
        self.closed = False
        self._lock = threading.Lock()
        FakeStream.instances.append(self)

    def log(self, what: str, detail: Any = None) -> int:
        with self._lock:
            self.ops.append((what, detail, threading.current_thread().name))
            return len(self.ops)

    @contextlib.contextmanager
    def activate(self) -> Iterator[None]:
        previous = getattr(_current, "stream", None)
        _current.stream = self
        try:
            yield
        finally:
            _current.stream = previous

    def record(self) -> FakeEvent:
        return FakeEvent(self, self.log("record"))

    def synchronize(self) -> None:
        self.log("synchronize")

    def pinned_empty(self, nbytes: int) -> np.ndarray:
        self.log("pinned", nbytes)
        return np.empty(nbytes, np.uint8)

    def device_empty(self, shape: Sequence[int], dtype: Any) -> np.ndarray:
        return np.empty(tuple(shape), dtype)

    def to_device(self, dst: Any, src: np.ndarray) -> None:
        assert current_stream() is self, "a copy outside the stream's activation"
        self.log("h2d", src.nbytes)
        np.copyto(dst, src.reshape(dst.shape).view(dst.dtype))

    def to_host(self, dst: np.ndarray, src: Any) -> None:
        self.log("d2h", np.asarray(src).nbytes)
        np.copyto(dst, src)

    def batch(self, samples: Sequence[Any], layout: str, source_info: Sequence[str]) -> Any:
        return FakeDeviceBatch.from_samples(list(samples), layout, list(source_info))

    def is_device_batch(self, value: Any) -> bool:
        return isinstance(value, FakeDeviceBatch)

    def device_batch(self, data: Any, layout: str) -> Any:
        return data if isinstance(data, FakeDeviceBatch) else None

    def close(self) -> None:
        self.closed = True
        self.log("close")


def current_stream() -> FakeStream | None:
    """The fake stream active on this thread."""
    return getattr(_current, "stream", None)
