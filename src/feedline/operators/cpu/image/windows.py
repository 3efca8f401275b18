"""Geometry shared by the image operators: DALI's rounding, crop windows and resize sizes.

Conventions (all measured on DALI 2.4):

* Pixel ``i`` covers ``[i, i + 1)``; its centre is ``i + 0.5``.
* Crop anchor along an axis: ``round(pos * (in_size - crop_size))``, rounding halves away from
  zero (``rounding="round"``) or toward zero (``rounding="truncate"``). A fractional crop size is
  truncated.
* Resize output sizes are computed in floating point and rounded half away from zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.operators.cpu.common.errors import out_of_bounds

__all__ = [
    "Source",
    "crop_anchor",
    "crop_shape_from_args",
    "extract_window",
    "random_crop_window",
    "resize_plan",
    "round_half_away",
    "spatial_axes",
]

#: A resampled region per axis: ``((y_start, y_end), (x_start, x_end))`` in source pixels; a
#: start greater than its end mirrors that axis.
Source = tuple[tuple[float, float], tuple[float, float]]

#: Spatial axis letters in the order DALI uses for ``crop``/``size`` arguments.
_SPATIAL = "DHW"


def round_half_away(value: float) -> int:
    """Round to the nearest integer, halves away from zero (C's ``round``)."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def spatial_axes(layout: str) -> dict[str, int]:
    """Positions of the ``D``, ``H`` and ``W`` axes present in ``layout``."""
    return {name: layout.index(name) for name in _SPATIAL if name in layout}


def crop_anchor(in_size: int, crop_size: int, pos: float, rounding: str = "round") -> int:
    """Start of a crop window: ``pos * (in_size - crop_size)`` with ``pos`` a single-precision
    value (as DALI holds it), rounded half away from zero or truncated toward zero."""
    exact = float(np.float32(pos)) * (in_size - crop_size)
    return int(exact) if rounding == "truncate" else round_half_away(exact)


def crop_shape_from_args(op: str, args: Mapping[str, Any], axes: Sequence[str]) -> dict[str, int]:
    """The requested crop extent per spatial axis (``crop`` or ``crop_d/h/w``); truncated to int.

    ``crop`` lists the extents in ``D, H, W`` order for the axes the data has (``(H, W)`` for
    images). Axes with no requested extent are left out (not cropped).

    Raises:
        ValueError: ``crop`` given together with ``crop_h``/``crop_w``/``crop_d``, the wrong
            number of values, or a non-positive extent.
    """
    named = {a: args.get(f"crop_{a.lower()}") for a in axes}
    crop = args.get("crop")
    if crop is not None:
        given = [f"crop_{a.lower()}" for a, v in named.items() if v is not None]
        if given:
            raise ValueError(f"{op}: 'crop' cannot be combined with {', '.join(given)}")
        values = tuple(crop)
        if len(values) != len(axes):
            raise ValueError(
                f"{op}: 'crop' needs {len(axes)} values ({', '.join(axes)}), got {len(values)}"
            )
        named = dict(zip(axes, values, strict=True))
    result: dict[str, int] = {}
    for axis, value in named.items():
        if value is None:
            continue
        extent = int(float(value))
        if extent <= 0:
            raise ValueError(f"{op}: crop extent along {axis} must be positive, got {value}")
        result[axis] = extent
    return result


def extract_window(
    op: str,
    array: np.ndarray,
    window: Mapping[int, tuple[int, int]],
    policy: str = "error",
    fill_values: Sequence[float] = (0.0,),
    channel_axis: int | None = None,
) -> np.ndarray:
    """Cut ``array[start:start + size]`` along the axes in ``window`` (axis → (start, size)).

    Windows that leave the array are handled by ``policy``: ``"error"`` raises, ``"pad"`` fills
    the outside with ``fill_values`` (one value, or one per channel along ``channel_axis``) and
    ``"trim_to_shape"`` shrinks the window to the array.

    Returns:
        A view when the window lies inside the array, else a new array.

    Raises:
        ValueError: the window is out of bounds with ``policy="error"``, or ``fill_values`` does
            not match the number of channels.
    """
    inside = all(
        start >= 0 and start + size <= array.shape[axis] for axis, (start, size) in window.items()
    )
    index: list[slice] = [slice(None)] * array.ndim
    if inside or policy == "trim_to_shape":
        for axis, (start, size) in window.items():
            lo = min(max(start, 0), array.shape[axis])
            hi = min(max(start + size, lo), array.shape[axis])
            index[axis] = slice(lo, hi)
        return array[tuple(index)]
    if policy != "pad":
        raise out_of_bounds(op, array.shape, window)
    out_shape = list(array.shape)
    dst: list[slice] = [slice(None)] * array.ndim
    for axis, (start, size) in window.items():
        out_shape[axis] = size
        lo = min(max(start, 0), array.shape[axis])
        hi = min(max(start + size, lo), array.shape[axis])
        index[axis] = slice(lo, hi)
        dst[axis] = slice(lo - start, hi - start)
    out = np.empty(out_shape, dtype=array.dtype)
    fill = np.asarray(fill_values, dtype=np.float64).ravel()
    if fill.size == 1 or channel_axis is None:
        out.fill(fill[0] if fill.size else 0)
    else:
        channels = out_shape[channel_axis]
        if fill.size != channels:
            raise ValueError(
                f"{op}: fill_values has {fill.size} values, the data has {channels} channels"
            )
        shape = [1] * out.ndim
        shape[channel_axis] = channels
        out[...] = fill.reshape(shape).astype(array.dtype)
    out[tuple(dst)] = array[tuple(index)]
    return out


def random_crop_window(
    rng: np.random.Generator,
    height: int,
    width: int,
    area_range: Sequence[float] = (0.08, 1.0),
    ratio_range: Sequence[float] = (3 / 4, 4 / 3),
    num_attempts: int = 10,
) -> tuple[int, int, int, int]:
    """DALI's random crop window: ``(y, x, h, w)``.

    Each attempt draws an area fraction uniformly from ``area_range`` and an aspect ratio
    (``w / h``) log-uniformly from ``ratio_range``; ``w = round(sqrt(A * area * ratio))`` and
    ``h = round(sqrt(A * area / ratio))``. The first window that fits is placed uniformly at
    random. After ``num_attempts`` failures the largest centred window whose aspect ratio lies in
    ``ratio_range`` is used. All the attempts' uniform numbers (four each) come from one draw.
    An empty image (a zero extent) gives the whole, empty, image.
    """
    if height <= 0 or width <= 0:
        return 0, 0, max(height, 0), max(width, 0)
    area = float(height * width)
    lo_area, hi_area = float(area_range[0]), float(area_range[1])
    lo_ratio, hi_ratio = float(ratio_range[0]), float(ratio_range[1])
    log_lo, log_hi = math.log(lo_ratio), math.log(hi_ratio)
    for u_area, u_ratio, u_y, u_x in rng.random((num_attempts, 4)).tolist():
        scale = lo_area + (hi_area - lo_area) * u_area
        ratio = math.exp(log_lo + (log_hi - log_lo) * u_ratio)
        w = round_half_away(math.sqrt(area * scale * ratio))
        h = round_half_away(math.sqrt(area * scale / ratio))
        if 0 < w <= width and 0 < h <= height:
            return int(u_y * (height - h + 1)), int(u_x * (width - w + 1)), h, w
    ratio = width / height
    if ratio < lo_ratio:
        w, h = width, max(1, min(height, round_half_away(width / lo_ratio)))
    elif ratio > hi_ratio:
        w, h = max(1, min(width, round_half_away(height * hi_ratio))), height
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def resize_plan(
    op: str,
    in_size: Sequence[int],
    args: Mapping[str, Any],
) -> tuple[tuple[int, ...], tuple[tuple[float, float], ...]]:
    """Output size and source region of DALI's ``resize`` for one sample.

    Args:
        op: operator name for error messages.
        in_size: the spatial input extents (``(H, W)``, or ``(D, H, W)`` for a volume).
        args: ``resize_x``, ``resize_y``, ``resize_z``, ``size``, ``resize_shorter``,
            ``resize_longer``, ``mode``, ``max_size``, ``roi_start``, ``roi_end``, ``roi_relative``,
            ``subpixel_scale`` (missing keys take DALI's defaults).

    Returns:
        ``(out_size, source)``: the integer output extents and, per axis, the ``(start, end)``
        of the input region mapped onto the output (``start > end`` flips that axis).

    Raises:
        ValueError: conflicting or invalid size arguments.
    """
    ndim = len(in_size)
    roi = _roi(op, in_size, args)
    roi_size = [abs(e - s) for s, e in roi]
    requested = _requested_size(op, ndim, args)
    shorter, longer = args.get("resize_shorter"), args.get("resize_longer")
    mode = args.get("mode") or "default"
    limits = _limits(op, ndim, args.get("max_size"))
    if shorter or longer:
        extents = [s for s in roi_size if s > 0] or [1.0]  # an empty axis stays empty
        scale = float(shorter) / min(extents) if shorter else float(longer) / max(extents)
        scale = min([scale] + [m / s for s, m in zip(roi_size, limits, strict=True) if s > 0])
        out = [s * scale for s in roi_size]
    else:
        out = _size_with_mode(op, roi_size, requested, mode, limits)
    out_int = tuple(max(1, round_half_away(o)) for o in out)
    if args.get("subpixel_scale", True):
        source = []
        for (start, end), o_float, o_int, extent in zip(roi, out, out_int, roi_size, strict=True):
            if o_float < 1 or extent == 0:  # below one pixel: the whole region (as DALI)
                source.append((start, end))
                continue
            kept = extent / o_float * o_int
            centre = (start + end) / 2
            sign = 1.0 if end >= start else -1.0
            source.append((centre - sign * kept / 2, centre + sign * kept / 2))
        return out_int, tuple(source)
    return out_int, tuple(roi)


def _roi(op: str, in_size: Sequence[int], args: Mapping[str, Any]) -> list[tuple[float, float]]:
    ndim = len(in_size)
    start, end = args.get("roi_start"), args.get("roi_end")
    if start is None and end is None:
        return [(0.0, float(s)) for s in in_size]
    relative = bool(args.get("roi_relative", False))
    full = [1.0 if relative else float(s) for s in in_size]
    start = tuple(start) if start is not None else (0.0,) * ndim
    end = tuple(end) if end is not None else tuple(full)
    if len(start) != ndim or len(end) != ndim:
        raise ValueError(f"{op}: roi_start/roi_end need {ndim} values (one per spatial axis)")
    scale = [float(s) if relative else 1.0 for s in in_size]
    return [(a * k, b * k) for a, b, k in zip(start, end, scale, strict=True)]


def _requested_size(op: str, ndim: int, args: Mapping[str, Any]) -> list[float]:
    size = args.get("size")
    per_axis = [args.get("resize_z"), args.get("resize_y"), args.get("resize_x")][-ndim:]
    if size is not None:
        if any(v is not None for v in per_axis):
            raise ValueError(f"{op}: 'size' cannot be combined with resize_x/resize_y/resize_z")
        values = tuple(size)
        if len(values) == 1:
            values = values * ndim
        if len(values) != ndim:
            raise ValueError(f"{op}: 'size' needs 1 or {ndim} values, got {len(values)}")
        per_axis = list(values)
    result = [float(v) if v is not None else 0.0 for v in per_axis]
    if any(v < 0 for v in result):
        raise ValueError(f"{op}: output sizes must not be negative, got {result}")
    if (args.get("resize_shorter") or args.get("resize_longer")) and any(result):
        raise ValueError(f"{op}: resize_shorter/resize_longer cannot be combined with sizes")
    if args.get("resize_shorter") and args.get("resize_longer"):
        raise ValueError(f"{op}: give resize_shorter or resize_longer, not both")
    if not any(result) and not (args.get("resize_shorter") or args.get("resize_longer")):
        raise ValueError(
            f"{op}: no output size; give resize_x/resize_y(/resize_z), size, resize_shorter or "
            "resize_longer"
        )
    return result


def _limits(op: str, ndim: int, max_size: Sequence[float] | None) -> list[float]:
    """``max_size`` per axis (infinite where not given or not positive)."""
    if not max_size:
        return [math.inf] * ndim
    limits = tuple(max_size)
    if len(limits) == 1:
        limits = limits * ndim
    if len(limits) != ndim:
        raise ValueError(f"{op}: 'max_size' needs 1 or {ndim} values, got {len(limits)}")
    return [float(m) if m > 0 else math.inf for m in limits]


def _size_with_mode(
    op: str,
    roi_size: Sequence[float],
    requested: Sequence[float],
    mode: str,
    limits: Sequence[float],
) -> list[float]:
    """DALI's output size for ``mode``: ``stretch`` keeps an axis without a requested size and
    limits each axis to ``max_size`` on its own; ``default`` scales such an axis by the
    geometric mean of the given scales and limits each axis on its own; ``not_smaller`` and
    ``not_larger`` keep the aspect ratio (the largest / smallest requested scale) within
    ``max_size``."""
    axes = list(zip(requested, roi_size, limits, strict=True))
    if mode == "stretch":
        return [min(m, r if r > 0 else s) for r, s, m in axes]
    if mode == "not_smaller":
        scale = max(r / s for r, s, _ in axes if r > 0 and s > 0)
        return [s * min([scale] + [m / s for _, s, m in axes if s > 0]) for _, s, _ in axes]
    if mode == "not_larger":
        scale = min(((min(m, r) if r > 0 else m) / s for r, s, m in axes if s > 0), default=1.0)
        return [s * scale for _, s, _ in axes]
    if mode != "default":
        raise ValueError(f"{op}: unknown mode {mode!r}")
    ratios = [r / s for r, s, _ in axes if r > 0 and s > 0]
    mean = math.prod(ratios) ** (1 / len(ratios)) if ratios else 1.0
    return [min(m, r if r > 0 else s * mean) for r, s, m in axes]
