"""Common subgraph elimination: operators that would compute the same thing run once.

Two operators are the same computation when they have the same schema, device, static
arguments, explicit seed and error policy, and read the same outputs (after the operators they
read were merged in turn, so whole identical subgraphs collapse). As in DALI, an operator is
never merged when its name was given by the user, when it is kept for its side effects
(``preserve``, ``no_prune``), when it draws random numbers without an explicit seed (each one
then gets a seed of its own; the hidden operators that DataNode syntax creates, arithmetic,
subscripts, conditionals and transfers, never do), or when it runs user Python code (a
``source`` or ``function`` argument: two calls of a callback may differ).

Merging redirects the duplicate's output nodes to the kept operator's outputs, so everything that
reads them, pipeline outputs included, reads the kept operator's batches: the same objects.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.graph.nodes import DataNode, OpNode

__all__ = ["eliminate_common_subgraphs"]

_CALLBACK_ARGS = ("source", "function")


def _freeze(value: Any) -> Hashable:
    """A hashable stand-in for an argument value that is equal only for equal values."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str, value.tobytes())
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_freeze(item) for item in value))
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted((str(k), _freeze(v)) for k, v in value.items())))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return (type(value).__qualname__, value)


def _read(node: DataNode) -> Hashable:
    return (id(node.source), node.index) if node.source is not None else ("node", id(node))


def _key(op: OpNode) -> Hashable | None:
    """What identifies ``op``'s computation, or None when it must not be merged."""
    schema = op.schema
    if (
        not op.name.startswith("__")  # a name the user gave
        or op.preserve
        or schema.no_prune
        or (schema.random and not schema.hidden and op.seed is None)
        or any(name in schema.arg_map for name in _CALLBACK_ARGS)
    ):
        return None
    return (
        schema.name,
        op.device,
        op.seed,
        op.on_error,
        tuple(_read(node) for node in op.inputs),
        tuple(sorted((name, _read(node)) for name, node in op.arg_inputs.items())),
        _freeze(op.args),
    )


def eliminate_common_subgraphs(ops: Sequence[OpNode]) -> list[OpNode]:
    """``ops`` (in topological order) without the operators that repeat an earlier one.

    The output nodes of a dropped operator are redirected to the kept one's outputs.
    """
    kept_by_key: dict[Hashable, OpNode] = {}
    result: list[OpNode] = []
    for op in ops:
        key = _key(op)
        kept = None if key is None else kept_by_key.get(key)
        if kept is None:
            if key is not None:
                kept_by_key[key] = op
            result.append(op)
            continue
        for duplicate, original in zip(op.outputs, kept.outputs, strict=True):
            duplicate.source, duplicate.index = kept, original.index
    return result
