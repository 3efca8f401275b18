"""Helpers for writing steps: constants as graph nodes, label mapping, type checks, debug prints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.graph import DataNode
from feedline.plugins.structured.dtypes import node_dtype
from feedline.plugins.structured.values import numpy_type
from feedline.types import DataType

__all__ = [
    "check_type",
    "get_as_data_node",
    "get_mapped",
    "print_tensor_op",
    "print_tensor_size_op",
]


def get_as_data_node(value: Any) -> Any:
    """``value`` as a graph constant (int32 for integers and booleans, float32 otherwise).

    A graph node is returned unchanged.
    """
    from feedline import fn

    if isinstance(value, DataNode):
        return value
    array = np.asarray(value)
    shape = list(array.shape)
    if array.dtype == np.bool_ or np.issubdtype(array.dtype, np.integer):
        data = array.astype(np.int64).reshape(-1).tolist()
        return fn.constant(idata=data if shape else data[0], shape=shape, dtype=DataType.INT32)
    data = array.astype(np.float64).reshape(-1).tolist()
    return fn.constant(fdata=data if shape else data[0], shape=shape, dtype=DataType.FLOAT)


def get_mapped(val: Any, mapping: Mapping[Any, Any], encapsulate: bool = False) -> Any:
    """Map a value, or nested lists/tuples of values, through ``mapping``.

    A value missing from ``mapping`` takes ``mapping[None]`` (the default) when there is one.

    Args:
        val: the value(s).
        mapping: original value to mapped value; the key ``None`` holds the default.
        encapsulate: wrap a single mapped value in a list.

    Raises:
        KeyError: a value is not in the mapping and there is no default.
    """
    if isinstance(val, list | tuple):
        return [get_mapped(v, mapping) for v in val]
    if val in mapping:
        mapped = mapping[val]
    elif None in mapping:
        mapped = mapping[None]
    else:
        raise KeyError(f"{val!r} is not in the mapping and the mapping has no default (None key)")
    return [mapped] if encapsulate else mapped


def check_type(input: Any, expected_type_np: Any, identifier: str) -> Any:
    """Check that a graph node holds elements of ``expected_type_np``; returns the node.

    The check happens while the graph is defined when the node's type is known there, else when
    the pipeline runs (then the returned node carries the check: use it).

    Raises:
        ValueError: the types differ (names ``identifier``).
    """
    expected = np.dtype(expected_type_np)
    known = node_dtype(input)
    if known is not None:
        actual = np.dtype(numpy_type(known))
        if actual != expected:
            raise ValueError(
                f"Expected type ({expected}) and actual data type ({actual}) do not match for "
                f"{identifier!r}"
            )
        return input
    from feedline import fn

    def check(array: np.ndarray) -> np.ndarray:
        if array.dtype != expected:
            raise ValueError(
                f"Expected type ({expected}) and actual data type ({array.dtype}) do not match "
                f"for {identifier!r}"
            )
        return array

    return fn.python_function(input, function=check, preserve=True)


def print_tensor_op(tensor_list: Any, name: str) -> Any:
    """Print every sample of ``tensor_list`` when the pipeline runs; returns the data unchanged."""
    return _printing(tensor_list, name, lambda array: array)


def print_tensor_size_op(tensor_list: Any, name: str) -> Any:
    """Print every sample's shape when the pipeline runs; returns the data unchanged."""
    return _printing(tensor_list, name, lambda array: array.shape)


def _printing(node: Any, name: str, describe: Any) -> Any:
    from feedline import fn

    def show(array: np.ndarray) -> np.ndarray:
        print(f"{name}: {describe(array)}")  # the purpose of this debugging operator
        return array

    return fn.python_function(node, function=show, preserve=True)
