"""The executor's plan: the order in which an iteration runs the operators, and which of them
run back to back on each sample as a chain (:mod:`.chains`).

Sources come first (they read nothing, and only they can end the epoch, so no iteration runs
further operators in vain), then chains and batch operators in graph order. Consecutive
per-sample CPU operators of the same batch form one chain; a serial one (a kernel that must see
its samples in order) forms a chain of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from feedline.core.execution.chains import Chain, Key
from feedline.core.graph import DataNode, OpNode
from feedline.core.kernel import Kernel, SampleKernel

__all__ = ["Step", "externally_needed", "make_plan", "overlap_position"]

Step = OpNode | Chain
"""One step of a plan: a batch operator, or a chain of per-sample operators."""


def make_plan(ops: Sequence[OpNode], kernels: Mapping[int, Kernel]) -> list[Step]:
    """The steps of an iteration over ``ops`` (in topological order; ``kernels`` by ``id``).

    Among the sources, those fed from outside (``external_source``) come first: as in DALI,
    their batch sets the iteration's batch size (variable batch size), which the other sources
    (constants, generators) then produce.
    """

    def chained(op: OpNode) -> bool:
        return isinstance(kernels[id(op)], SampleKernel) and op.device == "cpu"

    sources = {id(op) for op in ops if not op.upstream() and not chained(op)}

    def rank(op: OpNode) -> tuple[bool, bool]:
        kernel = kernels[id(op)]
        fed = kernel.fetches_input or callable(getattr(kernel, "feed", None))
        return id(op) not in sources, not fed

    ordered = sorted(ops, key=rank)  # stable: graph order
    batches = _batches(ops, kernels)
    plan: list[Step] = []
    for op in ordered:
        kernel = kernels[id(op)]
        if not chained(op):
            plan.append(op)
            continue
        last = plan[-1] if plan and isinstance(plan[-1], Chain) else None
        if last is not None and not _reads_batch_of(op, last, batches):
            last = None
        if kernel.serial:
            # Ahead of the open chain when it does not read from it, which keeps that chain
            # whole (e.g. decode → crop → [coin_flip] → crop_mirror_normalize).
            ahead = (
                last is not None
                and not last.serial
                and all(id(n.source) not in last.members for n in op.upstream())
            )
            position = len(plan) - 1 if ahead else len(plan)
            plan.insert(position, Chain([(op, kernel)], serial=True))
        elif last is not None and not last.serial:
            last.append(op, kernel)
        else:
            plan.append(Chain([(op, kernel)]))
    return plan


def externally_needed(
    plan: Sequence[Step], ops: Sequence[OpNode], outputs: Sequence[DataNode]
) -> set[Key]:
    """Chain outputs that must become TensorLists (read outside their chain, or outputs)."""
    chain_of = {}
    for step in plan:
        if isinstance(step, Chain):
            for op, _ in step.steps:
                chain_of[id(op)] = step
    needed = {(id(n.source), n.index) for n in outputs}
    for op in ops:
        for node in op.inputs:
            src_chain = chain_of.get(id(node.source))
            if src_chain is None or id(op) not in src_chain.members:
                needed.add((id(node.source), node.index))
        for node in op.arg_inputs.values():
            needed.add((id(node.source), node.index))
    return needed


def overlap_position(plan: Sequence[Step]) -> int | None:
    """The step whose samples may overlap the next iteration: the last pooled chain. Only
    sources can end the epoch and they come first, so nothing after it can."""
    pooled = [p for p, step in enumerate(plan) if isinstance(step, Chain) and not step.serial]
    return pooled[-1] if pooled else None


def _batches(ops: Sequence[OpNode], kernels: Mapping[int, Kernel]) -> dict[Key, Key | None]:
    """Which batch each output belongs to: the iteration's (None), or the output of a kernel
    that resizes batches (the branch of a conditional) that it matches sample for sample.
    Per-sample operators of different batches cannot run in one chain."""
    batches: dict[Key, Key | None] = {}
    for op in ops:
        kernel = kernels[id(op)]
        if kernel.resizes_batch:
            for index in range(len(op.outputs)):
                batches[(id(op), index)] = (id(op), index)
            continue
        like = op.arg_inputs.get(kernel.batch_like) if kernel.batch_like else None
        reference = like if like is not None else next(iter(op.upstream()), None)
        batch = None
        if reference is not None:
            batch = batches.get((id(reference.source), reference.index))
        for index in range(len(op.outputs)):
            batches[(id(op), index)] = batch
    return batches


def _reads_batch_of(op: OpNode, chain: Chain, batches: dict[Key, Key | None]) -> bool:
    """Whether everything ``op`` reads from outside ``chain`` is of the batch the chain's
    first step reads (so ``op`` may run in the chain, on the same samples). An operator that
    reads nothing makes the iteration's batch, so it joins only a chain of that batch (not one
    in a branch of a conditional)."""
    first, _ = chain.steps[0]
    reference = next(iter(first.upstream()), None)
    batch = None if reference is None else batches.get((id(reference.source), reference.index))
    if not op.upstream():
        return batch is None
    return all(
        batches.get((id(n.source), n.index)) == batch
        for n in op.upstream()
        if id(n.source) not in chain.members
    )
