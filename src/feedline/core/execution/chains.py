"""Chains: consecutive per-sample operators that run back to back on one sample in one task.

A batch meets one barrier per chain rather than one per operator. :class:`ChainRun` is one
iteration of a chain: it gathers the chain's inputs, runs every step on sample ``i`` in
:meth:`ChainRun.process` (on the thread pool, or one sample after another for a serial chain),
and turns the per-sample results into the TensorLists that the rest of the graph reads.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.buffers import BufferPool, Slab
from feedline.core.errors import OperatorError, OperatorValueError
from feedline.core.graph import OpNode
from feedline.core.kernel import BatchArena, SampleContext, SampleKernel, set_active_source
from feedline.core.tensor import TensorListCPU

__all__ = ["Chain", "ChainRun", "sample_arg"]

Key = tuple[int, int]
_VEC_KINDS = {"int_vec", "float_vec", "str_vec", "bool_vec"}
_INT_KINDS = {"int": int, "float": float, "bool": bool}


def sample_arg(value: np.ndarray, kind: str) -> Any:
    """One sample's value of a per-sample argument as kernels see it: vectors as tuples,
    scalars as Python numbers (``kind`` is the argument's schema kind).

    Raises:
        ValueError: a scalar argument got more than one value.
    """
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


class Chain:
    """Consecutive per-sample operators run together on each sample (on the pool, or one
    sample after another on the calling thread when ``serial``)."""

    def __init__(self, steps: list[tuple[OpNode, SampleKernel]], serial: bool = False) -> None:
        self.steps = steps
        self.members = {id(op) for op, _ in steps}
        self.serial = serial
        self.ragged_bytes: dict[Key, int] = {}
        """The room the samples of each ragged output took in the latest batch (for the
        output arenas of the next ones; see :class:`~feedline.core.kernel.BatchArena`)."""

    def append(self, op: OpNode, kernel: SampleKernel) -> None:
        """Add ``op`` as the chain's last step."""
        self.steps.append((op, kernel))
        self.members.add(id(op))


class _Step:
    """One operator of a :class:`ChainRun`, with what each of its samples needs."""

    __slots__ = (
        "arenas",
        "arg_keys",
        "arg_layouts",
        "in_keys",
        "in_layouts",
        "kernel",
        "op",
        "op_id",
        "out_keys",
        "seed",
        "timings",
    )

    def __init__(
        self,
        op: OpNode,
        kernel: SampleKernel,
        in_keys: list[Key],
        arg_keys: list[tuple[str, Key, str]],
        in_layouts: tuple[str, ...],
        arg_layouts: dict[str, str],
        seed: int,
        arenas: list[BatchArena],
        size: int,
    ) -> None:
        self.op, self.kernel, self.op_id = op, kernel, id(op)
        self.in_keys, self.arg_keys = in_keys, arg_keys
        self.in_layouts, self.arg_layouts = in_layouts, arg_layouts
        self.seed, self.arenas = seed, arenas
        self.out_keys = [(id(op), index) for index in range(len(op.outputs))]
        self.timings = [0.0] * size
        """Seconds per sample: each entry has one writer, so threads never race."""


class ChainRun:
    """One iteration of a chain, from its inputs in ``values``.

    Args:
        chain: the chain.
        values: the TensorLists computed so far in this iteration.
        iteration: the iteration number.
        default_size: the batch size when the chain reads nothing from outside.
        seeds: each operator's seed by name.
        buffers: where the chain's batch outputs are recycled from.

    Raises:
        OperatorError: the chain's inputs have different batch sizes.
    """

    def __init__(
        self,
        chain: Chain,
        values: dict[Key, TensorListCPU],
        iteration: int,
        default_size: int,
        seeds: dict[str, int],
        buffers: BufferPool,
    ) -> None:
        self.chain = chain
        self.iteration = iteration
        steps, members = chain.steps, chain.members
        sizes = {
            len(values[(id(n.source), n.index)])
            for op, _ in steps
            for n in op.upstream()
            if id(n.source) not in members
        }
        if len(sizes) > 1:
            raise OperatorError(
                f"inputs have different batch sizes {sorted(sizes)}",
                operator=", ".join(op.name for op, _ in steps),
                iteration=iteration,
            )
        self.size = sizes.pop() if sizes else default_size
        self.external: dict[Key, list[np.ndarray]] = {}
        self.sources: dict[Key, list[str]] = {}
        self.layouts: dict[Key, str] = {}
        for op, kernel in steps:
            for node in op.upstream():
                key = (id(node.source), node.index)
                if id(node.source) not in members and key not in self.external:
                    tl = values[key]
                    self.external[key] = tl.samples()
                    self.sources[key] = tl.source_infos()
                    self.layouts[key] = tl.layout()
            in_layouts = tuple(self.layouts[(id(x.source), x.index)] for x in op.inputs)
            for index, layout in enumerate(kernel.output_layouts(in_layouts)):
                self.layouts[(id(op), index)] = layout
        ragged = chain.ragged_bytes
        self.plan = [
            _Step(
                op,
                kernel,
                [(id(x.source), x.index) for x in op.inputs],
                [
                    (k, (id(x.source), x.index), op.schema.arg_map[k].kind)
                    for k, x in op.arg_inputs.items()
                ],
                tuple(self.layouts[(id(x.source), x.index)] for x in op.inputs),
                {k: self.layouts[(id(x.source), x.index)] for k, x in op.arg_inputs.items()},
                seeds[op.name],
                [
                    BatchArena(self.size, buffers, ragged.get((id(op), index), 0))
                    for index in range(len(op.outputs))
                ],
                self.size,
            )
            for op, kernel in steps
        ]
        self.arenas = {step.op_id: step.arenas for step in self.plan}

    def process(self, i: int) -> dict[Key, np.ndarray]:
        """Run every step of the chain on sample ``i``; its outputs by ``(op id, index)``."""
        external, sources, iteration = self.external, self.sources, self.iteration
        local: dict[Key, np.ndarray] = {}
        info: dict[int, str] = {}
        clock = time.perf_counter
        for step in self.plan:
            in_keys = step.in_keys
            ins = tuple([local[k] if k in local else external[k][i] for k in in_keys])
            source = ""
            if in_keys:
                first = in_keys[0]
                source = info.get(first[0], "") if first in local else sources[first][i]
            kernel = step.kernel
            try:
                args = kernel.args
                if step.arg_keys:
                    args = self._sample_args(step, args, local, i)
                start = clock()
                context = SampleContext(
                    i, iteration, source, step.in_layouts, step.seed, step.arenas, step.arg_layouts
                )
                set_active_source(source)
                result = kernel.run_sample(ins, args, context)
                context.release()
                step.timings[i] = clock() - start
            except Exception as exc:
                error = OperatorValueError if isinstance(exc, ValueError) else OperatorError
                raise error(
                    f"{type(exc).__name__}: {exc}",
                    operator=step.op.error_name or step.op.name,
                    iteration=iteration,
                    sample_index=i,
                    source_info=source,
                ) from exc
            out_keys = step.out_keys
            if isinstance(result, tuple):
                if len(result) != len(out_keys):
                    self._wrong_count(step, len(result), i)
                for key, array in zip(out_keys, result, strict=False):
                    local[key] = array
            else:
                if len(out_keys) != 1:
                    self._wrong_count(step, 1, i)
                local[out_keys[0]] = result
            info[step.op_id] = source
        return local

    def _sample_args(
        self, step: _Step, static: Mapping[str, Any], local: dict[Key, Any], i: int
    ) -> dict[str, Any]:
        """The arguments of sample ``i`` of ``step``: the static ones and its per-sample ones."""
        args = dict(static)
        external = self.external
        for name, key, kind in step.arg_keys:
            value = local[key] if key in local else external[key][i]
            if step.arg_layouts[name].startswith("F"):  # one value per frame
                args[name] = tuple(sample_arg(frame, kind) for frame in value)
            else:
                args[name] = sample_arg(value, kind)
        return args

    def _wrong_count(self, step: _Step, count: int, i: int) -> None:
        raise OperatorError(
            f"kernel returned {count} outputs, the schema declares {len(step.out_keys)}",
            operator=step.op.name,
            iteration=self.iteration,
            sample_index=i,
        )

    def finish(
        self,
        per_sample: Sequence[dict[Key, np.ndarray]],
        values: dict[Key, TensorListCPU],
        needed: set[Key],
        record: Callable[[OpNode, float, list[TensorListCPU]], None],
    ) -> None:
        """Store the outputs in ``needed`` as TensorLists in ``values`` and ``record`` each
        step's time and outputs.

        Raises:
            OperatorError: an output's samples are not arrays of one dtype and ndim.
        """
        chain_infos: dict[int, list[str] | None] = {}
        for position, (op, kernel) in enumerate(self.chain.steps):
            first_key = (id(op.inputs[0].source), op.inputs[0].index) if op.inputs else None
            infos = None
            if first_key is not None:
                infos = self.sources.get(first_key, chain_infos.get(first_key[0]))
            chain_infos[id(op)] = infos
            outs = []
            for index in range(len(op.outputs)):
                key = (id(op), index)
                if key not in needed:
                    self._remember_room(key, [s[key] for s in per_sample], None)
                    continue
                samples = _consistent([s[key] for s in per_sample], op, index, self.iteration)
                dense = self.arenas[id(op)][index].dense(samples)
                self._remember_room(key, samples, dense)
                layout = self.layouts[key]
                if not layout and samples and isinstance(kernel, SampleKernel):
                    layout = kernel.implied_layouts.get(samples[0].ndim, "")
                tl = (
                    TensorListCPU.from_dense(dense, layout, infos)
                    if dense is not None
                    else TensorListCPU.from_samples(samples, layout, infos)
                )
                values[key] = tl
                outs.append(tl)
            record(op, math.fsum(self.plan[position].timings), outs)

    def _remember_room(self, key: Key, samples: list[Any], dense: np.ndarray | None) -> None:
        """Note how much room the output's samples take when they differ in shape (for the
        next batches' arenas), or that they need none (one shape)."""
        first = samples[0] if samples else None
        uniform = dense is not None or all(
            isinstance(s, np.ndarray) and s.shape == first.shape for s in samples
        )
        if uniform:
            self.chain.ragged_bytes.pop(key, None)
        else:
            self.chain.ragged_bytes[key] = sum(
                Slab.room(s.shape, s.dtype) for s in samples if isinstance(s, np.ndarray)
            )
