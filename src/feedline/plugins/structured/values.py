"""Leaf values of a structured sample: numeric types, string↔number mappings, strings as bytes.

Outside the pipeline a leaf holds a NumPy array (or a CuPy/PyTorch tensor) of its declared type;
inside it holds a ``DataNode``. Strings travel as 1-D ``uint8`` UTF-8 arrays (a list of strings as
a 2-D array padded with NULs) and are decoded back to ``str`` when read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.types import DataType

__all__ = [
    "LEAF_TYPES",
    "apply_mapping",
    "check_leaf_type",
    "convert",
    "decode_string",
    "encode_string",
    "flat_type",
    "numpy_type",
]

_NUMPY_TYPES: dict[DataType, Any] = {
    DataType.BOOL: bool,
    DataType.FLOAT16: np.float16,
    DataType.FLOAT: np.float32,
    DataType.FLOAT64: np.float64,
    DataType.INT8: np.int8,
    DataType.INT16: np.int16,
    DataType.INT32: np.int32,
    DataType.INT64: np.int64,
    DataType.UINT8: np.uint8,
    DataType.UINT16: np.uint16,
    DataType.UINT32: np.uint32,
    DataType.UINT64: np.uint64,
}
_INT_RANGES = {
    t: (int(np.iinfo(n).min), int(np.iinfo(n).max))
    for t, n in _NUMPY_TYPES.items()
    if n is not bool and np.dtype(n).kind in "iu"
}
#: The element types a data field may declare.
LEAF_TYPES = frozenset([*_NUMPY_TYPES, DataType.STRING])


def numpy_type(dtype: DataType) -> Any:
    """The NumPy (or Python, for BOOL) type of a numeric or boolean data type.

    Raises:
        ValueError: ``STRING`` or a type that holds no numbers.
    """
    try:
        return _NUMPY_TYPES[dtype]
    except (KeyError, TypeError):
        raise ValueError(
            f"{dtype!r} does not have a corresponding numpy type: only numeric and boolean "
            "data types do "
            "(strings are stored as uint8 bytes)"
        ) from None


def check_leaf_type(dtype: object, name: object) -> DataType:
    """Validate the declared type of data field ``name``.

    Raises:
        TypeError: not a :class:`DataType` of :data:`LEAF_TYPES` (a ``SampleDataGroup`` class or
            instance included: use ``add_data_group_field`` for groups).
    """
    if isinstance(dtype, DataType) and dtype in LEAF_TYPES:
        return dtype
    raise TypeError(
        f"data field {name!r}: type must be a numeric, BOOL or STRING types.DataType, got "
        f"{dtype!r} (use add_data_group_field for nested groups)"
    )


def flat_type(dtype: Any) -> Any:
    """The type as seen in flat contexts: ``STRING`` is carried as ``UINT8``."""
    return DataType.UINT8 if dtype is DataType.STRING else dtype


def encode_string(value: Any, field: str) -> np.ndarray | None:
    """A ``str`` (or ``bytes``) as 1-D uint8, a (nested) list of them as a NUL-padded array.

    ``None`` stays ``None`` and a uint8 NumPy array (already encoded) is kept.

    Raises:
        TypeError: any other value.
    """
    if value is None:
        return None
    if isinstance(value, str):
        value = value.encode("utf-8")
    if isinstance(value, bytes):
        return np.frombuffer(value, dtype=np.uint8).copy()
    if isinstance(value, np.ndarray) and value.dtype == np.uint8:
        return value
    if isinstance(value, list | tuple):
        rows = [encode_string(v, field) for v in value]
        if any(r is None for r in rows):
            raise TypeError(f"string field {field!r}: a list of strings may not contain None")
        if all(r.ndim == 1 for r in rows):  # type: ignore[union-attr]
            width = max((len(r) for r in rows), default=0)  # type: ignore[arg-type]
            out = np.zeros((len(rows), width), np.uint8)
            for index, row in enumerate(rows):
                out[index, : len(row)] = row  # type: ignore[arg-type]
            return out
        shape = {r.shape for r in rows}  # type: ignore[union-attr]
        width = max(r.shape[-1] for r in rows)  # type: ignore[union-attr]
        if len({s[:-1] for s in shape}) != 1:
            raise TypeError(f"string field {field!r}: nested lists of strings must be regular")
        out = np.zeros((len(rows), *rows[0].shape[:-1], width), np.uint8)  # type: ignore[union-attr]
        for index, row in enumerate(rows):
            out[index, ..., : row.shape[-1]] = row  # type: ignore[union-attr]
        return out
    raise TypeError(
        f"string field {field!r}: expected a str, bytes, a (nested) list of them or an encoded "
        f"uint8 array, got {type(value).__name__}"
    )


def _as_numpy(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach"):  # a torch tensor
        return value.detach().cpu().numpy()
    if hasattr(value, "get") and type(value).__module__.startswith("cupy"):
        return value.get()
    return np.asarray(value)


def decode_string(value: Any) -> Any:
    """uint8 bytes back to ``str``: 1-D → ``str``, N-D → nested lists (trailing NULs dropped)."""
    if value is None:
        return None
    array = _as_numpy(value)
    if array.ndim == 0:
        raise ValueError(f"an encoded string must be at least 1-D, got a scalar {array!r}")
    if array.ndim == 1:
        return array.astype(np.uint8, copy=False).tobytes().rstrip(b"\x00").decode("utf-8")
    return [decode_string(row) for row in array]


def _map_scalar(value: Any, mapping: Mapping[Any, Any], field: str) -> Any:
    try:
        return mapping[value]
    except (KeyError, TypeError):
        pass
    if not isinstance(value, str | np.str_):
        return value
    if None in mapping:
        return mapping[None]
    known = ", ".join(repr(k) for k in list(mapping)[:8])
    raise KeyError(
        f"field {field!r}: {value!r} is not in its mapping (keys: {known}"
        f"{', ...' if len(mapping) > 8 else ''}) and the mapping has no None default"
    )


def _map_nested(value: Any, mapping: Mapping[Any, Any], field: str) -> Any:
    if isinstance(value, list | tuple):
        return [_map_nested(v, mapping, field) for v in value]
    return _map_scalar(value, mapping, field)


def apply_mapping(value: Any, mapping: Mapping[Any, Any], dtype: DataType, field: str) -> Any:
    """Map strings (single, nested lists/tuples, NumPy arrays) to numbers of type ``dtype``.

    A string missing from the mapping takes the ``None`` key's value. Numbers, and numeric arrays,
    are kept as given unless they are keys of the mapping themselves.

    Raises:
        KeyError: a string that is not a key while the mapping has no ``None`` default.
    """
    target = numpy_type(dtype)
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "USO" and not any(
            k is not None and not isinstance(k, str) for k in mapping
        ):
            return value.astype(target, copy=False)
        flat = [
            _map_scalar(v.item() if isinstance(v, np.generic) else v, mapping, field)
            for v in value.ravel()
        ]
        return np.array(flat, dtype=target).reshape(value.shape)
    if isinstance(value, list | tuple | str | np.str_):
        return np.array(_map_nested(value, mapping, field), dtype=target)
    return _map_scalar(value, mapping, field)


def convert(value: Any, dtype: DataType, field: str) -> Any:
    """``value`` as an array of the declared ``dtype`` (a scalar becomes a 0-D array).

    NumPy arrays, lists, tuples and numbers become NumPy arrays; CuPy arrays and PyTorch tensors
    are cast in their own framework. ``None`` is kept (it clears the field).

    Raises:
        TypeError: a value that is not numeric data (a ``str`` in a numeric field, a ``dict``…).
    """
    if value is None:
        return None
    target = numpy_type(dtype)
    if type(value) is np.ndarray and value.dtype == target:
        return value
    module = type(value).__module__
    if module.startswith("torch"):
        import torch

        torch_type = torch.bool if target is bool else getattr(torch, np.dtype(target).name)
        return value.to(dtype=torch_type)
    if module.startswith("cupy"):
        return value.astype(target, copy=False)
    if isinstance(value, np.ndarray | np.generic | bool | int | float | list | tuple):
        try:
            array = np.asarray(value)
        except ValueError as exc:
            raise TypeError(
                f"field {field!r}: cannot convert {value!r} to an array: {exc}"
            ) from None
        if array.dtype.kind in "USOV":
            raise TypeError(
                f"field {field!r} ({dtype.name}): got non-numeric data of dtype {array.dtype}; "
                "declare a mapping for strings or make it a STRING field"
            )
        if isinstance(value, int) and not isinstance(value, bool) and dtype in _INT_RANGES:
            low, high = _INT_RANGES[dtype]
            if not low <= value <= high:
                raise OverflowError(f"field {field!r}: {value} does not fit in {dtype.name}")
        return array.astype(target, copy=False)
    raise TypeError(
        f"field {field!r} ({dtype.name}): cannot convert a {type(value).__name__}; expected a "
        "NumPy array, a list/tuple, a number, a CuPy array or a PyTorch tensor"
    )
