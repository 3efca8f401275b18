"""``.npy`` headers and the region-of-interest arguments of ``readers.numpy``.

:func:`read_header` parses a NumPy array file header (format versions 1, 2 and 3) without reading
the data; :func:`roi_bounds` turns DALI's ROI arguments (absolute or relative start, end or
shape, over ``roi_axes``) into per-axis bounds; :func:`extract_roi` cuts a region out of an array
under an ``out_of_bounds_policy`` (``error``, ``trim_to_shape`` or ``pad``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "ROI_ARGS",
    "NpyDataError",
    "NpyHeader",
    "check_consistent",
    "extract_roi",
    "read_header",
    "roi_bounds",
]

ROI_ARGS = ("roi_start", "rel_roi_start", "roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape")


_SUPPORTED_KINDS = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8)}
"""Element kinds and sizes a sample can have: bool, (unsigned) integers and IEEE floats."""


class NpyDataError(ValueError, RuntimeError):
    """A file's element type is unsupported, or the files of one batch disagree in type or
    number of dimensions. A ``ValueError``, and a ``RuntimeError`` as DALI raises (in its
    words)."""


class NpyHeader(NamedTuple):
    """What a ``.npy`` header says: element type, shape, order and where the data starts."""

    dtype: np.dtype
    shape: tuple[int, ...]
    fortran_order: bool
    offset: int


def read_header(path: str) -> NpyHeader:
    """Parse the header of the ``.npy`` file at ``path``.

    Raises:
        ValueError: not a ``.npy`` file, or an unsupported element type (names the file).
    """
    with open(path, "rb") as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        except ValueError as exc:
            raise ValueError(f"{path!r} is not a valid .npy file: {exc}") from None
        offset = f.tell()
    if dtype.fields is not None or dtype.itemsize not in _SUPPORTED_KINDS.get(dtype.kind, ()):
        raise NpyDataError(
            f"{path!r}: Unknown Numpy type string {dtype.str!r}: element type {dtype} is not "
            "supported (bool, integers and float16/32/64 only)"
        )
    return NpyHeader(dtype, tuple(int(n) for n in shape), bool(fortran), offset)


def _axis_values(name: str, values: Sequence[float] | None, count: int) -> list[float] | None:
    """The values of one ROI argument; an empty list counts as not given (DALI's rule)."""
    if values is None or len(values) == 0:
        return None
    if len(values) != count:
        raise ValueError(f"readers.numpy: {name} has {len(values)} values, expected {count}")
    return [float(v) for v in values]


def _exclusive(args: Mapping[str, Any], names: Sequence[str]) -> str | None:
    given = [n for n in names if args.get(n) is not None]
    if len(given) > 1:
        raise ValueError(f"readers.numpy: arguments {' and '.join(given)} are mutually exclusive")
    return given[0] if given else None


def roi_bounds(args: Mapping[str, Any], shape: Sequence[int]) -> list[tuple[int, int]] | None:
    """``[start, end)`` per dimension for the ROI arguments, or None without a ROI.

    Relative values are fractions of the extent, rounded to the nearest integer (halves away
    from zero). Axes not in ``roi_axes`` (when it is given) are read whole.

    Raises:
        ValueError: conflicting arguments, wrong number of values, repeated or bad axes.
    """
    start_arg = _exclusive(args, ("roi_start", "rel_roi_start"))
    end_arg = _exclusive(args, ("roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape"))
    ndim = len(shape)
    axes = list(args.get("roi_axes") or range(ndim))
    starts = _axis_values(start_arg, args[start_arg], len(axes)) if start_arg else None
    ends = _axis_values(end_arg, args[end_arg], len(axes)) if end_arg else None
    if starts is None and ends is None:
        return None
    if len(set(axes)) != len(axes) or any(not -ndim <= a < ndim for a in axes):
        raise ValueError(
            f"readers.numpy: roi_axes {axes} are not distinct axes of a {ndim}-D array"
        )
    axes = [a % ndim for a in axes]
    bounds = [(0, n) for n in shape]

    def scaled(value: float, axis: int, relative: bool) -> int:
        value = value * shape[axis] if relative else value
        return int(math.copysign(math.floor(abs(value) + 0.5), value))

    for i, axis in enumerate(axes):
        start = scaled(starts[i], axis, start_arg.startswith("rel")) if starts else 0
        if ends is None:
            end = shape[axis]
        elif end_arg.endswith("shape"):
            end = start + scaled(ends[i], axis, end_arg.startswith("rel"))
        else:
            end = scaled(ends[i], axis, end_arg.startswith("rel"))
        if end < start:
            raise ValueError(
                f"readers.numpy: ROI of axis {axis} ends ({end}) before it starts ({start})"
            )
        bounds[axis] = (start, end)
    return bounds


def _saturate(value: float, dtype: np.dtype) -> Any:
    """``value`` converted to ``dtype`` as DALI's ConvertSat: rounded (halves away from zero)
    and clamped to an integer type's range."""
    if dtype.kind == "b":
        return value != 0
    if dtype.kind not in "iu":
        return value
    info = np.iinfo(dtype)
    rounded = math.copysign(math.floor(abs(value) + 0.5), value)
    return int(min(max(rounded, info.min), info.max))


def extract_roi(
    array: np.ndarray, bounds: Sequence[tuple[int, int]], policy: str, fill_value: float
) -> np.ndarray:
    """The region ``bounds`` of ``array`` (a new contiguous array).

    Args:
        array: the whole array.
        bounds: ``[start, end)`` per dimension.
        policy: ``error`` (a ROI outside the array raises), ``trim_to_shape`` (the ROI is cut to
            the array) or ``pad`` (the outside is filled with ``fill_value``).
        fill_value: the padding value (rounded and saturated to the array's type).

    Raises:
        ValueError: the ROI leaves the array with ``policy="error"``, or an unknown policy.
    """
    inside = [(max(s, 0), min(e, n)) for (s, e), n in zip(bounds, array.shape, strict=True)]
    outside = any((s, e) != (cs, ce) for (s, e), (cs, ce) in zip(bounds, inside, strict=True))
    if policy == "error" and outside:
        raise ValueError(
            f"readers.numpy: ROI {[list(b) for b in bounds]} is out of bounds of an array of "
            f"shape {array.shape} (out_of_bounds_policy='error'; use 'trim_to_shape' or 'pad')"
        )
    if policy == "trim_to_shape" or not outside:
        trimmed = [(s, max(s, e)) for s, e in inside]
        return np.ascontiguousarray(array[tuple(slice(s, e) for s, e in trimmed)])
    if policy != "pad":
        raise ValueError(f"readers.numpy: unknown out_of_bounds_policy {policy!r}")
    out = np.full([e - s for s, e in bounds], _saturate(fill_value, array.dtype), array.dtype)
    source = tuple(slice(cs, max(cs, ce)) for cs, ce in inside)
    target = tuple(
        slice(cs - s, max(cs, ce) - s) for (s, _), (cs, ce) in zip(bounds, inside, strict=True)
    )
    out[target] = array[source]
    return out


def check_consistent(arrays: Sequence[np.ndarray], paths: Sequence[str]) -> None:
    """Refuse a batch whose files differ in number of dimensions or element type.

    Raises:
        NpyDataError: names the first file and the first one that differs, in DALI's words.
    """
    for array, path in zip(arrays[1:], paths[1:], strict=True):
        first = arrays[0]
        if array.ndim != first.ndim:
            raise NpyDataError(
                "Inconsistent data: All samples in the batch must have the same number of "
                f'dimensions. Got "{paths[0]}" with {first.ndim} dimensions and "{path}" with '
                f"{array.ndim} dimensions"
            )
        if array.dtype != first.dtype:
            raise NpyDataError(
                "Inconsistent data: All samples in the batch must have the same data type. "
                f'Got "{paths[0]}" with data type {first.dtype} and "{path}" with data type '
                f"{array.dtype}"
            )
