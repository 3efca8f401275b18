"""Runs a built graph, one iteration at a time. Knows nothing of plugins.

Per-sample CPU work runs on a pool of ``num_threads`` threads; consecutive per-sample operators
(:class:`~feedline.core.kernel.SampleKernel`) form a *chain* (:mod:`.chains`) that runs back to
back on one sample in one task, so a batch meets one barrier per chain rather than
one per operator. Batch kernels (readers, vectorised arithmetic…) run on whole batches. Any
failure is re-raised as an :class:`~feedline.core.errors.OperatorError` naming the operator,
iteration, sample and source.

**Overlapping iterations.** While the samples of an iteration's last chain run, the pipeline
thread may start the next iteration when it has been requested already (prefetching): it runs
that iteration's steps up to its first chain (the readers, typically) and queues that chain's
samples behind the current ones, so a pool thread that runs out of samples goes straight on to
the next batch instead of waiting at the barrier. Only the last chain overlaps the next
iteration. Sources (readers, external sources, constants) run first in each iteration and only
they can end the epoch, so nothing that could still end it runs after the next iteration has
started. Batch operators after the chain (arithmetic, GPU stages) run while the pool works on
the next batch. Each operator still runs its iterations in order.

**Skipping failed samples.** When some operator's error policy is ``skip``
(:mod:`.errors_policy`), the per-sample failures of its chain are collected instead of failing
the job; the failed samples are dropped from the readers' batches, the readers hand out their
next samples to fill them up, and the steps after the sources run again. Iterations then do not
overlap: the readers' next samples may still be needed by the current one.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from feedline.core.buffers import BufferPool
from feedline.core.errors import OperatorError, SkippedSample
from feedline.core.execution.chains import Chain, ChainRun, Key
from feedline.core.execution.errors_policy import (
    ErrorLog,
    SampleFailures,
    check_samples,
    guard,
    substitute,
)
from feedline.core.execution.plan import externally_needed, make_plan, overlap_position
from feedline.core.execution.threads import Job, ThreadPool
from feedline.core.graph import DataNode, OpNode
from feedline.core.host_memory import keep_freed_memory
from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU

__all__ = ["EndOfData", "Executor", "IterationResult", "OpStats"]


class EndOfData(Exception):
    """An input callback raised StopIteration: the iteration is dropped, the epoch ended."""


@dataclass
class OpStats:
    """Counters of one operator, reported by ``Pipeline.executor_statistics()``."""

    stage: str
    runs: int = 0
    time_s: float = 0.0
    real_memory_size: list[int] = field(default_factory=list)
    max_real_memory_size: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The counters as a plain dict."""
        return {
            "stage": self.stage,
            "runs": self.runs,
            "time_s": self.time_s,
            "real_memory_size": list(self.real_memory_size),
            "max_real_memory_size": list(self.max_real_memory_size),
        }


@dataclass
class IterationResult:
    """What one iteration produced."""

    outputs: tuple[TensorListCPU, ...]
    reader_states: dict[str, Any]
    pending: Any = None
    """For a pipeline with a device stage: the future of that stage's result (the outputs are
    then only the CPU stage's; see :mod:`.stages`)."""


@dataclass
class _Progress:
    """An iteration under way: its values so far and the next step of the plan."""

    number: int
    size: int
    values: dict[Key, TensorListCPU] = field(default_factory=dict)
    reader_states: dict[str, Any] = field(default_factory=dict)
    sized: bool = False
    position: int = 0
    running: tuple[ChainRun, Job[dict[Key, Any]]] | None = None
    failure: Exception | None = None


_LIVE_EXECUTORS: weakref.WeakSet[Executor] = weakref.WeakSet()


def abort_all_executors() -> None:
    """Abort every live executor (:meth:`Executor.abort`): the interpreter is about to exit."""
    for executor in list(_LIVE_EXECUTORS):
        executor.abort()


class Executor:
    """Runs the operators of a pruned, ordered graph.

    Args:
        ops: the operators, in topological order.
        kernels: the kernel of each operator (same order).
        outputs: the pipeline's output nodes.
        batch_size: the maximum batch size.
        num_threads: per-sample worker threads (>= 1).
        seeds: each operator's seed by name.
        memory_stats: record output memory sizes.
        set_affinity: pin the worker threads to CPU cores.
        requested: whether an iteration number has been requested, so that it may start while
            the iteration before it finishes (see the module docstring); never, when omitted.
        policies: each operator's error policy by name (``raise`` when omitted).
        errors: where skipped samples are recorded; needed when a policy is ``skip``.
        pool: a thread pool to share (another stage's; it stays open when this one closes);
            a pool of its own when omitted.
    """

    def __init__(
        self,
        ops: Sequence[OpNode],
        kernels: Sequence[Kernel],
        outputs: Sequence[DataNode],
        batch_size: int,
        num_threads: int,
        seeds: dict[str, int],
        memory_stats: bool = False,
        set_affinity: bool = False,
        requested: Callable[[int], bool] | None = None,
        policies: dict[str, str] | None = None,
        errors: ErrorLog | None = None,
        pool: ThreadPool | None = None,
    ) -> None:
        self.ops = list(ops)
        self.kernels = {id(op): k for op, k in zip(ops, kernels, strict=True)}
        self.outputs = list(outputs)
        self.batch_size = batch_size
        self.seeds = seeds
        self.memory_stats = memory_stats
        self._owns_pool = pool is None
        self.pool = ThreadPool(num_threads, set_affinity) if pool is None else pool
        self.buffers = BufferPool()
        keep_freed_memory()
        _LIVE_EXECUTORS.add(self)
        self.stats = {op.name: OpStats(op.device.upper()) for op in self.ops}
        self._stats_lock = threading.Lock()
        self._requested = requested
        self._plan = make_plan(self.ops, self.kernels)
        self._needed = externally_needed(self._plan, self.ops, self.outputs)
        self._overlap_at = overlap_position(self._plan)
        self._overlapped: _Progress | None = None
        self.errors = errors
        policies = policies or {}
        self._skipping = {
            name
            for op in self.ops
            if policies.get(op.name) == "skip"
            for name in (op.name, op.error_name)
            if name is not None
        }
        if self._skipping:
            assert errors is not None
            # Replacements come from the readers' next batches: no iteration may start early.
            self._requested = None
            self._overlap_at = None
        self._sources_end = next(
            (p for p, s in enumerate(self._plan) if isinstance(s, Chain) or s.upstream()),
            len(self._plan),
        )

    def run_iteration(
        self,
        iteration: int,
        given: Mapping[Key, TensorListCPU] | None = None,
        size: int | None = None,
    ) -> IterationResult:
        """Run every operator once (continuing the iteration if it was started early).

        Args:
            iteration: the iteration number.
            given: values computed elsewhere (by an earlier stage) that operators read.
            size: the batch size of ``given``.

        Raises:
            EndOfData: an input callback ended the epoch.
            OperatorError: an operator failed.
        """
        progress = self._overlapped
        self._overlapped = None
        if progress is not None and progress.number != iteration:
            self._abandon(progress)
            progress = None
        if progress is None:
            progress = _Progress(iteration, self.batch_size if size is None else size)
            if given:
                progress.values.update(given)
                progress.sized = size is not None
        try:
            if progress.failure is not None:
                raise progress.failure
            if self._skipping:
                self._advance_skipping(progress)
            else:
                self._advance(progress)
        except BaseException:
            self.discard_overlapped()
            raise
        outputs = tuple(progress.values[(id(n.source), n.index)] for n in self.outputs)
        return IterationResult(outputs, progress.reader_states)

    def discard_overlapped(self) -> None:
        """Drop the next iteration's work started early, waiting for samples under way."""
        progress, self._overlapped = self._overlapped, None
        if progress is not None:
            self._abandon(progress)

    def _abandon(self, progress: _Progress) -> None:
        if progress.running is not None:
            self.pool.cancel(progress.running[1])

    def _advance(self, progress: _Progress, until_pooled: bool = False) -> None:
        """Run the plan's remaining steps; with ``until_pooled``, stop once a chain's samples
        are queued on the pool."""
        while progress.position < len(self._plan):
            step = self._plan[progress.position]
            if progress.running is not None:
                self._finish_chain(progress)
            elif isinstance(step, Chain):
                run = ChainRun(
                    step,
                    progress.values,
                    progress.number,
                    progress.size,
                    self.seeds,
                    self.buffers,
                )
                process = guard(run.process, self._skipping) if self._skipping else run.process
                if step.serial:
                    per_sample = [process(i) for i in range(run.size)]
                    if self._skipping:
                        check_samples(per_sample)
                    run.finish(per_sample, progress.values, self._needed, self._record)
                    progress.position += 1
                    continue
                progress.running = (run, self.pool.open(process, run.size))
                if until_pooled:
                    return
            else:
                self._run_source_or_batch_op(step, progress)
                progress.position += 1

    def _finish_chain(self, progress: _Progress) -> None:
        assert progress.running is not None
        run, job = progress.running
        poll = None
        if progress.position == self._overlap_at and self._requested is not None:
            poll = self._overlap_poller(progress.number + 1)
        try:
            per_sample = self.pool.join(job, poll)
        finally:
            progress.running = None
        if self._skipping:
            check_samples(per_sample)
        run.finish(per_sample, progress.values, self._needed, self._record)
        progress.position += 1

    def _overlap_poller(self, number: int) -> Callable[[], None]:
        """A poll that starts iteration ``number`` once it is requested (at most once)."""
        requested = self._requested
        assert requested is not None

        def poll() -> None:
            if self._overlapped is None and requested(number):
                progress = _Progress(number, self.batch_size)
                try:
                    self._advance(progress, until_pooled=True)
                except Exception as exc:
                    progress.failure = exc
                self._overlapped = progress

        return poll

    def _run_source_or_batch_op(self, op: OpNode, progress: _Progress) -> None:
        kernel = self.kernels[id(op)]
        outs = self._run_batch_op(op, kernel, progress.values, progress.number, progress.size)
        for index, tl in enumerate(outs):
            progress.values[(id(op), index)] = tl
        if not op.upstream() and outs:
            _check_output_sizes(op, outs, progress.number)
            if not progress.sized:
                progress.size, progress.sized = len(outs[0]), True
            elif len(outs[0]) != progress.size:
                raise OperatorError(
                    f"Batch size clash: this source produced {len(outs[0])} samples, an "
                    f"earlier one {progress.size}",
                    operator=op.name,
                    iteration=progress.number,
                )
        if kernel.is_reader:
            progress.reader_states[op.name] = kernel.state_dict()  # type: ignore[attr-defined]
            if self._skipping:
                self._take_skipped(kernel)

    def _advance_skipping(self, progress: _Progress) -> None:
        """:meth:`_advance`, replacing the samples that fail in operators that skip them by the
        readers' next samples and running the non-source steps again, until none fails."""
        while True:
            try:
                self._advance(progress)
                return
            except SampleFailures as failures:
                errors = failures.errors
            except OperatorError as exc:
                skippable = exc.operator in self._skipping and exc.sample_index is not None
                if not skippable or progress.position < self._sources_end:
                    raise
                errors = [exc]
            self._replace(progress, errors)

    def _replace(self, progress: _Progress, errors: list[OperatorError]) -> None:
        """Record the failed samples, put the readers' next samples in their places and rewind
        ``progress`` to the first step after the sources."""
        assert self.errors is not None
        errors = sorted(errors, key=lambda e: e.sample_index or 0)
        self.errors.record(SkippedSample.from_error(e) for e in errors)
        indices = sorted({e.sample_index for e in errors if e.sample_index is not None})
        sources = self._plan[: self._sources_end]
        for op in sources:
            kernel = self.kernels[id(op)]
            if not kernel.is_reader:
                continue
            fresh = kernel.replacement(len(indices), progress.number)  # type: ignore[attr-defined]
            for index, tl in enumerate(fresh):
                key = (id(op), index)
                progress.values[key] = substitute(progress.values[key], indices, tl)
            progress.reader_states[op.name] = kernel.state_dict()  # type: ignore[attr-defined]
            self._take_skipped(kernel)
        keep = {(id(op), i) for op in sources for i in range(len(op.outputs))}  # type: ignore[union-attr]
        progress.values = {k: v for k, v in progress.values.items() if k in keep}
        progress.position = self._sources_end

    def _take_skipped(self, reader: Kernel) -> None:
        """Record the samples that ``reader`` failed to load and replaced itself."""
        assert self.errors is not None
        self.errors.record(reader.take_skipped())  # type: ignore[attr-defined]

    def _run_batch_op(
        self,
        op: OpNode,
        kernel: Kernel,
        values: dict[Key, TensorListCPU],
        iteration: int,
        current_size: int,
    ) -> list[TensorListCPU]:
        inputs = [values[(id(n.source), n.index)] for n in op.inputs]
        arg_inputs = {k: values[(id(n.source), n.index)] for k, n in op.arg_inputs.items()}
        # A batch's size comes from what the operator reads (a branch of a conditional reads
        # fewer samples than the pipeline's batch); only sources take the iteration's size.
        first = inputs[0] if inputs else next(iter(arg_inputs.values()), None)
        size = len(first) if first is not None else current_size
        batch = Batch(inputs, arg_inputs, iteration, size, self.seeds[op.name], self.pool.map)
        start = time.perf_counter()
        try:
            outs = list(kernel.run(batch))
        except StopIteration as stop:
            if op.upstream():
                raise OperatorError(
                    "StopIteration from an operator with inputs: only a source (an operator "
                    "without inputs, such as external_source) can end the epoch",
                    operator=op.name,
                    iteration=iteration,
                ) from stop
            raise EndOfData(op.name) from stop
        except OperatorError:
            raise
        except Exception as exc:
            raise OperatorError(
                f"{type(exc).__name__}: {exc}", operator=op.name, iteration=iteration
            ) from exc
        expected = len(op.outputs)
        if len(outs) != expected:
            raise OperatorError(
                f"kernel returned {len(outs)} outputs, the schema declares {expected}",
                operator=op.name,
                iteration=iteration,
            )
        self._record(op, time.perf_counter() - start, outs)
        return outs

    def _record(self, op: OpNode, elapsed: float, outs: Sequence[TensorListCPU]) -> None:
        with self._stats_lock:
            stats = self.stats[op.name]
            stats.runs += 1
            stats.time_s += elapsed
            if self.memory_stats:
                sizes = [tl.nbytes() for tl in outs]
                stats.real_memory_size = sizes
                previous = stats.max_real_memory_size or [0] * len(sizes)
                stats.max_real_memory_size = [
                    max(a, b) for a, b in zip(previous, sizes, strict=True)
                ]

    def statistics(self) -> dict[str, Any]:
        """Each operator's counters by name, and ``"errors"``: the skipped samples (when some
        operator skips them)."""
        stats: dict[str, Any] = {name: s.as_dict() for name, s in self.stats.items()}
        if self.errors is not None:
            stats["errors"] = self.errors.as_list()
        return stats

    def kernel_of(self, op: OpNode) -> Kernel:
        """The kernel that runs ``op``."""
        return self.kernels[id(op)]

    def abort(self) -> None:
        """Stop starting per-sample work (the samples running finish) and wake the kernels that
        wait for input (:meth:`Kernel.abort`); the iteration under way then fails. For a
        pipeline that is shutting down."""
        self.pool.abort()
        for kernel in self.kernels.values():
            kernel.abort()

    def close(self) -> None:
        """Drop the work started early, stop the thread pool and close every kernel."""
        self.discard_overlapped()
        if self._owns_pool:
            self.pool.close()
        for kernel in self.kernels.values():
            kernel.close()


def _check_output_sizes(op: OpNode, outs: Sequence[Any], iteration: int) -> None:
    """A source's outputs (e.g. an ``external_source`` with ``num_outputs``) are one batch."""
    first = len(outs[0])
    for index, tl in enumerate(outs[1:], 1):
        if len(tl) != first:
            raise OperatorError(
                "External source must return outputs with consistent batch size. Output "
                f"{index} has batch size = {len(tl)}, previous batch size = {first}",
                operator=op.name,
                iteration=iteration,
            )
