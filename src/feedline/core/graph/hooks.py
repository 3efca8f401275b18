"""A hook on every operator added to a graph while it is active on this thread.

Conditional pipelines use it: inside a branch, each input of a new operator must be the part
of its batch that takes the branch, and each new operator's outputs belong to that branch.
The hook sees every operator, however it was created (``fn.*``, DataNode arithmetic,
``.gpu()``), without the callers knowing of it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from feedline.core.graph.nodes import DataNode, OpNode
    from feedline.core.schema import OpSchema

__all__ = ["GraphHook", "active_graph_hook", "graph_hook"]

_local = threading.local()


class GraphHook(Protocol):
    """What :meth:`Graph.add_op <feedline.core.graph.nodes.Graph.add_op>` calls."""

    def before_add(
        self, schema: OpSchema, inputs: list[DataNode], arg_inputs: dict[str, DataNode]
    ) -> tuple[list[DataNode], dict[str, DataNode]]:
        """The inputs and argument inputs the new operator (of ``schema``) reads instead of
        those given."""
        ...

    def after_add(self, op: OpNode) -> None:
        """Called with the new operator once it is in the graph."""
        ...


def active_graph_hook() -> GraphHook | None:
    """The hook active on this thread, if any."""
    return getattr(_local, "hook", None)


@contextmanager
def graph_hook(hook: GraphHook | None) -> Iterator[None]:
    """Make ``hook`` the active one on this thread for the ``with`` block (None: no hook, e.g.
    for the operators that a hook adds itself)."""
    previous = active_graph_hook()
    _local.hook = hook
    try:
        yield
    finally:
        _local.hook = previous
