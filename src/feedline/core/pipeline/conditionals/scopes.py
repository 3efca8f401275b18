"""The stack of ``if`` scopes being traced, and the splitting of batches into them.

While a conditional pipeline function runs, every DataNode belongs to the *path* of branches
where it was produced: a tuple of ``(scope id, branch)`` pairs, empty for the pipeline's whole
batch. An operator created inside a branch must read batches of that branch: each input produced
further out is split by the predicates of the scopes in between (one ``_conditional.split`` per
scope, cached, so a node is split once per scope). Operators without any input (readers, random
generators, constants) produce the whole batch, like DALI's, and are split where they are used:
a random operator in a branch draws for each sample what it would draw outside.

:class:`ConditionStack` is the graph hook (:mod:`feedline.core.graph.hooks`) that does this for
every operator added while the pipeline function runs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from feedline.core.graph import DataNode, OpNode, make_operator_call
from feedline.core.graph.hooks import active_graph_hook, graph_hook
from feedline.core.schema import OpSchema

__all__ = ["SCOPE_ARGUMENT", "ConditionStack", "Path", "active_stack"]

Path = tuple[tuple[int, bool], ...]

SCOPE_ARGUMENT = "_scope"
"""The hidden per-sample argument through which an operator without inputs learns, inside a
branch, the batch it runs on (any values; only its number of samples counts)."""


@dataclass
class _Scope:
    """One traced ``if``: its predicate (a node of the enclosing path) and the branch traced."""

    uid: int
    predicate: DataNode
    branch: bool | None = None
    splits: dict[int, tuple[DataNode, DataNode]] = field(default_factory=dict)


class ConditionStack:
    """The ``if`` scopes being traced (outermost first) and where each node was produced."""

    def __init__(self) -> None:
        self._scopes: list[_Scope] = []
        self._paths: dict[int, tuple[DataNode, Path]] = {}
        self._uids = itertools.count()

    @property
    def depth(self) -> int:
        """How many ``if`` scopes are open."""
        return len(self._scopes)

    def path(self) -> Path:
        """The path of branches being traced (an ``if`` whose branches are done and whose
        results are being merged counts as its enclosing path)."""
        path = [(s.uid, s.branch) for s in self._scopes]
        if path and path[-1][1] is None:
            path.pop()
        return tuple(path)  # type: ignore[arg-type]

    def path_of(self, node: DataNode) -> Path:
        """Where ``node`` was produced (the whole batch for nodes this stack never saw)."""
        entry = self._paths.get(id(node))
        return entry[1] if entry is not None and entry[0] is node else ()

    def register(self, nodes: list[DataNode], path: Path) -> None:
        """Record that ``nodes`` were produced on ``path``."""
        for node in nodes:
            self._paths[id(node)] = (node, path)

    def push(self, condition: DataNode) -> DataNode:
        """Open an ``if`` scope on ``condition`` (split into the current branch first); returns
        the predicate its split and merge operators use."""
        predicate = self.localize(condition)
        self._scopes.append(_Scope(next(self._uids), predicate))
        return predicate

    def enter(self, branch: bool | None) -> None:
        """Trace the ``if`` (True) or ``else`` (False) branch of the innermost scope, or neither
        (None: its results are being merged)."""
        self._scopes[-1].branch = branch

    def pop(self) -> None:
        """Close the innermost scope."""
        self._scopes.pop()

    def localize(self, node: DataNode) -> DataNode:
        """``node`` as seen in the branch being traced: split by every predicate between the
        path where it was produced and the current one.

        Raises:
            ValueError: ``node`` was produced in a branch that does not enclose this one.
        """
        origin, current = self.path_of(node), self.path()
        if origin == current:
            return node
        if current[: len(origin)] != origin:
            raise ValueError(
                f"DataNode {node.name!r} was produced in one branch of an `if` statement and "
                "used in another one (or after the `if` without being merged); assign it to a "
                "variable in every branch to use it after the `if`"
            )
        value = node
        for level in range(len(origin), len(current)):
            scope = self._scopes[level]
            pair = scope.splits.get(id(value))
            if pair is None:
                with graph_hook(None):
                    outputs = make_operator_call(
                        "_conditional.split",
                        [value],
                        {"predicate": scope.predicate, "_if_stmt": True},
                    )
                assert isinstance(outputs, list)
                pair = (outputs[0], outputs[1])
                scope.splits[id(value)] = pair
                self.register([pair[0]], (*current[:level], (scope.uid, True)))
                self.register([pair[1]], (*current[:level], (scope.uid, False)))
            value = pair[0] if current[level][1] else pair[1]
        return value

    def merge(self, on_true: DataNode, on_false: DataNode) -> DataNode:
        """Merge the innermost scope's branch values (already localized to their branches)
        back into one batch of the enclosing path."""
        scope = self._scopes[-1]
        with graph_hook(None):
            merged = make_operator_call(
                "_conditional.merge", [on_true, on_false], {"predicate": scope.predicate}
            )
        assert isinstance(merged, DataNode)
        self.register([merged], tuple((s.uid, s.branch) for s in self._scopes[:-1]))  # type: ignore[misc]
        return merged

    # The graph hook -----------------------------------------------------------------------

    def before_add(
        self, schema: OpSchema, inputs: list[DataNode], arg_inputs: dict[str, DataNode]
    ) -> tuple[list[DataNode], dict[str, DataNode]]:
        """Split the inputs of an operator created inside a branch into that branch. An
        operator without inputs whose schema has the hidden per-sample argument ``_scope``
        (DALI's, for operators such as ``batch_permutation`` whose result depends on the batch
        size) reads the branch's batch of the predicate there, so it runs on the branch's
        number of samples."""
        if not self._scopes:
            return inputs, arg_inputs
        if not inputs and not arg_inputs and SCOPE_ARGUMENT in schema.arg_map:
            scope = self._scopes[-1]
            batch = scope.predicate if scope.branch is None else self.localize(scope.predicate)
            return inputs, {SCOPE_ARGUMENT: batch}
        return (
            [self.localize(x) for x in inputs],
            {name: self.localize(x) for name, x in arg_inputs.items()},
        )

    def after_add(self, op: OpNode) -> None:
        """An operator with inputs produces on the current path; one without, the whole batch."""
        if self._scopes and op.upstream():
            self.register(list(op.outputs), self.path())


def active_stack() -> ConditionStack | None:
    """The condition stack of the conditional pipeline function running on this thread."""
    hook: Any = active_graph_hook()
    return hook if isinstance(hook, ConditionStack) else None
