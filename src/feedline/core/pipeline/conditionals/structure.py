"""Nested values (tuples, lists, dicts of DataNodes and constants) as merged by an ``if``.

A variable assigned in both branches of a conditional ``if`` may hold a nest: both branches must
give it the same structure (same container types, lengths and dict keys); its leaves are merged
one by one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["map_leaves", "structure_mismatch"]

_DIVERGENT = (
    "Divergent data found in different branches of `if/else` control flow statement. Variables "
    "in all code paths are merged into common output batches. The values assigned to a given "
    "variable need to have the same nesting structure in every code path (both `if` branches).\n"
    "For example, if we define a variable as a tuple in one branch, it must be defined as a "
    "tuple of the same length in the other branch - the contents of the tuples may be different. "
    "If we define a variable as a dictionary, the other branch must define it as a dictionary "
    "with the same set of keys, the values may be different.\n"
)


def _is_nest(value: Any) -> bool:
    return isinstance(value, tuple | list | dict)


def _difference(a: Any, b: Any) -> str | None:
    """Why ``a`` and ``b`` differ in structure, or None when they agree."""
    if not _is_nest(a) and not _is_nest(b):
        return None
    if type(a) is not type(b):
        return (
            f"The two structures don't have the same sequence type. First structure has type "
            f"{type(a)}, while second structure has type {type(b)}."
        )
    if isinstance(a, dict):
        if set(a) != set(b):
            return (
                "The two dictionaries don't have the same set of keys. First structure has keys "
                f"type=list str={list(a)}, while second structure has keys type=list "
                f"str={list(b)}"
            )
        pairs = [(a[k], b[k]) for k in a]
    else:
        if len(a) != len(b):
            return (
                f"The two structures don't have the same sequence length. First structure has "
                f"length {len(a)}, while second structure has length {len(b)}."
            )
        pairs = list(zip(a, b, strict=True))
    for x, y in pairs:
        found = _difference(x, y)
        if found is not None:
            return found
    return None


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return type(value)(_shape(v) for v in value)
    return "*"


def structure_mismatch(name: str, on_true: Any, on_false: Any) -> ValueError | None:
    """DALI's error for a variable (``name``) of different structure in the two branches, or
    None when the structures agree."""
    found = _difference(on_true, on_false)
    if found is None:
        return None
    return ValueError(
        f"{_DIVERGENT}\nVariable: '{name}'.\nThe two structures don't have the same nested "
        f"structure.\n{found}\n'If' output structure: {_shape(on_true)}\n"
        f"'Else' output structure: {_shape(on_false)}"
    )


def map_leaves(function: Callable[[Any, Any], Any], on_true: Any, on_false: Any) -> Any:
    """``function`` applied to each pair of leaves of two nests of the same structure, in a nest
    of that structure (namedtuples keep their type)."""
    if isinstance(on_true, dict):
        return type(on_true)((k, map_leaves(function, on_true[k], on_false[k])) for k in on_true)
    if isinstance(on_true, tuple | list):
        items = [map_leaves(function, x, y) for x, y in zip(on_true, on_false, strict=True)]
        if isinstance(on_true, tuple) and hasattr(on_true, "_fields"):
            return type(on_true)(*items)
        return type(on_true)(items)
    return function(on_true, on_false)
