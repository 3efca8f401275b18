"""The executor a pipeline builds: one :class:`~feedline.core.execution.executor.Executor` for a
CPU-only graph; for a graph with ``mixed``/``gpu`` operators, a CPU stage and a device stage on
the pipeline's own stream (:class:`~feedline.core.execution.stages.StagedExecutor`).

Kept apart from :mod:`.pipeline` so that a CPU-only pipeline takes exactly the path it took
before GPU stages existed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from feedline.core.execution.device import DeviceStream, open_stream
from feedline.core.execution.executor import Executor
from feedline.core.execution.stages import StagedExecutor
from feedline.core.graph import DataNode, OpNode, split_stages
from feedline.core.kernel import Kernel

__all__ = ["ExecutorSettings", "StagePlan", "make_executor", "plan_stages"]


@dataclass(frozen=True)
class StagePlan:
    """The stages of a built graph: the device stage's operators (by ``id``) and the stream
    (None for a CPU-only graph)."""

    device_ops: frozenset[int]
    stream: DeviceStream | None

    def stream_of(self, op: OpNode) -> DeviceStream | None:
        """The stream a kernel of ``op`` gets in its context (None for CPU operators of the CPU
        stage)."""
        return self.stream if op.device != "cpu" or id(op) in self.device_ops else None


@dataclass(frozen=True)
class ExecutorSettings:
    """The pipeline parameters an executor is built with."""

    batch_size: int
    num_threads: int
    seeds: dict[str, int]
    memory_stats: bool
    set_affinity: bool
    requested: Callable[[int], bool]
    cpu_size: int
    gpu_size: int
    background: bool


def plan_stages(ops: Sequence[OpNode], device_id: int | None, priority: int = 0) -> StagePlan:
    """Split ``ops`` into stages; open the stream (of CUDA ``priority``) on ``device_id`` if
    there is a device stage.

    Raises:
        RuntimeError: the device stage needs a GPU that cannot be used (no CuPy, no device).
    """
    _, device = split_stages(ops)
    if not device and all(op.device == "cpu" for op in ops):
        return StagePlan(frozenset(), None)
    assert device_id is not None  # check_placement refused GPU operators without a device_id
    return StagePlan(frozenset(id(op) for op in device), open_stream(device_id, priority))


def _executor(
    s: ExecutorSettings,
    ops: Sequence[OpNode],
    kernels: Sequence[Kernel],
    outputs: Sequence[DataNode],
    **options: Any,
) -> Executor:
    """An executor of ``ops`` with the pipeline's settings (``options``: its keyword ones)."""
    return Executor(
        ops,
        kernels,
        outputs,
        s.batch_size,
        s.num_threads,
        s.seeds,
        s.memory_stats,
        s.set_affinity,
        **options,
    )


def make_executor(
    ops: Sequence[OpNode],
    kernels: Sequence[Kernel],
    outputs: Sequence[DataNode],
    plan: StagePlan,
    settings: ExecutorSettings,
    **error_options: Any,
) -> Executor | StagedExecutor:
    """The executor of the built ``ops`` (see the module docstring). ``error_options`` (the
    error policies and log) go to the executor that runs the readers: the only one, or the CPU
    stage's (the device stage's operators raise)."""
    s = settings
    if plan.stream is None:
        return _executor(s, ops, kernels, outputs, requested=s.requested, **error_options)
    kernel_of = {id(op): k for op, k in zip(ops, kernels, strict=True)}
    cpu_ops = [op for op in ops if id(op) not in plan.device_ops]
    device_ops = [op for op in ops if id(op) in plan.device_ops]
    boundary: dict[tuple[int, int], DataNode] = {}
    for node in [*(n for op in device_ops for n in op.upstream()), *outputs]:
        if id(node.source) not in plan.device_ops:
            boundary.setdefault((id(node.source), node.index), node)
    cpu_kernels = [kernel_of[id(op)] for op in cpu_ops]
    cpu = _executor(
        s, cpu_ops, cpu_kernels, list(boundary.values()), requested=s.requested, **error_options
    )
    device_kernels = [kernel_of[id(op)] for op in device_ops]
    device = _executor(s, device_ops, device_kernels, outputs, pool=cpu.pool)
    return StagedExecutor(
        cpu, device, list(boundary.values()), plan.stream, s.cpu_size, s.gpu_size, s.background
    )
