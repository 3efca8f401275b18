"""A reader's loader thread: whole batches prepared ahead, and the failures it delivers in order.

:class:`Prefetcher` runs a reader's batch preparation on a daemon thread and
queues each :class:`Prepared` batch (or the :class:`Failure` that stopped it) for ``run()``.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from feedline.core.tensor import TensorListCPU
from feedline.readers.carry import LoadFailure

__all__ = ["Failure", "LoadFailed", "Prefetcher", "Prepared"]


@dataclass
class Prepared:
    """A batch made by the loader thread, with the sampler state right after it (and, under
    ``on_error="skip"``, the samples left out because they failed to load)."""

    outputs: list[TensorListCPU]
    state: dict[str, Any]
    failures: list[LoadFailure] = field(default_factory=list)


@dataclass
class Failure:
    """A failure of the loader thread, delivered to :meth:`Reader.run` in order."""

    error: BaseException
    sample_index: int | None = None
    source_info: str = ""


class LoadFailed(Exception):
    """Raised by the default :meth:`Reader.load_batch`: it knows the batch's first failure."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.error)
        self.failure = failure


class Prefetcher:
    """A daemon thread that keeps up to ``depth`` prepared batches in a queue.

    It holds its producer weakly, so a reader that is dropped without ``close()`` still ends it.
    """

    def __init__(self, produce: Callable[[], Prepared | Failure], depth: int, name: str) -> None:
        self._produce = weakref.WeakMethod(produce)  # type: ignore[arg-type]
        self._queue: queue.Queue[Prepared | Failure] = queue.Queue(maxsize=depth)
        self.behind = True
        """Whether the last :meth:`get` found no batch ready (True until the first one): the
        consumer waits for this thread, which should then load with every thread it may use."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"feedline-{name}", daemon=True)
        self._thread.start()

    def _running(self) -> bool:
        return not self._stop.is_set() and self._produce() is not None

    def _loop(self) -> None:
        while self._running():
            produce = self._produce()
            if produce is None:
                return
            try:
                item = produce()
            except BaseException as exc:  # delivered to run(), never lost in this thread
                item = Failure(exc)
            del produce
            while self._running():
                try:
                    self._queue.put(item, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if isinstance(item, Failure):
                return

    def get(self) -> Prepared | Failure:
        self.behind = self._queue.empty()
        while True:
            try:
                return self._queue.get(timeout=0.5)
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    return Failure(RuntimeError("the reader's loader thread stopped"))

    def stop(self) -> None:
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._queue.get_nowait()
            except queue.Empty:
                self._thread.join(timeout=0.05)
