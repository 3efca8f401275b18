"""Runs a built graph, one iteration at a time. Knows nothing of plugins.

Per-sample CPU work runs on a pool of ``num_threads`` threads; consecutive per-sample operators
(:class:`~feedline.core.kernel.SampleKernel`) form a *chain* that runs back to back on one sample
in one task, so a batch meets one barrier per chain rather than one per operator. Batch kernels
(readers, vectorised arithmetic…) run on whole batches. Any failure is re-raised as an
:class:`~feedline.core.errors.OperatorError` naming the operator, iteration, sample and source.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from feedline.core.buffers import BufferPool
from feedline.core.errors import OperatorError
from feedline.core.graph import DataNode, OpNode
from feedline.core.kernel import Batch, BatchArena, Kernel, SampleContext, SampleKernel
from feedline.core.tensor import TensorListCPU

__all__ = ["EndOfData", "Executor", "IterationResult", "OpStats"]

T = TypeVar("T")
_VEC_KINDS = {"int_vec", "float_vec", "str_vec", "bool_vec"}
_INT_KINDS = {"int": int, "float": float, "bool": bool}


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


def _sample_arg(value: np.ndarray, kind: str) -> Any:
    if kind in _VEC_KINDS:
        return tuple(np.asarray(value).ravel().tolist())
    if kind in _INT_KINDS:
        array = np.asarray(value)
        if array.size != 1:
            raise ValueError(f"expected a scalar per sample, got shape {array.shape}")
        return _INT_KINDS[kind](array.reshape(()).item())
    return value


def _consistent(samples: list[Any], op: OpNode, index: int, iteration: int) -> list[np.ndarray]:
    """The samples as arrays (NumPy scalars become 0-D arrays).

    Raises:
        OperatorError: a sample is not an array, or the samples disagree on dtype or ndim.
    """
    samples = [np.asarray(s) if isinstance(s, np.generic) else s for s in samples]
    if not samples:
        return samples
    first = samples[0]
    for position, sample in enumerate(samples):
        if not isinstance(sample, np.ndarray):
            raise OperatorError(
                f"output {index} of sample {position} is a {type(sample).__name__}, not an array",
                operator=op.name,
                iteration=iteration,
                sample_index=position,
            )
        if sample.dtype != first.dtype or sample.ndim != first.ndim:
            raise OperatorError(
                f"output {index}: sample {position} is {sample.ndim}-D {sample.dtype}, sample 0 "
                f"is {first.ndim}-D {first.dtype}; all samples of a batch must agree",
                operator=op.name,
                iteration=iteration,
                sample_index=position,
            )
    return samples


class _Pool:
    """Maps index functions over a thread pool with dynamic load balancing."""

    def __init__(self, num_threads: int, set_affinity: bool = False) -> None:
        self.num_threads = num_threads
        self._cores = itertools.count(1)
        self._executor = (
            ThreadPoolExecutor(
                num_threads - 1,
                thread_name_prefix="feedline-worker",
                initializer=self._pin if set_affinity else None,
            )
            if num_threads > 1
            else None
        )

    def _pin(self) -> None:
        """Pin the calling worker thread to one core (round robin over the allowed cores)."""
        allowed = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {allowed[next(self._cores) % len(allowed)]})

    def map(self, fn: Callable[[int], T], n: int) -> list[T]:
        results: list[Any] = [None] * n
        if self._executor is None or n <= 1:
            for i in range(n):
                results[i] = fn(i)
            return results
        counter = itertools.count()
        failure: list[BaseException] = []

        def worker() -> None:
            while not failure:
                i = next(counter)
                if i >= n:
                    return
                try:
                    results[i] = fn(i)
                except BaseException as exc:
                    failure.append(exc)
                    return

        helpers = min(self.num_threads - 1, n - 1)
        futures = [self._executor.submit(worker) for _ in range(helpers)]
        worker()
        for future in futures:
            future.result()
        if failure:
            raise failure[0]
        return results

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)


class _Chain:
    """Consecutive per-sample operators run together on each sample (on the pool, or one
    sample after another on the calling thread when ``serial``)."""

    def __init__(self, steps: list[tuple[OpNode, SampleKernel]], serial: bool = False) -> None:
        self.steps = steps
        self.members = {id(op) for op, _ in steps}
        self.serial = serial


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
    ) -> None:
        self.ops = list(ops)
        self.kernels = {id(op): k for op, k in zip(ops, kernels, strict=True)}
        self.outputs = list(outputs)
        self.batch_size = batch_size
        self.seeds = seeds
        self.memory_stats = memory_stats
        self.pool = _Pool(num_threads, set_affinity)
        self.buffers = BufferPool()
        self.stats = {op.name: OpStats(op.device.upper()) for op in self.ops}
        self._stats_lock = threading.Lock()
        self._plan = self._make_plan()
        self._needed = self._externally_needed()

    def _make_plan(self) -> list[OpNode | _Chain]:
        plan: list[OpNode | _Chain] = []
        for op in self.ops:
            kernel = self.kernels[id(op)]
            if isinstance(kernel, SampleKernel) and op.device == "cpu":
                last = plan[-1] if plan and isinstance(plan[-1], _Chain) else None
                if kernel.serial:
                    # Ahead of the open chain when it does not read from it, which keeps that
                    # chain whole (e.g. decode → crop → [coin_flip] → crop_mirror_normalize).
                    ahead = (
                        last is not None
                        and not last.serial
                        and all(id(n.source) not in last.members for n in op.upstream())
                    )
                    position = len(plan) - 1 if ahead else len(plan)
                    plan.insert(position, _Chain([(op, kernel)], serial=True))
                elif last is not None and not last.serial:
                    last.steps.append((op, kernel))
                    last.members.add(id(op))
                else:
                    plan.append(_Chain([(op, kernel)]))
            else:
                plan.append(op)
        return plan

    def _externally_needed(self) -> set[tuple[int, int]]:
        """Chain outputs that must become TensorLists (read outside their chain or outputs)."""
        chain_of = {}
        for step in self._plan:
            if isinstance(step, _Chain):
                for op, _ in step.steps:
                    chain_of[id(op)] = step
        needed = {(id(n.source), n.index) for n in self.outputs}
        for op in self.ops:
            for node in op.inputs:
                src_chain = chain_of.get(id(node.source))
                if src_chain is None or id(op) not in src_chain.members:
                    needed.add((id(node.source), node.index))
            for node in op.arg_inputs.values():
                needed.add((id(node.source), node.index))
        return needed

    def run_iteration(self, iteration: int) -> IterationResult:
        """Run every operator once.

        Raises:
            EndOfData: an input callback ended the epoch.
            OperatorError: an operator failed.
        """
        values: dict[tuple[int, int], TensorListCPU] = {}
        current_size = self.batch_size
        sized = False
        reader_states: dict[str, Any] = {}
        for step in self._plan:
            if isinstance(step, _Chain):
                self._run_chain(step, values, iteration, current_size)
                continue
            kernel = self.kernels[id(step)]
            outs = self._run_batch_op(step, kernel, values, iteration, current_size)
            for index, tl in enumerate(outs):
                values[(id(step), index)] = tl
            if not step.inputs and outs:
                if not sized:
                    current_size, sized = len(outs[0]), True
                elif len(outs[0]) != current_size:
                    raise OperatorError(
                        f"Batch size clash: this source produced {len(outs[0])} samples, an "
                        f"earlier one {current_size}",
                        operator=step.name,
                        iteration=iteration,
                    )
            if kernel.is_reader:
                reader_states[step.name] = kernel.state_dict()  # type: ignore[attr-defined]
        outputs = tuple(values[(id(n.source), n.index)] for n in self.outputs)
        return IterationResult(outputs, reader_states)

    def _run_batch_op(
        self,
        op: OpNode,
        kernel: Kernel,
        values: dict[tuple[int, int], TensorListCPU],
        iteration: int,
        current_size: int,
    ) -> list[TensorListCPU]:
        inputs = [values[(id(n.source), n.index)] for n in op.inputs]
        arg_inputs = {k: values[(id(n.source), n.index)] for k, n in op.arg_inputs.items()}
        size = len(inputs[0]) if inputs else current_size
        batch = Batch(inputs, arg_inputs, iteration, size, self.seeds[op.name], self.pool.map)
        start = time.perf_counter()
        try:
            outs = list(kernel.run(batch))
        except StopIteration as stop:
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

    def _run_chain(
        self,
        chain: _Chain,
        values: dict[tuple[int, int], TensorListCPU],
        iteration: int,
        current_size: int,
    ) -> None:
        steps = chain.steps
        members = chain.members
        sizes = {
            len(values[(id(n.source), n.index)])
            for op, _ in steps
            for n in op.upstream()
            if id(n.source) not in members
        }
        if len(sizes) > 1:
            names = ", ".join(op.name for op, _ in steps)
            raise OperatorError(
                f"inputs have different batch sizes {sorted(sizes)}",
                operator=names,
                iteration=iteration,
            )
        n = sizes.pop() if sizes else current_size
        external: dict[tuple[int, int], list[np.ndarray]] = {}
        sources: dict[tuple[int, int], list[str]] = {}
        layouts: dict[tuple[int, int], str] = {}
        for op, kernel in steps:
            for node in op.upstream():
                key = (id(node.source), node.index)
                if id(node.source) not in members and key not in external:
                    tl = values[key]
                    external[key] = tl.samples()
                    sources[key] = tl.source_infos()
                    layouts[key] = tl.layout()
            in_layouts = tuple(layouts[(id(x.source), x.index)] for x in op.inputs)
            for index, layout in enumerate(kernel.output_layouts(in_layouts)):
                layouts[(id(op), index)] = layout
        plan = [
            (
                op,
                kernel,
                [(id(x.source), x.index) for x in op.inputs],
                [
                    (k, (id(x.source), x.index), op.schema.arg_map[k].kind)
                    for k, x in op.arg_inputs.items()
                ],
                tuple(layouts[(id(x.source), x.index)] for x in op.inputs),
                self.seeds[op.name],
                len(op.outputs),
            )
            for op, kernel in steps
        ]
        timings = [0.0] * len(steps)
        arenas = {
            id(op): [BatchArena(n, self.buffers) for _ in op.outputs] for op, _kernel in steps
        }

        def process(i: int) -> dict[tuple[int, int], np.ndarray]:
            local: dict[tuple[int, int], np.ndarray] = {}
            info: dict[int, str] = {}
            for position, (op, kernel, in_keys, arg_keys, in_layouts, seed, n_out) in enumerate(
                plan
            ):
                ins = tuple(local[k] if k in local else external[k][i] for k in in_keys)
                source = ""
                if in_keys:
                    first = in_keys[0]
                    source = info.get(first[0], "") if first in local else sources[first][i]
                try:
                    args = kernel.args
                    if arg_keys:
                        args = dict(args)
                        for name, key, kind in arg_keys:
                            value = local[key] if key in local else external[key][i]
                            args[name] = _sample_arg(value, kind)
                    start = time.perf_counter()
                    context = SampleContext(i, iteration, source, in_layouts, seed, arenas[id(op)])
                    result = kernel.run_sample(ins, args, context)
                    context.release()
                    timings[position] += time.perf_counter() - start
                except Exception as exc:
                    raise OperatorError(
                        f"{type(exc).__name__}: {exc}",
                        operator=op.name,
                        iteration=iteration,
                        sample_index=i,
                        source_info=source,
                    ) from exc
                outs = result if isinstance(result, tuple) else (result,)
                if len(outs) != n_out:
                    raise OperatorError(
                        f"kernel returned {len(outs)} outputs, the schema declares {n_out}",
                        operator=op.name,
                        iteration=iteration,
                        sample_index=i,
                    )
                for index, array in enumerate(outs):
                    local[(id(op), index)] = array
                info[id(op)] = source
            return local

        per_sample = [process(i) for i in range(n)] if chain.serial else self.pool.map(process, n)
        chain_infos: dict[int, list[str] | None] = {}
        for position, (op, _kernel) in enumerate(steps):
            first_key = (id(op.inputs[0].source), op.inputs[0].index) if op.inputs else None
            infos = None
            if first_key is not None:
                infos = sources.get(first_key, chain_infos.get(first_key[0]))
            chain_infos[id(op)] = infos
            outs = []
            for index in range(len(op.outputs)):
                key = (id(op), index)
                if key not in self._needed:
                    continue
                samples = _consistent([s[key] for s in per_sample], op, index, iteration)
                dense = arenas[id(op)][index].dense(samples)
                tl = (
                    TensorListCPU.from_dense(dense, layouts[key], infos)
                    if dense is not None
                    else TensorListCPU.from_samples(samples, layouts[key], infos)
                )
                values[key] = tl
                outs.append(tl)
            self._record(op, timings[position], outs)

    def kernel_of(self, op: OpNode) -> Kernel:
        """The kernel that runs ``op``."""
        return self.kernels[id(op)]

    def close(self) -> None:
        """Stop the thread pool and close every kernel."""
        self.pool.close()
        for kernel in self.kernels.values():
            kernel.close()
