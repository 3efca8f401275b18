"""The parent's records of a :class:`~feedline.core.workers.WorkerPool`: each worker's handle,
the sources, batches and tasks under way, the resources a finalizer must release, and how
callbacks are pickled for ``spawn``."""

from __future__ import annotations

import os
import pickle
import signal
import time
import types
from collections import deque
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

import numpy as np

from feedline.core.workers.observer import PoolObserver
from feedline.core.workers.segments import ParentSegments
from feedline.core.workers.tasks import CallbackError, Spec

__all__ = [
    "GRACE_S",
    "BatchRecord",
    "PoolResources",
    "SourceRecord",
    "TaskRecord",
    "WorkerHandle",
    "callback_name",
    "check_int",
    "default_pickler",
    "exit_text",
    "initial_slots",
    "pickle_sources",
    "pickler_parts",
]

GRACE_S = 1.0
"""Seconds the parent waits for a worker to stop (or to show its exit code) before acting."""


def exit_text(code: int | None) -> str:
    """How a process ended, for messages: its exit code, and the signal that killed it."""
    if code is not None and code < 0:
        with suppress(ValueError):
            return f"exit code {code} (killed by {signal.Signals(-code).name})"
    return f"exit code {code}"


def check_int(name: str, value: Any, minimum: int) -> None:
    """Raise ValueError unless ``value`` is an int (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


def callback_name(callback: Any) -> str:
    """A short name for error messages: ``module.qualname`` or a trimmed repr."""
    qualname = getattr(callback, "__qualname__", None)
    if qualname:
        return f"{getattr(callback, '__module__', '?')}.{qualname}"
    text = repr(callback)
    return text if len(text) <= 80 else text[:77] + "..."


def default_pickler() -> Any:
    """The pickler of ``spawn`` callbacks when the user names none: ``cloudpickle``, which
    pickles local functions, lambdas and ``__main__``'s functions by value (DALI's default
    pickler does the same), everything importable by reference."""
    import cloudpickle

    return cloudpickle


def pickler_parts(pickler: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Normalize ``callback_pickler`` to ``(pickler, dumps_kwargs, loads_kwargs)``."""
    parts = pickler if isinstance(pickler, tuple) else (pickler, {}, {})
    if len(parts) != 3 or not all(isinstance(kwargs, dict) for kwargs in parts[1:]):
        raise TypeError(
            "callback_pickler: expected an object with dumps/loads or a tuple "
            f"(pickler, dumps_kwargs, loads_kwargs), got {pickler!r}"
        )
    if not all(callable(getattr(parts[0], attr, None)) for attr in ("dumps", "loads")):
        raise TypeError(f"callback_pickler: {parts[0]!r} has no callable dumps() and loads()")
    return parts


def pickle_sources(
    sources: Sequence[tuple[int, Spec]], pickler: tuple[Any, dict[str, Any], dict[str, Any]]
) -> tuple[list[tuple[str, bytes, int | None, str]], tuple[str, Any, dict[str, Any]]]:
    """Serialize ``(source_id, spec)`` pairs for ``spawn``; errors name the callback."""
    dumper, dumps_kwargs, loads_kwargs = pickler
    blobs = []
    for source_id, (kind, callback, num_outputs, cycle) in sources:
        try:
            blob = dumper.dumps(callback, **dumps_kwargs)
        except Exception as exc:
            raise TypeError(
                f"the callback {callback_name(callback)} of source {source_id} cannot be pickled "
                f"for start_method='spawn' ({type(exc).__name__}: {exc}); define it at module "
                "level, pass another callback_pickler (e.g. dill) or use start_method='fork'"
            ) from exc
        blobs.append((kind, blob, num_outputs, cycle))
    if isinstance(dumper, types.ModuleType):
        return blobs, ("module", dumper.__name__, loads_kwargs)
    try:
        return blobs, ("object", pickle.dumps(dumper), loads_kwargs)
    except Exception as exc:
        raise TypeError(f"callback_pickler {dumper!r} cannot be pickled: {exc}") from exc


def initial_slots(sources: Sequence[SourceRecord], num_workers: int) -> list[list[tuple[int, int]]]:
    """Per worker, the ``(size in bytes, samples per task)`` of each slot it creates at start.

    A worker gets ``prefetch`` slots for every source whose tasks it may run (every source
    but the iterables of other workers), as large as the largest ``initial_bytes`` among them.
    """
    plans: list[list[tuple[int, int]]] = []
    for worker in range(num_workers):
        mine = [s for s in sources if s.kind != "iterable" or s.worker == worker]
        if not mine:
            plans.append([])
            continue
        size = max(s.initial_bytes for s in mine)
        samples = max(s.samples_per_task for s in mine)
        plans.append([(size, samples)] * sum(s.prefetch for s in mine))
    return plans


@dataclass(eq=False)
class WorkerHandle:
    """The parent's record of one worker: its process, pipe ends, load and free slots."""

    index: int
    process: BaseProcess
    tasks: Connection
    results: Connection
    pid: int | None = None
    outstanding: int = 0
    slots: int = 0
    free: deque[int] = field(default_factory=deque)

    def take_slot(self) -> int:
        """The free slot of this worker's ring freed the longest ago (so that every slot takes
        turns and grows to what the results need), or a new one."""
        if self.free:
            return self.free.popleft()
        self.slots += 1
        return self.slots - 1


@dataclass(eq=False)
class SourceRecord:
    """A source added to the pool, with its batches scheduled and not yet received.

    ``samples_per_task`` is how many samples one task's result holds at most (a worker's share
    of a batch for sample sources, the whole batch otherwise; 1 when the batch size is not
    known) and ``initial_bytes`` the size of the slots the workers create for it at start.
    """

    id: int
    index: int
    kind: str
    callback: Any
    prefetch: int
    num_outputs: int | None
    cycle: str
    worker: int
    samples_per_task: int
    initial_bytes: int
    pending: deque[BatchRecord] = field(default_factory=deque)


@dataclass(eq=False)
class BatchRecord:
    """One scheduled batch: its parts (one per task) as they come back."""

    source: SourceRecord
    what: Any
    parts: list[list[tuple[np.ndarray, ...]]]
    remaining: int
    stop: bool = False
    errors: list[tuple[int, CallbackError]] = field(default_factory=list)
    dropped: bool = False


@dataclass(eq=False)
class TaskRecord:
    """One task sent to a worker: a part of a batch, in a slot of the worker's ring."""

    batch: BatchRecord
    part: int
    worker: WorkerHandle
    slot: int
    first: int
    payload: Any


class PoolResources:
    """Processes, pipes and segments of a pool: what its finalizer must release.

    Kept apart from the pool object so that ``weakref.finalize`` can hold it without keeping
    the pool alive. In a forked child (which inherits a copy) :meth:`shutdown` does nothing.

    Attributes:
        _observer: the :class:`PoolObserver` of the workers (None until they are started;
            closed by :meth:`shutdown`); DALI's process pool has it under this name, and
            DALI's tests read its ``thread``.
    """

    def __init__(self, segments: ParentSegments, epochs: Any) -> None:
        self.owner = os.getpid()
        self.segments = segments
        self.epochs = epochs
        self.workers: list[WorkerHandle] = []
        self.closed = False
        self._observer: PoolObserver | None = None

    def observe(self) -> None:
        """Start watching the workers for an unexpected exit."""
        self._observer = PoolObserver(self.workers)

    @property
    def first_exit(self) -> WorkerHandle | None:
        """The worker the observer saw end first, if one ended while watched."""
        return None if self._observer is None else self._observer.first_exit

    def apply(self, worker: WorkerHandle, updates: list[tuple[int, int]]) -> None:
        """Install the segments a worker reported as created."""
        for slot, seq in updates:
            self.segments.install(worker.index, slot, seq)

    def _drain_updates(self, worker: WorkerHandle, open_conns: set[Connection]) -> None:
        try:
            while worker.results.poll():
                self.apply(worker, worker.results.recv()[2])
        except (EOFError, OSError, pickle.UnpicklingError):
            open_conns.discard(worker.results)

    def shutdown(self) -> None:
        """Stop the workers (terminating stragglers) and unlink every segment; idempotent."""
        if self.closed or os.getpid() != self.owner:
            return
        self.closed = True
        if self._observer is not None:
            self._observer.close()  # the workers' exits below are not failures
        for index in range(len(self.epochs)):
            self.epochs[index] += 1
        started = [w for w in self.workers if w.pid is not None]
        for worker in started:
            with suppress(OSError):
                worker.tasks.send(None)
        open_conns = {w.results for w in started}
        deadline = time.monotonic() + GRACE_S
        alive = [w for w in started if w.process.exitcode is None]
        while alive and (left := deadline - time.monotonic()) > 0:
            watched: dict[Any, WorkerHandle] = {w.process.sentinel: w for w in alive}
            watched.update({w.results: w for w in alive if w.results in open_conns})
            for ready in wait(list(watched), left):
                self._drain_updates(watched[ready], open_conns)
            alive = [w for w in alive if w.process.exitcode is None]
        for worker in alive:
            worker.process.terminate()
            worker.process.join(GRACE_S)
            if worker.process.exitcode is None:
                worker.process.kill()
        for worker in self.workers:
            if worker.results in open_conns:
                self._drain_updates(worker, open_conns)
            worker.tasks.close()
            worker.results.close()
            if worker.pid is not None:
                worker.process.join()
                worker.process.close()
        self.segments.release_all()
