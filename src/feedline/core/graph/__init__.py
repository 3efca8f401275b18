"""The graph layer: what a pipeline definition builds, and the passes run on it at build.

``nodes`` (data and operator nodes, the graph being defined), ``calls`` (operator calls,
constants, arithmetic), ``names`` (DALI's class and automatic names), ``placement``
(the registry entry of an operator and the device it runs on),
``constants`` (the data of constant nodes), ``passes`` (pruning, registered rewrites, checks).
"""

from feedline.core.graph.calls import Constant, arithmetic_node, constant_node, make_operator_call
from feedline.core.graph.nodes import DataNode, Graph, OpNode, current_graph, new_op
from feedline.core.graph.passes import (
    check_membership,
    check_placement,
    ordered_ops,
    prepare,
    prune,
    split_stages,
    used_outputs,
)
from feedline.core.graph.placement import resolve_operator, resolve_schema

__all__ = [
    "Constant",
    "DataNode",
    "Graph",
    "OpNode",
    "arithmetic_node",
    "check_membership",
    "check_placement",
    "constant_node",
    "current_graph",
    "make_operator_call",
    "new_op",
    "ordered_ops",
    "prepare",
    "prune",
    "resolve_operator",
    "resolve_schema",
    "split_stages",
    "used_outputs",
]
