"""Both sides of :class:`feedline.core.workers.WorkerPool`'s processes and shared memory.

Here: the worker process loop, the shared-memory transport, and the parent's records of its
processes and segments; the scheduling logic and the public API are in ``workers``.

Each worker owns a small ring of *slots*; the parent assigns a slot to every task it sends and
frees it once it has copied the result out, so a slot is never written while it is being read.
A slot is backed by one POSIX shared-memory segment that the worker creates (and replaces by a
larger one when a result does not fit). Ownership rule: **workers create and only close
segments; the parent unlinks every one of them**, exactly once. Segment names are
``{prefix}w{worker}n{seq}`` with a per-worker sequence number counting up from 0, and every reply
reports the segments created for it, so after a worker crash the parent finds an unreported one
by probing the following sequence numbers.

A result is a list of samples, each a tuple of arrays, packed at naturally aligned offsets
(equal-shaped samples of one dtype end up contiguous); only the layout, ``(dtype, shape,
offset)`` per array, is pickled through the pipe.
"""

from __future__ import annotations

import importlib
import math
import mmap
import os
import pickle
import queue
import signal
import threading
import time
import traceback
import types
from collections.abc import Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

__all__ = [
    "GRACE_S",
    "Layout",
    "ParentSegments",
    "PoolResources",
    "WorkerHandle",
    "WorkerSegments",
    "callback_name",
    "pickle_sources",
    "pickler_parts",
    "plan_layout",
    "segment_name",
    "worker_main",
]

Layout = list[tuple[tuple[np.dtype, tuple[int, ...], int], ...]]
"""Per sample, per output: ``(dtype, shape, byte offset)`` in the slot's segment."""

Spec = tuple[str, Any, int | None, str]
"""A source as a worker sees it: ``(kind, callback or iterable, num_outputs, cycle)``."""

_MIN_CAPACITY = 1 << 16
GRACE_S = 1.0
"""Seconds the parent waits for a worker to stop (or to show its exit code) before acting."""


def segment_name(prefix: str, worker: int, seq: int) -> str:
    """The name of a worker's ``seq``-th segment."""
    return f"{prefix}w{worker}n{seq}"


def plan_layout(samples: Sequence[tuple[np.ndarray, ...]]) -> tuple[Layout, int]:
    """Place every array at an offset aligned for its dtype; return the layout and total bytes."""
    layout: Layout = []
    offset = 0
    for sample in samples:
        entry = []
        for array in sample:
            align = array.dtype.alignment
            offset = -(-offset // align) * align
            entry.append((array.dtype, array.shape, offset))
            offset += array.nbytes
        layout.append(tuple(entry))
    return layout, offset


def _capacity(nbytes: int) -> int:
    """Segment size for ``nbytes``: a quarter of headroom, whole pages, at least 64 KiB."""
    wanted = max(nbytes + nbytes // 4, _MIN_CAPACITY)
    return -(-wanted // mmap.PAGESIZE) * mmap.PAGESIZE


def _unlink(segment: SharedMemory) -> None:
    segment.close()
    with suppress(FileNotFoundError):
        segment.unlink()


class WorkerSegments:
    """The worker's side of its ring: writes results, creating or growing slot segments."""

    def __init__(self, prefix: str, worker: int) -> None:
        self._prefix = prefix
        self._worker = worker
        self._segments: dict[int, SharedMemory] = {}
        self._seq = 0
        self._created: list[tuple[int, int]] = []

    def write(self, slot: int, samples: Sequence[tuple[np.ndarray, ...]]) -> tuple[Layout, int]:
        """Copy ``samples`` into ``slot`` (growing it if needed); return the layout and size."""
        layout, total = plan_layout(samples)
        if not total:
            return layout, total
        segment = self._segments.get(slot)
        if segment is None or segment.size < total:
            if segment is not None:
                segment.close()
            name = segment_name(self._prefix, self._worker, self._seq)
            segment = SharedMemory(name, create=True, size=_capacity(total))
            self._segments[slot] = segment
            self._created.append((slot, self._seq))
            self._seq += 1
        for sample, entry in zip(samples, layout, strict=True):
            for array, (dtype, shape, offset) in zip(sample, entry, strict=True):
                if array.nbytes:
                    target = np.ndarray(shape, dtype, buffer=segment.buf, offset=offset)
                    np.copyto(target, array, casting="no")
                    del target
        return layout, total

    def take_created(self) -> list[tuple[int, int]]:
        """The ``(slot, seq)`` of segments created since the last call (reported to the parent)."""
        created, self._created = self._created, []
        return created

    def close(self) -> None:
        """Unmap every segment (the parent unlinks them)."""
        for segment in self._segments.values():
            segment.close()
        self._segments.clear()


class ParentSegments:
    """The parent's view of every worker's ring: attaches, copies out and unlinks segments."""

    def __init__(self, prefix: str, num_workers: int) -> None:
        self.prefix = prefix
        self._handles: dict[tuple[int, int], SharedMemory] = {}
        self._samples: dict[tuple[int, int], int] = {}
        self._next_seq = [0] * num_workers

    def install(self, worker: int, slot: int, seq: int) -> None:
        """Attach the segment a worker created for ``slot``, unlinking the one it replaced."""
        self._next_seq[worker] = max(self._next_seq[worker], seq + 1)
        old = self._handles.pop((worker, slot), None)
        if old is not None:
            _unlink(old)
        self._handles[worker, slot] = SharedMemory(segment_name(self.prefix, worker, seq))

    def read(
        self, worker: int, slot: int, layout: Layout, total: int
    ) -> list[tuple[np.ndarray, ...]]:
        """Copy a result of ``total`` bytes out of ``slot`` into parent-owned arrays.

        The arrays are views of one private buffer per result; nothing refers to shared memory.
        """
        buffer = np.empty(total, np.uint8)
        if total:
            source = np.frombuffer(self._handles[worker, slot].buf, np.uint8, total)
            buffer[:] = source
            del source
        self._samples[worker, slot] = len(layout)
        return [
            tuple(
                np.ndarray(shape, dtype, buffer=buffer, offset=offset)
                if dtype.itemsize * math.prod(shape)
                else np.empty(shape, dtype)
                for dtype, shape, offset in entry
            )
            for entry in layout
        ]

    def statistics(self) -> dict[str, list[int]]:
        """Bytes per live segment, and per sample of the last result read from it."""
        keys = sorted(self._handles)
        capacities = [self._handles[key].size for key in keys]
        counts = [max(self._samples.get(key, 1), 1) for key in keys]
        per_sample = [size // count for size, count in zip(capacities, counts, strict=True)]
        return {"capacities": capacities, "per_sample_capacities": per_sample}

    def release_all(self) -> None:
        """Unlink every known segment, then any that a dead worker never reported."""
        for handle in self._handles.values():
            _unlink(handle)
        self._handles.clear()
        for worker, seq in enumerate(self._next_seq):
            while True:
                try:
                    orphan = SharedMemory(segment_name(self.prefix, worker, seq))
                except FileNotFoundError:
                    break
                _unlink(orphan)
                seq += 1
            self._next_seq[worker] = seq


def callback_name(callback: Any) -> str:
    """A short name for error messages: ``module.qualname`` or a trimmed repr."""
    qualname = getattr(callback, "__qualname__", None)
    if qualname:
        return f"{getattr(callback, '__module__', '?')}.{qualname}"
    text = repr(callback)
    return text if len(text) <= 80 else text[:77] + "..."


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
                "level, pass callback_pickler (e.g. cloudpickle) or use start_method='fork'"
            ) from exc
        blobs.append((kind, blob, num_outputs, cycle))
    if isinstance(dumper, types.ModuleType):
        return blobs, ("module", dumper.__name__, loads_kwargs)
    try:
        return blobs, ("object", pickle.dumps(dumper), loads_kwargs)
    except Exception as exc:
        raise TypeError(f"callback_pickler {dumper!r} cannot be pickled: {exc}") from exc


def _load_sources(blobs: list[tuple[str, bytes, int | None, str]], pickler: tuple) -> list[Spec]:
    how, ref, loads_kwargs = pickler
    loader = importlib.import_module(ref) if how == "module" else pickle.loads(ref)
    return [(kind, loader.loads(blob, **loads_kwargs), n, cyc) for kind, blob, n, cyc in blobs]


# ------------------------------------------------------------------ callback results → arrays


def _to_array(value: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.hasobject:
        raise TypeError(
            f"a {type(value).__name__} converts to a NumPy array of dtype object, which cannot "
            "travel through shared memory; return numeric (or bytes/str) arrays"
        )
    return array


def _outputs(value: Any, num_outputs: int | None, what: str) -> list[Any]:
    if num_outputs is None:
        return [value]
    if not isinstance(value, (tuple, list)) or len(value) != num_outputs:
        size = f" of length {len(value)}" if isinstance(value, (tuple, list)) else ""
        raise ValueError(
            f"num_outputs={num_outputs}: the callback must return a tuple of {num_outputs} "
            f"{what}, got a {type(value).__name__}{size}"
        )
    return list(value)


def _split(batch: Any) -> list[np.ndarray]:
    array_like = any(hasattr(batch, name) for name in ("__array__", "__array_interface__"))
    sized = hasattr(batch, "__len__") and not isinstance(batch, (str, bytes))
    if isinstance(batch, (list, tuple)) or (sized and not array_like):
        return [_to_array(sample) for sample in batch]
    array = _to_array(batch)
    if array.ndim == 0:
        raise ValueError(f"a batch needs an outer sample dimension, got a scalar {batch!r}")
    return list(array)


def _batch(value: Any, num_outputs: int | None) -> list[tuple[np.ndarray, ...]]:
    columns = [_split(output) for output in _outputs(value, num_outputs, "batches")]
    sizes = [len(column) for column in columns]
    if len(set(sizes)) > 1:
        raise ValueError(f"the outputs have different batch sizes {sizes}")
    return list(zip(*columns, strict=True))


# ------------------------------------------------------------------------- worker process


@dataclass
class _IterState:
    iterator: Iterator[Any] | None = None
    exhausted_in: int | None = None


def _next_batch(source: Any, cycle: str, state: _IterState, epoch: int) -> Any:
    """Next item of an iterable source, following ``cycle`` ("no", "quiet" or "raise")."""

    def fresh() -> Iterator[Any]:
        return iter(source() if callable(source) else source)

    if state.iterator is None:
        state.iterator = fresh()
    elif state.exhausted_in is not None:
        if cycle != "raise" or state.exhausted_in == epoch:
            raise StopIteration
        state.iterator, state.exhausted_in = fresh(), None
    try:
        return next(state.iterator)
    except StopIteration:
        if cycle != "quiet":
            state.exhausted_in = epoch
            raise
    state.iterator = fresh()
    return next(state.iterator)


def _run(spec: Spec, state: _IterState, epoch: int, payload: Any, ring: WorkerSegments, slot: int):
    """Run one task; return ``(status, result)`` for the reply."""
    kind, callback, num_outputs, cycle = spec
    done = 0
    try:
        if kind == "sample":
            samples = []
            for info in payload:
                value = _outputs(callback(info), num_outputs, "samples")
                samples.append(tuple(_to_array(output) for output in value))
                done += 1
        elif kind == "batch":
            samples = _batch(callback(payload), num_outputs)
        else:
            samples = _batch(_next_batch(callback, cycle, state, epoch), num_outputs)
        return "ok", ring.write(slot, samples)
    except StopIteration:
        return "stop", None
    except Exception as error:
        position = done if kind == "sample" and done < len(payload) else None
        trace = traceback.format_exception(type(error), error, error.__traceback__.tb_next)
        try:
            pickled = pickle.dumps(error)
        except Exception:
            pickled = None
        return "error", (position, "".join(trace), pickled)


def _read_tasks(conn: Connection, inbox: queue.SimpleQueue) -> None:
    """Keep the task pipe drained so that the parent never blocks on a busy worker."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            message = None
        inbox.put(message)
        if message is None:
            return


def _reply(results: Connection, message: tuple[Any, ...]) -> bool:
    try:
        results.send(message)
    except OSError:
        return False
    return True


def worker_main(
    index: int,
    tasks: Connection,
    results: Connection,
    sources: list,
    pickler: tuple | None,
    epochs: Any,
    prefix: str,
    inherited: list[Connection],
) -> None:
    """Entry point of a worker process: serve tasks until told to stop or orphaned.

    Args:
        index: the worker's index in the pool.
        tasks: pipe end receiving ``(key, source, epoch, slot, payload)`` (None: stop).
        results: pipe end for ``(status, key, created_segments, result)`` replies.
        sources: the sources' specs, or their pickles when ``pickler`` is given (spawn).
        pickler: how to load pickled sources, from :func:`pickle_sources`.
        epochs: shared current epoch of every source; tasks of an older epoch are skipped.
        prefix: segment name prefix.
        inherited: the parent's pipe ends a forked child must close.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for conn in inherited:
        conn.close()
    try:
        specs = sources if pickler is None else _load_sources(sources, pickler)
    except Exception:
        _reply(results, ("init_error", None, [], traceback.format_exc()))
        return
    if not _reply(results, ("ready", None, [], os.getpid())):
        return
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=_read_tasks, args=(tasks, inbox), daemon=True).start()
    ring = WorkerSegments(prefix, index)
    states: dict[int, _IterState] = {}
    try:
        while (message := inbox.get()) is not None:
            key, source, task_epoch, slot, payload = message
            if epochs[source] != task_epoch:
                status, result = "skipped", None
            else:
                state = states.setdefault(source, _IterState())
                status, result = _run(specs[source], state, task_epoch, payload, ring, slot)
            if not _reply(results, (status, key, ring.take_created(), result)):
                return
    finally:
        ring.close()


# ------------------------------------------------------------------------- parent side


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
    free: list[int] = field(default_factory=list)

    def take_slot(self) -> int:
        """A free slot of this worker's ring, or a new one."""
        if self.free:
            return self.free.pop()
        self.slots += 1
        return self.slots - 1


class PoolResources:
    """Processes, pipes and segments of a pool: what its finalizer must release.

    Kept apart from the pool object so that ``weakref.finalize`` can hold it without keeping
    the pool alive. In a forked child (which inherits a copy) :meth:`shutdown` does nothing.
    """

    def __init__(self, segments: ParentSegments, epochs: Any) -> None:
        self.owner = os.getpid()
        self.segments = segments
        self.epochs = epochs
        self.workers: list[WorkerHandle] = []
        self.closed = False

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
