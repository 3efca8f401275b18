"""The data of constant nodes: DALI's rules for turning a Python or NumPy value into an array.

Pure NumPy, no graph: :func:`~feedline.core.graph.nodes.constant_node` wraps the array in a
``constant`` operator node.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from feedline.core.types import DataType, enum_data_type, from_numpy_dtype, to_numpy_dtype

__all__ = ["constant_array"]


def constant_array(value: Any, dtype: DataType | None, shape: Any) -> np.ndarray:
    """The array a constant node produces: lists default to FLOAT, INT32 or BOOL, Python
    floats and ints to FLOAT and INT32, NumPy values keep their dtype; ``shape`` broadcasts a
    single value or reshapes."""
    if isinstance(value, list | tuple):
        flat = np.asarray(value).ravel().tolist() if len(value) else []
        enum_types = {enum_data_type(v) for v in value} if len(value) else {None}
        if dtype is None and len(enum_types) == 1 and None not in enum_types:
            np_dtype: Any = to_numpy_dtype(enum_types.pop())
        elif dtype is None:
            if any(isinstance(v, float) for v in flat) or not flat:
                np_dtype = np.float32
            elif any(isinstance(v, int) and not isinstance(v, bool) for v in flat):
                np_dtype = np.int32
            else:
                np_dtype = np.bool_
        else:
            np_dtype = to_numpy_dtype(dtype)
        array = np.asarray(value, dtype=np_dtype)
    elif dtype is None and enum_data_type(value) is not None:
        array = np.asarray(int(value), dtype=to_numpy_dtype(enum_data_type(value)))
    else:
        array = np.asarray(value)
        if dtype is not None:
            array = array.astype(to_numpy_dtype(dtype))
        elif array.dtype == np.float64 and not isinstance(value, np.generic):
            array = array.astype(np.float32)
        elif array.dtype == np.int64 and not isinstance(value, np.generic):
            array = array.astype(np.int32)
        elif isinstance(value, bool):
            array = array.astype(np.bool_)
    from_numpy_dtype(array.dtype)
    if shape is not None:
        target = tuple(int(s) for s in (shape if isinstance(shape, Iterable) else (shape,)))
        array = (
            np.broadcast_to(array, target) if array.size == 1 else array.reshape(target)
        ).copy()
    return np.array(array, order="C")
