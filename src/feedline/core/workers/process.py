"""The worker process of a :class:`~feedline.core.workers.WorkerPool`: its task loop, and how
it turns callback results into arrays written to shared memory (:mod:`.segments`).

A worker serves ``(key, source, epoch, slot, payload)`` tasks from its pipe until it gets None
or the parent goes away, and replies ``(status, key, created_segments, result)`` with status
``ok`` (the result's layout in its slot), ``stop`` (StopIteration), ``error`` (position,
formatted traceback, pickled exception) or ``skipped`` (a task of an epoch that was reset; an
iterable's task still runs, and the parent drops its result).
"""

from __future__ import annotations

import importlib
import os
import pickle
import queue
import signal
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from feedline.core.workers.segments import WorkerSegments
from feedline.core.workers.tasks import Spec

__all__ = ["worker_main"]

#: How often (seconds) an idle worker checks that its parent process is still alive.
_ORPHAN_CHECK_S = 0.5


def _load_sources(blobs: list[tuple[str, bytes, int | None, str]], pickler: tuple) -> list[Spec]:
    how, ref, loads_kwargs = pickler
    loader = importlib.import_module(ref) if how == "module" else pickle.loads(ref)
    return [(kind, loader.loads(blob, **loads_kwargs), n, cyc) for kind, blob, n, cyc in blobs]


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


def _read_tasks(conn: Connection, inbox: queue.SimpleQueue, parent: int) -> None:
    """Keep the task pipe drained so that the parent never blocks on a busy worker; stop when
    the pipe closes or the parent process ``parent`` is gone (a forked sibling may hold a copy
    of the pipe, so its end of file alone cannot be relied on to end an orphaned worker)."""
    while True:
        try:
            while not conn.poll(_ORPHAN_CHECK_S):
                if os.getppid() != parent:
                    raise EOFError
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


def _renew_tracker_lock() -> None:
    """Give a forked worker a fresh lock for multiprocessing's resource tracker.

    The lock is copied in whatever state the parent had it: when another thread of the parent
    held it at the fork (registering or releasing a shared-memory segment of another pipeline),
    the worker's first segment would wait for it forever. The worker has a single thread here,
    so replacing the lock is safe.
    """
    tracker = resource_tracker._resource_tracker
    tracker._lock = type(tracker._lock)()


def worker_main(
    index: int,
    tasks: Connection,
    results: Connection,
    sources: list,
    pickler: tuple | None,
    epochs: Any,
    prefix: str,
    slot_sizes: list[int],
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
        slot_sizes: the sizes of the slots to create before reporting ready.
        inherited: the parent's pipe ends a forked child must close.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if inherited:  # forked: the parent's threads and locks were copied mid-flight
        _renew_tracker_lock()
    for conn in inherited:
        conn.close()
    ring = WorkerSegments(prefix, index)
    try:
        specs = sources if pickler is None else _load_sources(sources, pickler)
        ring.preallocate(slot_sizes)
    except Exception:
        _reply(results, ("init_error", None, ring.take_created(), traceback.format_exc()))
        ring.close()
        return
    if not _reply(results, ("ready", None, ring.take_created(), os.getpid())):
        ring.close()
        return
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=_read_tasks, args=(tasks, inbox, os.getppid()), daemon=True).start()
    states: dict[int, _IterState] = {}
    try:
        while (message := inbox.get()) is not None:
            key, source, task_epoch, slot, payload = message
            # A task of an epoch that was reset is skipped, except an iterable's: DALI's workers
            # compute every batch they were asked for, so an iterable advances (and reaches its
            # end, with cycle="raise") as far as its batches were requested.
            if epochs[source] != task_epoch and specs[source][0] != "iterable":
                status, result = "skipped", None
            else:
                state = states.setdefault(source, _IterState())
                status, result = _run(specs[source], state, task_epoch, payload, ring, slot)
            if not _reply(results, (status, key, ring.take_created(), result)):
                return
    finally:
        ring.close()
