"""Worker processes that run ``external_source(parallel=True)`` callbacks.

The executor owns one :class:`WorkerPool` per pipeline::

    pool = WorkerPool(2, "fork")
    pool.add_source(0, callback, kind="sample", prefetch=2)
    pool.start()
    pool.schedule(0, SampleBatchTask([SampleInfo(0, 0, 0, 0), SampleInfo(1, 1, 0, 0)]))
    samples = pool.receive(0)          # [ndarray, ndarray], in the order of the SampleInfos
    pool.reset()                       # after an epoch ended with StopIteration
    pool.close()

Task descriptions go to the workers pickled through a pipe; results come back through shared
memory (:mod:`.segments`) with only their layout pickled. Lifetime rule: ``receive`` copies
every result out into arrays the parent owns, so they stay valid for as long as the caller
keeps them, and the shared memory is reused at once. Workers never outlive the pool: ``close()``
(also run by ``weakref.finalize`` at garbage collection or interpreter exit) stops, joins or
terminates them and unlinks every segment. A dying worker is noticed through its process
sentinel, so ``receive`` raises instead of hanging. Drive a pool from one thread.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import secrets
import time
import weakref
from contextlib import suppress
from multiprocessing import resource_tracker
from multiprocessing.connection import wait
from multiprocessing.reduction import ForkingPickler
from typing import Any, NoReturn

from feedline.core.workers.handles import (
    GRACE_S,
    BatchRecord,
    PoolResources,
    SourceRecord,
    TaskRecord,
    WorkerHandle,
    callback_name,
    check_int,
    default_pickler,
    exit_text,
    initial_slots,
    pickle_sources,
    pickler_parts,
)
from feedline.core.workers.process import worker_main
from feedline.core.workers.segments import MIN_INITIAL_SLOT_BYTES, ParentSegments
from feedline.core.workers.tasks import (
    BatchTask,
    CallbackError,
    Cycle,
    Kind,
    SampleBatchTask,
    WorkerDiedError,
    WorkerError,
)

__all__ = ["WorkerPool"]

_KINDS = ("sample", "batch", "iterable")
_CYCLES = ("no", "quiet", "raise")
_START_METHODS = ("fork", "spawn")


class WorkerPool:
    """Processes that run the callbacks of parallel external sources.

    Args:
        num_workers: number of worker processes (``py_num_workers``), at least 1.
        start_method: ``"fork"`` (start it before any CUDA context exists) or ``"spawn"``
            (callbacks must be picklable).
        callback_pickler: ``"spawn"`` only: an object or module with ``dumps``/``loads`` (e.g.
            ``dill``), or a tuple ``(pickler, dumps_kwargs, loads_kwargs)``. By default
            callbacks travel with ``cloudpickle``, which sends local functions, lambdas and
            functions of ``__main__`` by value and importable ones by reference, as DALI's
            default pickler does.
    """

    def __init__(
        self, num_workers: int, start_method: str = "fork", *, callback_pickler: Any = None
    ) -> None:
        check_int("num_workers (py_num_workers)", num_workers, 1)
        if start_method not in _START_METHODS:
            raise ValueError(
                f"start_method (py_start_method) must be one of {_START_METHODS}, "
                f"got {start_method!r}"
            )
        if callback_pickler is not None and start_method != "spawn":
            raise ValueError(
                "callback_pickler (py_callback_pickler) is only used with start_method='spawn', "
                f"got start_method={start_method!r}"
            )
        self._num_workers = num_workers
        self._start_method = start_method
        self._pickler = pickler_parts(
            default_pickler() if callback_pickler is None else callback_pickler
        )
        self._sources: dict[int, SourceRecord] = {}
        self._tasks: dict[int, TaskRecord] = {}
        self._next_key = 0
        self._res: PoolResources | None = None
        self._finalizer: weakref.finalize | None = None
        self._broken: WorkerDiedError | None = None
        self._closed = False

    def pids(self) -> list[int]:
        """Process ids of the started workers (a method, as DALI's pool has it)."""
        return [] if self._res is None else [w.pid for w in self._res.workers if w.pid]

    @property
    def pool(self) -> PoolResources | None:
        """The processes, pipes, segments and observer thread of the started pool (None before
        :meth:`start`); DALI's pool has its process pool under this name."""
        return self._res

    @property
    def segment_prefix(self) -> str | None:
        """Prefix of this pool's shared-memory segment names (None before :meth:`start`)."""
        return None if self._res is None else self._res.segments.prefix

    def add_source(
        self,
        source_id: int,
        callback: Any,
        *,
        kind: Kind,
        prefetch: int = 1,
        num_outputs: int | None = None,
        cycle: Cycle = "no",
        batch_size: int | None = None,
        bytes_per_sample: int | None = None,
    ) -> None:
        """Register a source (before :meth:`start`).

        Args:
            source_id: the caller's id for the source.
            callback: ``"sample"``: called with each ``SampleInfo``, returns one sample;
                ``"batch"``: called with :attr:`BatchTask.info`, returns a batch (an array with
                an outer sample dimension, or a sequence of arrays); ``"iterable"``: an
                iterable, or a zero-argument callable such as a generator function that is
                called for each new iterator; every item is a batch. An iterable source runs
                in one worker, one batch after the other.
            kind: ``"sample"``, ``"batch"`` or ``"iterable"``.
            prefetch: the most batches that may be scheduled and not yet received.
            num_outputs: None for one output; n when the callback returns an n-tuple.
            cycle: iterables only: at the end, ``"no"`` stops for good, ``"quiet"`` restarts
                at once, ``"raise"`` stops until the next epoch (:meth:`reset`), then restarts.
            batch_size: the most samples of a batch, to size the shared memory the workers
                create at start: per slot, one task's share of the batch (a sample source's
                batch is split over the workers) times ``bytes_per_sample``, and at least
                1 MiB (DALI's rule; a slot grows later when a result does not fit).
            bytes_per_sample: the expected bytes of one sample (all its outputs); None: the
                slots start at 1 MiB.
        """
        if self._res is not None or self._closed:
            raise RuntimeError(f"add_source({source_id!r}): the pool was already started")
        if isinstance(source_id, bool) or not isinstance(source_id, int):
            raise TypeError(f"source_id must be an int, got {source_id!r}")
        if source_id in self._sources:
            raise ValueError(f"source_id {source_id} was already added")
        if kind not in _KINDS:
            raise ValueError(f"kind of source {source_id} must be one of {_KINDS}, got {kind!r}")
        if kind == "iterable" and not (callable(callback) or hasattr(callback, "__iter__")):
            raise TypeError(
                f"source {source_id}: an iterable source needs an iterable or a generator "
                f"function, got {type(callback).__name__}"
            )
        if kind != "iterable" and not callable(callback):
            raise TypeError(f"callback of source {source_id} must be callable, got {callback!r}")
        if cycle not in _CYCLES or (cycle != "no" and kind != "iterable"):
            raise ValueError(
                f"cycle of source {source_id} must be one of {_CYCLES} (other than 'no' only "
                f"for iterables), got {cycle!r} for kind {kind!r}"
            )
        check_int(f"prefetch of source {source_id}", prefetch, 1)
        if num_outputs is not None:
            check_int(f"num_outputs of source {source_id}", num_outputs, 1)
        samples = 1
        if batch_size is not None:
            check_int(f"batch_size of source {source_id}", batch_size, 1)
            samples = -(-batch_size // self._num_workers) if kind == "sample" else batch_size
        initial = MIN_INITIAL_SLOT_BYTES
        if bytes_per_sample is not None:
            check_int(f"bytes_per_sample of source {source_id}", bytes_per_sample, 1)
            initial = max(initial, samples * bytes_per_sample)
        iterables = sum(source.kind == "iterable" for source in self._sources.values())
        self._sources[source_id] = SourceRecord(
            source_id,
            len(self._sources),
            kind,
            callback,
            prefetch,
            num_outputs,
            cycle,
            worker=iterables % self._num_workers,
            samples_per_task=samples,
            initial_bytes=initial,
        )

    def start(self) -> None:
        """Start the workers and wait until each one has loaded the callbacks.

        Raises:
            TypeError: ``spawn`` and a callback cannot be pickled (the message names it).
            WorkerError: a worker could not load the callbacks or died while starting.
        """
        if self._res is not None or self._closed:
            raise RuntimeError("start(): the pool was already started")
        if not self._sources:
            raise RuntimeError("start(): no source was added")
        specs = [
            (s.id, (s.kind, s.callback, s.num_outputs, s.cycle)) for s in self._sources.values()
        ]
        payload: list = [spec for _, spec in specs]
        how = None
        if self._start_method == "spawn":
            payload, how = pickle_sources(specs, self._pickler)
        ctx = mp.get_context(self._start_method)
        segments = ParentSegments(f"fl{os.getpid():x}{secrets.token_hex(3)}", self._num_workers)
        res = self._res = PoolResources(segments, ctx.RawArray("q", len(specs)))
        self._finalizer = weakref.finalize(self, res.shutdown)
        try:
            if self._start_method == "fork":
                resource_tracker.ensure_running()  # forked workers must share the parent's
            plans = initial_slots(list(self._sources.values()), self._num_workers)
            for index in range(self._num_workers):
                self._launch(ctx, index, payload, how, [size for size, _ in plans[index]])
            res.observe()
            self._await_ready(plans)
        except BaseException:
            self.close()
            raise

    def _launch(
        self, ctx: Any, index: int, payload: list, how: tuple | None, slot_sizes: list[int]
    ) -> None:
        res = self._res
        task_reader, task_writer = ctx.Pipe(duplex=False)
        result_reader, result_writer = ctx.Pipe(duplex=False)
        inherited = []
        if self._start_method == "fork":
            inherited = [task_writer, result_reader]
            inherited += [c for w in res.workers for c in (w.tasks, w.results)]
        prefix = res.segments.prefix
        args = (index, task_reader, result_writer, payload, how, res.epochs, prefix, slot_sizes)
        process = ctx.Process(
            target=worker_main, name=f"feedline-worker-{index}", args=(*args, inherited)
        )
        process.daemon = True
        worker = WorkerHandle(index, process, task_writer, result_reader)
        res.workers.append(worker)
        try:
            process.start()
            worker.pid = process.pid
        finally:
            task_reader.close()
            result_writer.close()

    def _await_ready(self, plans: list[list[tuple[int, int]]]) -> None:
        """Wait for every worker's "ready" and install the slots it created (as planned)."""
        waiting = list(self._res.workers)
        while waiting:
            watched: dict[Any, WorkerHandle] = {w.results: w for w in waiting}
            watched.update({w.process.sentinel: w for w in waiting})
            for worker in {watched[ready] for ready in wait(list(watched))}:
                try:
                    status, _, updates, detail = worker.results.recv()
                except (EOFError, OSError):
                    self._died(worker, "while starting")
                self._res.apply(worker, updates)
                if status != "ready":
                    raise WorkerError(
                        f"worker {worker.index} (pid {worker.pid}) could not load the external "
                        f"source callbacks:\n{detail}",
                        worker=worker.index,
                        pid=worker.pid,
                    )
                for slot, (_, samples) in enumerate(plans[worker.index]):
                    self._res.segments.expect(worker.index, slot, samples)
                worker.slots = len(plans[worker.index])
                worker.free.extend(range(worker.slots))
                waiting.remove(worker)

    def _check(self) -> PoolResources:
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        if self._res is None:
            raise RuntimeError("the worker pool is not started; call start() first")
        if (b := self._broken) is not None:
            raise WorkerDiedError(str(b), worker=b.worker, pid=b.pid, exitcode=b.exitcode)
        return self._res

    def _source(self, source_id: int) -> SourceRecord:
        if source_id not in self._sources:
            raise KeyError(f"unknown source_id {source_id!r}; added: {sorted(self._sources)}")
        return self._sources[source_id]

    def schedule(self, source_id: int, task: SampleBatchTask | BatchTask) -> None:
        """Queue one batch of a source.

        Args:
            source_id: the source.
            task: a :class:`SampleBatchTask` for a sample source (split into contiguous chunks
                over the least busy workers), a :class:`BatchTask` for the others.
        """
        res = self._check()
        source = self._source(source_id)
        expected = SampleBatchTask if source.kind == "sample" else BatchTask
        if not isinstance(task, expected):
            raise TypeError(
                f"schedule({source_id}): a {source.kind} source takes a {expected.__name__}, "
                f"got {type(task).__name__}"
            )
        if len(source.pending) >= source.prefetch:
            raise RuntimeError(
                f"source {source_id} already has {len(source.pending)} batch(es) scheduled and "
                f"not received (prefetch={source.prefetch}); call receive() first"
            )
        by_load = sorted(res.workers, key=lambda w: (w.outstanding, w.index))
        if isinstance(task, SampleBatchTask):
            infos = list(task.samples)
            count = min(len(infos), self._num_workers)
            bounds = [len(infos) * i // count for i in range(count + 1)] if count else [0]
            chunks = [(bounds[i], infos[bounds[i] : bounds[i + 1]]) for i in range(count)]
            workers = by_load[:count]
        elif source.kind == "batch":
            chunks, workers = [(0, task.info)], by_load[:1]
        else:
            chunks, workers = [(0, None)], [res.workers[source.worker]]
        batch = BatchRecord(source, getattr(task, "info", None), [[] for _ in chunks], len(chunks))
        tasks, messages = [], []
        for part, ((first, payload), worker) in enumerate(zip(chunks, workers, strict=True)):
            tasks.append(TaskRecord(batch, part, worker, worker.take_slot(), first, payload))
            epoch = res.epochs[source.index]
            message = (self._next_key + part, source.index, epoch, tasks[-1].slot, payload)
            try:
                messages.append(ForkingPickler.dumps(message))
            except Exception as exc:
                for taken in tasks:
                    taken.worker.free.append(taken.slot)
                raise TypeError(
                    f"schedule({source_id}): the task cannot be pickled: {exc}"
                ) from exc
        source.pending.append(batch)
        for queued, data in zip(tasks, messages, strict=True):
            self._tasks[self._next_key] = queued
            self._next_key += 1
            queued.worker.outstanding += 1
            try:
                queued.worker.tasks.send_bytes(data)
            except OSError:
                self._died(queued.worker, "before it got a task")

    def receive(self, source_id: int, timeout: float | None = None) -> Any:
        """Wait for the oldest scheduled batch of a source.

        Returns:
            ``num_outputs=None``: a list with one array per sample; otherwise a tuple of
            ``num_outputs`` such lists. The arrays are copies the caller owns.

        Raises:
            StopIteration: a callback raised StopIteration (for any sample of the batch), or
                the iterable is exhausted; :meth:`reset` before the next epoch.
            CallbackError: a callback raised; names the worker and the sample and holds the
                worker's traceback (the original exception, when it unpickles, is the cause).
            WorkerDiedError: a worker process died; the pool can only be closed.
            TimeoutError: ``timeout`` seconds passed; the batch stays scheduled.
        """
        self._check()
        source = self._source(source_id)
        if not source.pending:
            raise RuntimeError(f"receive({source_id}): nothing is scheduled for this source")
        batch = source.pending[0]
        deadline = None if timeout is None else time.monotonic() + timeout
        while batch.remaining:
            self._pump(deadline, source_id)
        source.pending.popleft()
        if batch.errors:
            raise min(batch.errors, key=lambda item: item[0])[1]
        if batch.stop:
            raise StopIteration
        samples = [sample for part in batch.parts for sample in part]
        outputs = tuple([sample[i] for sample in samples] for i in range(source.num_outputs or 1))
        return outputs[0] if source.num_outputs is None else outputs

    def reset(self, source_id: int | None = None) -> None:
        """Start a new epoch of one source (default: all): drop its scheduled batches.

        An iterable with ``cycle="raise"`` that ended restarts on its next batch.
        """
        res = self._check()
        for source in self._sources.values() if source_id is None else [self._source(source_id)]:
            res.epochs[source.index] += 1
            for batch in source.pending:
                batch.dropped = True
            source.pending.clear()

    def shm_statistics(self) -> dict[str, list[int]]:
        """Sizes in bytes of the live segments: ``capacities``, ``per_sample_capacities``."""
        if self._res is None or self._res.closed:
            return {"capacities": [], "per_sample_capacities": []}
        return self._res.segments.statistics()

    def close(self) -> None:
        """Stop the workers and unlink all shared memory. Idempotent; safe after any error."""
        self._closed = True
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _pump(self, deadline: float | None, source_id: int) -> None:
        watched: dict[Any, WorkerHandle] = {w.results: w for w in self._res.workers}
        watched.update({w.process.sentinel: w for w in self._res.workers})
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready = wait(list(watched), timeout)
        if not ready:
            raise TimeoutError(f"receive({source_id}): no result within the timeout")
        for obj in ready:
            worker = watched[obj]
            self._drain(worker)
            if obj is not worker.results:
                self._died(worker, "")

    def _drain(self, worker: WorkerHandle) -> None:
        while True:
            try:
                if not worker.results.poll():
                    return
                message = worker.results.recv()
            except (EOFError, OSError):
                self._died(worker, "")
            self._handle(worker, message)

    def _handle(self, worker: WorkerHandle, message: tuple[str, int, list, Any]) -> None:
        status, key, updates, result = message
        self._res.apply(worker, updates)
        task = self._tasks.pop(key)
        batch = task.batch
        worker.outstanding -= 1
        try:
            if batch.dropped or status == "skipped":
                return
            if status == "ok":
                batch.parts[task.part] = self._res.segments.read(worker.index, task.slot, *result)
            elif status == "stop":
                batch.stop = True
            else:
                batch.errors.append(self._callback_error(task, *result))
        finally:
            worker.free.append(task.slot)
            batch.remaining -= 1

    def _callback_error(
        self, task: TaskRecord, position: int | None, trace: str, pickled: bytes | None
    ) -> tuple[int, CallbackError]:
        source, worker, index = task.batch.source, task.worker, None
        if source.kind != "sample":
            where = f"batch {task.batch.what!r}"
        elif position is None:
            where = f"samples {task.first}..{task.first + len(task.payload) - 1} of a batch"
        else:
            index = task.first + position
            where = f"sample {index} of the batch ({task.payload[position]!r})"
        error = CallbackError(
            f"external source {source.id}: callback {callback_name(source.callback)} failed in "
            f"worker {worker.index} (pid {worker.pid}) for {where}:\n{trace}",
            worker=worker.index,
            pid=worker.pid,
            source_id=source.id,
            sample_index=index,
            remote_traceback=trace,
        )
        if pickled is not None:
            with suppress(Exception):
                error.__cause__ = pickle.loads(pickled)
        return (-1 if index is None else index), error

    def _died(self, worker: WorkerHandle, when: str) -> NoReturn:
        worker = self._res.first_exit or worker  # the others were stopped because of it
        worker.process.join(GRACE_S)
        code = worker.process.exitcode
        busy = sorted({t.batch.source.id for t in self._tasks.values() if t.worker is worker})
        running = ", ".join(f"{i} ({callback_name(self._sources[i].callback)})" for i in busy)
        self._broken = WorkerDiedError(
            f"external source worker {worker.index} (pid {worker.pid}) exited unexpectedly "
            f"{when + ' ' if when else ''}with {exit_text(code)}"
            f"{f'; it had tasks of source(s) {running}' if running else ''}; "
            "the worker pool can only be closed",
            worker=worker.index,
            pid=worker.pid,
            exitcode=code,
        )
        raise self._broken
