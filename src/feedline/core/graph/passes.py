"""Build-time work on a defined graph: pruning, common subgraph elimination, the registered
graph passes, ordering checks.

This is where a graph rewrite hooks in: a plugin registers a pass with
:meth:`Registry.add_graph_pass <feedline.core.registry.Registry.add_graph_pass>` (the CPU
plugin's decoder fusion does), and :func:`prepare` runs every registered pass after pruning.
"""

from __future__ import annotations

from collections.abc import Sequence

from feedline.core.errors import PipelineError
from feedline.core.graph.cse import eliminate_common_subgraphs
from feedline.core.graph.nodes import DataNode, Graph, OpNode
from feedline.core.registry import Registry, load_object

__all__ = [
    "check_membership",
    "check_placement",
    "ordered_ops",
    "prepare",
    "prune",
    "split_stages",
    "used_outputs",
]


def prune(ops: Sequence[OpNode], outputs: Sequence[DataNode]) -> list[OpNode]:
    """The graph of ``outputs``: the operators they are computed from plus the sinks among
    ``ops`` (``preserve``/``no_prune``) and what those read, in creation order (a topological
    order). Operators outside ``ops`` (detached, or of another pipeline) that an output needs
    are collected too, as DALI collects its graph from the outputs."""
    keep: dict[int, OpNode] = {}
    stack = [node.source for node in outputs if node.source is not None]
    stack += [op for op in ops if op.preserve or op.schema.no_prune]
    while stack:
        op = stack.pop()
        if id(op) in keep:
            continue
        keep[id(op)] = op
        stack.extend(node.source for node in op.upstream() if node.source is not None)
    return sorted(keep.values(), key=lambda op: op.serial)


def used_outputs(ops: Sequence[OpNode], outputs: Sequence[DataNode]) -> dict[int, set[int]]:
    """Per operator (by ``id``), the indices of its outputs that the graph reads: the pipeline
    ``outputs`` and the inputs and argument inputs of ``ops``."""
    used: dict[int, set[int]] = {}
    for node in [*outputs, *(node for op in ops for node in op.upstream())]:
        if node.source is not None:
            used.setdefault(id(node.source), set()).add(node.index)
    return used


def check_membership(ops: Sequence[OpNode], graph: Graph, checkpointing: bool) -> None:
    """DALI's rules for operators that ``graph``'s pipeline did not define itself (detached, or
    defined in another pipeline): allowed, unless two operators of the collected graph share a
    name, or the pipeline takes checkpoints.

    Raises:
        RuntimeError: a name is used twice, or checkpointing meets a foreign operator.
    """
    by_name: dict[str, list[OpNode]] = {}
    for op in ops:
        by_name.setdefault(op.name, []).append(op)
    duplicate = {name: found for name, found in by_name.items() if len(found) > 1}
    if duplicate:
        message = (
            "The pipeline is invalid because it contains operators with non-unique names: "
            f"{sorted(duplicate)}"
        )
        if any(op.graph is not graph for found in duplicate.values() for op in found):
            message += (
                ". The likely cause is that the pipeline contains a subgraph instantiated while "
                "a different pipeline was set as the current pipeline (e.g. inside another "
                "pipeline's graph definition function)"
            )
        raise RuntimeError(message)
    foreign = [op.name for op in ops if op.graph is not graph]
    if checkpointing and foreign:
        raise RuntimeError(
            "The pipeline does not support checkpointing because it contains operator(s) that "
            f"were defined outside the pipeline scope: {foreign}. All operators should be "
            "defined while the pipeline is set as the current pipeline (as in a function "
            "decorated with @pipeline_def)"
        )


def ordered_ops(ops: Sequence[OpNode]) -> list[OpNode]:
    """``ops``, checked to be in topological order (each reads only operators before it)."""
    seen: set[int] = set()
    for op in ops:
        for node in op.upstream():
            if id(node.source) not in seen:
                raise ValueError(
                    f"operator {op.name!r} reads {node.name!r}, which is not computed before it"
                )
        seen.add(id(op))
    return list(ops)


def prepare(ops: Sequence[OpNode], outputs: Sequence[DataNode], registry: Registry) -> list[OpNode]:
    """The operators to build for ``outputs``: pruned, with repeated computations merged
    (:mod:`.cse`), rewritten by every graph pass registered in ``registry`` (in registration
    order), and checked to be in topological order."""
    kept = eliminate_common_subgraphs(prune(ops, outputs))
    for graph_pass, _owner in registry.graph_passes.values():
        kept = list(load_object(graph_pass)(kept, outputs))
    return ordered_ops(kept)


def check_placement(ops: Sequence[OpNode], device_id: int | None) -> None:
    """Check the devices of a graph about to be built.

    Raises:
        PipelineError: a GPU-side (``mixed``/``gpu``) operator in a CPU-only pipeline
            (``device_id=None``), or a CPU operator reading a GPU batch (needs ``.cpu()``).
    """
    for op in ops:
        if op.device in ("gpu", "mixed") and device_id is None:
            raise PipelineError(
                f"The pipeline requires a CUDA-capable GPU but operator {op.name!r} "
                f"({op.schema.name}) runs on {op.device} in a CPU-only pipeline "
                "(device_id=None); pass device_id or use device='cpu'"
            )
        if op.device in ("cpu", "mixed"):
            for node in op.upstream():
                if node.device == "gpu":
                    raise PipelineError(
                        f"{op.device} operator {op.name!r} ({op.schema.name}) reads "
                        f"{node.name!r}, which is on the GPU; insert .cpu() to copy it back"
                    )


def split_stages(ops: Sequence[OpNode]) -> tuple[list[OpNode], list[OpNode]]:
    """Split built operators into the CPU stage and the device stage (in order).

    The CPU stage is every source (an operator that reads nothing, whatever its device: an
    ``external_source(device="gpu")`` is fed on the CPU side) and every ``cpu`` operator that
    reads nothing produced on the GPU side; the device stage holds the other ``mixed`` and
    ``gpu`` operators and the CPU operators that read data copied back with ``.cpu()``, in graph
    order (a topological one, so cpu → mixed → gpu along every path). The device stage is empty
    for a CPU-only graph.
    """
    device_side: set[int] = set()
    for op in ops:
        upstream = op.upstream()
        if (op.device != "cpu" and upstream) or any(id(n.source) in device_side for n in upstream):
            device_side.add(id(op))
    cpu = [op for op in ops if id(op) not in device_side]
    device = [op for op in ops if id(op) in device_side]
    return cpu, device
