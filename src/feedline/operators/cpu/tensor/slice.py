"""``slice``: extract a window of a tensor, with DALI's argument forms and out-of-bounds policies.

Coordinates are given for ``axes`` (default ``(1, 0)``, i.e. ``x`` then ``y``) or for the layout
axes named by ``axis_names`` (``"WH"`` when the input layout has W and H). A relative (or
normalised) window is scaled by the extents and its start and end are each rounded to the
nearest integer (halves up), so the shape is ``round(end) - round(start)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.errors import out_of_bounds
from feedline.operators.cpu.common.tensors import (
    axes_in_range,
    named_axes,
    output_dtype,
    saturate_cast,
)

__all__ = ["SliceKernel", "slice_axes", "slice_bounds", "slice_indices", "slice_window"]

SLICE_TYPES = (np.uint8, np.float16, np.float32)
_NAMED = ("start", "rel_start", "end", "rel_end", "shape", "rel_shape")


def _round(value: float) -> int:
    return math.floor(value + 0.5)


def _per_axis(name: str, values: Sequence[float] | None, count: int) -> list[float] | None:
    if values is None:
        return None
    items = [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]
    if len(items) == 1:
        return items * count
    if len(items) != count:
        raise ValueError(
            f"slice: argument {name!r} needs {count} values (one per axis), got {len(items)}"
        )
    return items


def slice_window(extents: Sequence[int], args: Mapping[str, Any]) -> tuple[list[int], list[int]]:
    """``(starts, ends)`` along the sliced axes from the named arguments.

    ``args`` holds ``start``/``rel_start``, ``end``/``rel_end``/``shape``/``rel_shape`` (None when
    absent); a missing start is 0, a missing end is the extent.

    Raises:
        ValueError: both the absolute and the relative form of a coordinate, or an end together
            with a shape.
    """
    count = len(extents)
    for absolute, relative in (("start", "rel_start"), ("end", "rel_end"), ("shape", "rel_shape")):
        if args.get(absolute) is not None and args.get(relative) is not None:
            raise ValueError(f"slice: give either {absolute!r} or {relative!r}, not both")
    has_end = args.get("end") is not None or args.get("rel_end") is not None
    has_shape = args.get("shape") is not None or args.get("rel_shape") is not None
    if has_end and has_shape:
        raise ValueError("slice: give either an end ('end'/'rel_end') or a shape, not both")
    start = _per_axis("start", args.get("start"), count)
    rel_start = _per_axis("rel_start", args.get("rel_start"), count)
    starts_f = [
        start[k]
        if start is not None
        else rel_start[k] * extents[k]
        if rel_start is not None
        else 0.0
        for k in range(count)
    ]
    end = _per_axis("end", args.get("end"), count)
    rel_end = _per_axis("rel_end", args.get("rel_end"), count)
    shape = _per_axis("shape", args.get("shape"), count)
    rel_shape = _per_axis("rel_shape", args.get("rel_shape"), count)
    ends_f = []
    for k in range(count):
        if end is not None:
            ends_f.append(end[k])
        elif rel_end is not None:
            ends_f.append(rel_end[k] * extents[k])
        elif shape is not None:
            ends_f.append(starts_f[k] + shape[k])
        elif rel_shape is not None:
            ends_f.append(starts_f[k] + rel_shape[k] * extents[k])
        else:
            ends_f.append(float(extents[k]))
    return [_round(s) for s in starts_f], [_round(e) for e in ends_f]


def _positional_window(
    extents: Sequence[int], anchor: np.ndarray, shape: np.ndarray, args: Mapping[str, Any]
) -> tuple[list[int], list[int]]:
    count = len(extents)

    def scaled(values: np.ndarray, normalized: bool, what: str) -> list[float]:
        flat = np.asarray(values).ravel()
        if flat.size == 1:
            flat = np.repeat(flat, count)
        if flat.size != count:
            raise ValueError(
                f"slice: the {what} input needs {count} values (one per axis), got {flat.size}"
            )
        scale = normalized and flat.dtype.kind == "f"
        return [float(v) * (extents[k] if scale else 1.0) for k, v in enumerate(flat)]

    starts = scaled(anchor, args["normalized_anchor"], "anchor")
    sizes = scaled(shape, args["normalized_shape"], "shape")
    return [_round(s) for s in starts], [_round(s + z) for s, z in zip(starts, sizes, strict=True)]


def slice_indices(start: int, end: int, extent: int, policy: str) -> np.ndarray:
    """Input indices for output positions ``start..end-1``; -1 marks padding (constant policy)."""
    idx = np.arange(start, end)
    if policy in ("pad", "constant"):
        return np.where((idx >= 0) & (idx < extent), idx, -1)
    if policy in ("edge", "clamp"):
        return np.clip(idx, 0, extent - 1)
    if policy == "wrap":
        return np.mod(idx, extent)
    if policy in ("reflect", "reflect_1001"):
        period = 2 * extent
        m = np.mod(idx, period)
        return np.where(m < extent, m, period - 1 - m)
    if policy == "reflect_101":
        if extent == 1:
            return np.zeros_like(idx)
        period = 2 * extent - 2
        m = np.mod(idx, period)
        return np.where(m < extent, m, period - m)
    return idx


def slice_axes(layout: str, ndim: int, args: Mapping[str, Any]) -> list[int]:
    """The axes the window's coordinates are for (``axis_names``, else ``axes``, else ``WH`` when
    the layout has them, else ``(1, 0)``); an empty ``axes`` means every axis, in order, as in
    DALI."""
    names = args["axis_names"]
    axes = args["axes"]
    if axes is not None and len(axes) == 0 and not names:
        return list(range(ndim))
    if names is None and axes is None and "W" in layout and "H" in layout:
        names = "WH"
    if names:
        return named_axes("slice", layout, names)
    result = axes_in_range("slice", axes if axes is not None else (1, 0), ndim)
    if len(set(result)) != len(result):
        raise ValueError(f"slice: axes {tuple(result)} repeat an axis")
    return result


def slice_bounds(
    axes: Sequence[int],
    shape: Sequence[int],
    window_inputs: Sequence[np.ndarray],
    args: Mapping[str, Any],
) -> list[tuple[int, int]]:
    """Each sliced axis's ``[start, end)`` in a sample of ``shape``, after the out-of-bounds
    policy (a window may still reach outside ``shape``: those positions pad).

    Args:
        axes: the sliced axes (:func:`slice_axes`).
        shape: the sample's shape.
        window_inputs: the ``anchor`` and ``shape`` inputs, or nothing (named arguments).
        args: ``slice``'s arguments.

    Raises:
        ValueError: inconsistent window arguments, a window that ends before it starts, or one
            outside the sample under ``out_of_bounds_policy='error'``.
    """
    extents = [shape[a] for a in axes]
    named = [n for n in _NAMED if args.get(n) is not None]
    ends = [n for n in ("end", "rel_end", "shape", "rel_shape") if n in named]
    if len(ends) > 1:  # checked first, with DALI's wording, as DALI does
        raise ValueError(
            '"end", "rel_end", "shape", and "rel_shape" arguments are mutually exclusive '
            f"(slice got {', '.join(ends)})"
        )
    if len(window_inputs) == 2:
        if named:
            raise ValueError(
                f"slice: arguments {named} cannot be combined with anchor and shape inputs"
            )
        starts, ends = _positional_window(extents, window_inputs[0], window_inputs[1], args)
    elif len(window_inputs) == 1:
        raise ValueError("slice: give both the anchor and the shape inputs, or neither")
    else:
        starts, ends = slice_window(extents, args)
    policy = args["out_of_bounds_policy"]
    bounds = []
    for axis, start, end, extent in zip(axes, starts, ends, extents, strict=True):
        if end < start:
            raise ValueError(
                f"slice: the window along axis {axis} ends ({end}) before it starts ({start})"
            )
        if policy == "trim_to_shape":
            start, end = max(start, 0), min(max(end, 0), extent)
            start = min(start, end)
        bounds.append((start, end))
    if policy == "error" and any(
        start < 0 or end > extent for (start, end), extent in zip(bounds, extents, strict=True)
    ):
        window = {a: (start, end - start) for a, (start, end) in zip(axes, bounds, strict=True)}
        raise out_of_bounds("slice", shape, window)
    return bounds


class SliceKernel(SampleKernel):
    """Per-sample ``slice`` with named arguments or ``anchor``/``shape`` inputs."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Slice one sample."""
        data = inputs[0]
        layout = sample.layouts[0]
        out_type = output_dtype("slice", args["dtype"], data.dtype, (data.dtype, *SLICE_TYPES))
        axes = slice_axes(layout, data.ndim, args)
        bounds = slice_bounds(axes, data.shape, inputs[1:], args)
        policy = args["out_of_bounds_policy"]
        index: list[np.ndarray | slice] = [slice(None)] * data.ndim
        padded = []
        for axis, (start, end) in zip(axes, bounds, strict=True):
            extent = data.shape[axis]
            if 0 <= start <= end <= extent:
                index[axis] = slice(start, end)
            else:
                if extent == 0:
                    raise ValueError(f"slice: cannot extend the empty axis {axis}")
                index[axis] = slice_indices(start, end, extent, policy)
                padded.append(axis)
        out, masks = self._gather(data, index, padded, policy)
        if out.dtype != out_type:
            out = saturate_cast(out, out_type)
        if masks:
            self._fill(out, masks, layout, args["fill_values"])
        return out

    @staticmethod
    def _gather(
        data: np.ndarray, index: list[np.ndarray | slice], padded: list[int], policy: str
    ) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """The window (padding positions hold arbitrary values) and the padding masks."""
        if not padded:
            return np.ascontiguousarray(data[tuple(index)]), {}
        masks = {}
        if policy in ("pad", "constant"):
            for axis in padded:
                idx = index[axis]
                assert isinstance(idx, np.ndarray)
                masks[axis] = idx < 0
                index[axis] = np.maximum(idx, 0)
        out = data
        for axis, idx in enumerate(index):
            if isinstance(idx, slice):
                out = out[(slice(None),) * axis + (idx,)]
            else:
                out = np.take(out, idx, axis=axis)
        return np.array(out, copy=True), masks

    @staticmethod
    def _fill(
        out: np.ndarray, masks: dict[int, np.ndarray], layout: str, fill_values: Sequence[float]
    ) -> None:
        """Write ``fill_values`` (one, or one per channel) where ``masks`` mark padding."""
        fill = np.asarray(fill_values, dtype=np.float64)
        channel = layout.find("C") if layout else -1
        if fill.size > 1:
            if channel < 0 or out.shape[channel] != fill.size:
                channels = out.shape[channel] if channel >= 0 else "no channel axis"
                raise ValueError(
                    f"slice: {fill.size} fill_values given but the output has {channels} "
                    f"channels (layout {layout!r})"
                )
            shape = [1] * out.ndim
            shape[channel] = fill.size
            values = np.broadcast_to(saturate_cast(fill, out.dtype).reshape(shape), out.shape)
        else:
            values = np.broadcast_to(saturate_cast(fill.reshape(1), out.dtype), out.shape)
        for axis, mask in masks.items():
            sel: list[Any] = [slice(None)] * out.ndim
            sel[axis] = mask
            out[tuple(sel)] = values[tuple(sel)]
