"""``DataNode[...]``: NumPy-like indexing of every sample, with DALI's rules.

An index expression becomes one node of the hidden ``_tensor_subscript`` operator, whose
arguments name each subscript by position: ``at_<i>`` (an integer index, which removes the
dimension), ``lo_<i>``/``hi_<i>``/``step_<i>`` (a slice). Every value may be a Python integer or
a per-sample ``DataNode``. An expression of full ranges only (``x[:, :]``) becomes the hidden
``_subscript_dim_check`` operator, which passes the data through after checking that it has
enough dimensions. :data:`newaxis` inserts a unit dimension (through ``expand_dims``), optionally
named: ``x[newaxis("C"), 1:]``.

As in DALI 2.4: ``None`` is a full range (``:``), not a new axis; ``...`` (Ellipsis) raises
``NotImplementedError``; floats and strings are refused. Out-of-range indices, a zero step and
too many subscripts fail when the pipeline runs, with DALI's wording.
"""

from __future__ import annotations

from typing import Any

from feedline.core.graph.calls import make_operator_call
from feedline.core.graph.nodes import DataNode

__all__ = ["MAX_SUBSCRIPTS", "NewAxis", "newaxis", "subscript"]

MAX_SUBSCRIPTS = 32
"""How many subscripts one index expression may have (``at_0`` … ``at_31``), as in DALI."""


class NewAxis:
    """A new unit dimension in an index expression; call it to name the axis in the layout.

    Args:
        name: the layout name of the new axis (one character), or None.
    """

    __slots__ = ("name",)

    def __init__(self, name: str | None = None) -> None:
        if name is not None and len(name) != 1:
            raise ValueError(f"the name of a new axis must be a single character, got {name!r}")
        self.name = name

    def __call__(self, name: str) -> NewAxis:
        return NewAxis(name)

    def __repr__(self) -> str:
        return "newaxis" if self.name is None else f"newaxis({self.name!r})"


newaxis = NewAxis()
"""Inserts a unit dimension: ``x[newaxis]``, or a named one: ``x[newaxis("C")]``."""


def _subscript_args(index: tuple[Any, ...]) -> tuple[dict[str, Any], int, list[int], list[str]]:
    """The operator arguments of an index expression, its subscript count, and the output
    positions and names of its new axes."""
    args: dict[str, Any] = {}
    count = 0
    new_axes: list[int] = []
    names: list[str] = []
    out_dim = 0
    for item in index:
        if isinstance(item, NewAxis):
            new_axes.append(out_dim)
            if item.name is not None:
                names.append(item.name)
            out_dim += 1
            continue
        if item is Ellipsis:
            raise NotImplementedError("Ellipsis in indexing is not implemented")
        if isinstance(item, float | str):
            raise TypeError(f"Invalid type for an index: {type(item).__name__}")
        if item is None:
            out_dim += 1
        elif isinstance(item, slice):
            for prefix, value in (("lo", item.start), ("hi", item.stop), ("step", item.step)):
                if value is not None:
                    args[f"{prefix}_{count}"] = value
            out_dim += 1
        else:
            args[f"at_{count}"] = item
        count += 1
    if count > MAX_SUBSCRIPTS:
        raise IndexError(f"too many subscripts ({count}); at most {MAX_SUBSCRIPTS} are supported")
    if names and len(names) != len(new_axes):
        raise ValueError("New axis name must be specified for all axes or none.")
    return args, count, new_axes, names


def subscript(node: DataNode, index: Any) -> DataNode:
    """The node of ``node[index]`` (see the module docstring for the rules).

    Raises:
        NotImplementedError: the index contains ``...``.
        TypeError: an index is a float or a string.
        ValueError: some new axes are named and others are not.
    """
    items = index if isinstance(index, tuple) else (index,)
    args, count, new_axes, names = _subscript_args(items)
    if args:
        result = make_operator_call("_tensor_subscript", [node], {**args, "num_subscripts": count})
    elif new_axes and isinstance(items[-1], NewAxis):
        result = node  # expand_dims checks the dimensions itself
    else:
        result = make_operator_call("_subscript_dim_check", [node], {"num_subscripts": count})
    if new_axes:
        result = make_operator_call(
            "expand_dims", [result], {"axes": new_axes, "new_axis_names": "".join(names)}
        )
    assert isinstance(result, DataNode)
    return result
