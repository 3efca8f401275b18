"""Per-sample choice among augmentations, through conditionals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from feedline.auto_aug.core._augmentation import Augmentation
from feedline.core.graph.nodes import DataNode
from feedline.core.pipeline.conditionals.runtime import if_stmt


def conditional(condition: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true() if condition else on_false()``, per sample when ``condition`` is a batch.

    The same as an ``if`` in a pipeline with ``enable_conditionals=True``: each branch is
    traced on the samples that take it and the results are merged in sample order.
    """
    state: list[Any] = [None]

    def run(branch: Any) -> Any:
        return lambda: state.__setitem__(0, branch())

    if_stmt(
        condition,
        run(on_true),
        run(on_false),
        lambda: (state[0],),
        lambda values: state.__setitem__(0, values[0]),
        ("result",),
    )
    return state[0]


def _branch(
    ops: Sequence[Augmentation], low: int, high: int, index: DataNode, args: Any, kwargs: Any
) -> DataNode:
    """Apply ``ops[index]`` for indices in ``[low, high]``, halving the range per split."""
    if low == high:
        return ops[low](*args, **kwargs)
    middle = (low + high) // 2
    return conditional(
        index <= middle,
        lambda: _branch(ops, low, middle, index, args, kwargs),
        lambda: _branch(ops, middle + 1, high, index, args, kwargs),
    )


def select(
    ops: Sequence[Augmentation], selected_op_idx: DataNode, *op_args: Any, **op_kwargs: Any
) -> DataNode:
    """Apply ``ops[selected_op_idx]`` to each sample, as if by ``ops[i](*op_args, **op_kwargs)``.

    The batch is split by the index (a batch of ints from ``[0, len(ops) - 1]``); data nodes in
    ``op_args`` and ``op_kwargs`` are split with it. Needs a pipeline with
    ``enable_conditionals=True``.
    """
    return _branch(ops, 0, len(ops) - 1, selected_op_idx, op_args, op_kwargs)
