"""Helpers shared by the geometry and colour kernels: layouts, dtypes and saturating casts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from feedline.core.types import DataType, from_numpy_dtype, to_numpy_dtype

__all__ = [
    "axes_in_range",
    "check_dtype",
    "check_not_empty",
    "named_axes",
    "output_dtype",
    "per_sample",
    "resolve_layout",
    "saturate_cast",
    "type_range",
]


def resolve_layout(
    op: str,
    layout: str,
    ndim: int,
    allowed: Iterable[str],
    defaults: Mapping[int, str],
) -> str:
    """The layout a kernel works with: the input's, or the default for ``ndim`` when it has none.

    Raises:
        ValueError: the layout is not one of ``allowed``, or there is none and ``ndim`` has no
            default; the message lists what is accepted.
    """
    allowed = tuple(allowed)
    if not layout:
        if ndim in defaults:
            return defaults[ndim]
        raise ValueError(  # DALI's words
            f"{op}: The number of dimensions {ndim} does not match any of the allowed layouts "
            f"for input 0. Valid layouts are: {', '.join(allowed)} (the input has no layout; "
            f"without one {_dimensions(defaults)} data is accepted)"
        )
    if layout not in allowed:
        raise ValueError(  # DALI's words
            f'{op}: The layout "{layout}" does not match any of the allowed layouts for input 0. '
            f"Valid layouts are: {', '.join(allowed)}"
        )
    if len(layout) != ndim:
        raise ValueError(f"{op}: layout {layout!r} does not match a {ndim}-D input")
    return layout


def _dimensions(defaults: Mapping[int, str]) -> str:
    return " or ".join(f"{n}-D" for n in sorted(defaults))


def named_axes(op: str, layout: str, names: str) -> list[int]:
    """The indices in ``layout`` of the axes ``names`` names (``axis_names`` arguments).

    Raises:
        ValueError: a name is not in the layout (naming the operator and the missing axes).
    """
    missing = [a for a in names if a not in layout]
    if missing:
        raise ValueError(
            f"{op}: axis_names {names!r} name {''.join(missing)!r}, which the input layout "
            f"{layout!r} does not have"
        )
    return [layout.index(a) for a in names]


def axes_in_range(op: str, axes: Iterable[int], ndim: int) -> list[int]:
    """``axes`` of an ``ndim``-D input made non-negative (negative ones count from the back).

    Raises:
        ValueError: an axis is out of range (naming the operator).
    """
    result = []
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise ValueError(  # DALI's wording
                f"{op}: Axis {axis} out of range. Expected range is [{-ndim}, {ndim - 1}] for a "
                f"{ndim}D input"
            )
        result.append(axis % ndim)
    return result


def check_not_empty(op: str, array: np.ndarray) -> None:
    """Raise ValueError if an image has no pixels."""
    if array.size == 0:
        raise ValueError(f"{op}: empty image (shape {array.shape})")


def check_dtype(
    op: str, array: np.ndarray, allowed: Iterable[np.dtype], what: str = "input"
) -> None:
    """Raise TypeError naming the dtype if ``array``'s dtype is not ``allowed``."""
    allowed = tuple(allowed)
    if array.dtype in allowed:  # dtypes compare equal to what np.dtype() turns into them
        return
    allowed = tuple(np.dtype(d) for d in allowed)
    if array.dtype not in allowed:
        names = ", ".join(str(d) for d in allowed)
        raise TypeError(f"{op}: {what} type {array.dtype} is not supported; expected {names}")


def output_dtype(
    op: str, dtype: DataType | None, input_dtype: np.dtype, allowed: Iterable[np.dtype]
) -> np.dtype:
    """The NumPy output type: ``dtype`` if given, else the input's; checked against ``allowed``.

    Raises:
        TypeError: the requested type is not supported by the operator.
    """
    if dtype is None or dtype == DataType.NO_TYPE:
        return np.dtype(input_dtype)
    try:
        result = to_numpy_dtype(dtype)
    except TypeError:
        result = None
    allowed = tuple(np.dtype(d) for d in allowed)
    if result not in allowed:
        names = ", ".join(from_numpy_dtype(d).name for d in allowed)
        name = dtype.name if isinstance(dtype, DataType) else repr(dtype)
        raise TypeError(f"{op}: argument 'dtype' = {name} is not supported; expected {names}")
    return result


def type_range(dtype: np.dtype) -> tuple[float, float]:
    """``(min, max)`` of an integer type; ``(-inf, inf)`` for floating point."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return float(info.min), float(info.max)
    return -np.inf, np.inf


def saturate_cast(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Convert computed values to ``dtype`` as DALI does.

    Integer outputs are rounded to nearest with halves away from zero, then clamped to the type's
    range (NaN becomes 0); floating-point outputs are a plain cast.
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return values != 0
    if dtype.kind not in "iu":
        return values.astype(dtype, copy=False)
    if values.dtype.kind != "f" or (dtype.itemsize >= 4 and values.dtype != np.float64):
        values = values.astype(np.float64)
    low, high = type_range(dtype)
    if dtype.kind == "u":
        work = values + values.dtype.type(0.5)
    else:
        work = values + np.copysign(values.dtype.type(0.5), values)
    np.fmax(work, low, out=work)
    np.fmin(work, high, out=work)
    return work.astype(dtype)


def per_sample(
    args: Mapping[str, Any], name: str, index: int, arg_inputs: Mapping[str, Any]
) -> Any:
    """The value of argument ``name`` for sample ``index`` in a batch kernel.

    Per-sample arguments (in ``arg_inputs``, one array per sample) win over static ``args``.
    """
    if name in arg_inputs:
        return arg_inputs[name].at(index)
    return args.get(name)
