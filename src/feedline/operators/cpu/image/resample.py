"""Separable image resampling with DALI's geometry and filters.

Conventions (checked against DALI 2.4 CPU): output pixel ``j`` samples the source at
``c = start + (j + 0.5) * scale`` with ``scale = (end - start) / out_size``; filter taps sit at
input pixel centres ``i + 0.5``; taps outside the image take the nearest edge pixel (clamp) and
the weights are normalised by their sum. When downscaling (``scale > 1``) with ``antialias`` the
filter is stretched by ``scale`` (``linear`` becomes a triangle of radius ``scale``). Nearest
neighbour picks ``floor(c)`` computed in float32. Integer outputs are rounded to nearest and
saturated.

Three implementations share these rules. 8-bit images go to the compiled kernel (``feedline_cpu.c``
in :mod:`feedline.operators.native`), which computes exactly what the NumPy implementation
computes, in the same float32 order. Without a C compiler (or with ``FEEDLINE_NATIVE=0``), 8-bit
images with 1, 3 or 4 channels and the linear/cubic/Lanczos filters go to Pillow's resampler
(within 1 of the exact result for linear, 2 for cubic/Lanczos: Pillow works in fixed point and
rounds its intermediate pass to 8 bits). Everything else takes the NumPy implementation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from feedline.core.types import InterpType
from feedline.operators.cpu.common.tensors import saturate_cast
from feedline.operators.cpu.image.bindings import axis_weights_native, resample_u8
from feedline.operators.cpu.image.windows import Source

__all__ = [
    "FILTER_IDS",
    "FILTER_SUPPORT",
    "axis_weights",
    "edge_region",
    "gaussian_taps",
    "pick_filter",
    "pil_filter",
    "resample",
    "resample_native",
    "resample_pil",
    "resample_reference",
]

#: Half-width of each filter at scale 1, in input pixels.
FILTER_SUPPORT = {
    InterpType.INTERP_NN: 0.5,
    InterpType.INTERP_LINEAR: 1.0,
    InterpType.INTERP_TRIANGULAR: 1.0,
    InterpType.INTERP_CUBIC: 2.0,
    InterpType.INTERP_LANCZOS3: 3.0,
    InterpType.INTERP_GAUSSIAN: 2.0,
}
#: DALI's Gaussian: ``exp(-x * x)`` for ``x`` in ``[-2, 2]``, tabulated at 65 points.
_GAUSSIAN_TABLE = np.exp(-np.square(np.linspace(-2, 2, 65))).astype(np.float32)


def gaussian_taps(
    out_size: int, start: float, scale: float, radius: float
) -> tuple[np.ndarray, np.ndarray]:
    """DALI's Gaussian taps of one axis, computed as DALI 2.4 does, in float32: ``(raw, values)``
    with ``raw`` the ``(out, K)`` source indices (unclamped) and ``values`` their weights
    (not normalised).

    The table of ``exp(-x * x)`` (``x`` in ``[-2, 2]``, 65 points) is spread over
    ``max(1, 2 * radius)`` pixels and read with linear interpolation; an output takes the
    ``ceil`` of that many taps, from the first pixel centre at or after the table's start. At
    radius 1 (no antialiasing) a sample on a pixel centre thus takes ``exp(-4)`` of its weight
    from one neighbour only, and float32 rounding decides which one (the next pixel for the
    first outputs, the previous one further on), exactly as DALI's CPU resize.
    """
    f32 = np.float32
    sigma = f32(float(f32(radius) * f32(0.5)) / math.sqrt(2))
    support = max(f32(1), f32(4 * math.sqrt(2)) * sigma)
    step = f32(64) / support  # table entries per pixel
    anchor = f32(32) / step
    taps = math.ceil(f32(64) / step)
    origin = f32(start) + f32(0.5) * f32(scale) - f32(0.5) - anchor
    position = np.arange(out_size, dtype=f32) * f32(scale) + origin
    first = np.ceil(position)
    table_at = (first - position)[:, None] + np.arange(taps, dtype=f32)
    table_at *= step
    low = np.floor(table_at)
    index = low.astype(np.int64)
    below = np.where(index >= 0, _GAUSSIAN_TABLE[np.clip(index, 0, 64)], f32(0))
    above = np.where(index + 1 <= 64, _GAUSSIAN_TABLE[np.clip(index + 1, 0, 64)], f32(0))
    values = below + (table_at - low) * (above - below)
    values = np.where((table_at > -1) & (table_at < 65), values, f32(0))
    return first.astype(np.int64)[:, None] + np.arange(taps), values.astype(np.float64)


def _filter_values(interp: InterpType, x: np.ndarray) -> np.ndarray:
    ax = np.abs(x)
    if interp in (InterpType.INTERP_LINEAR, InterpType.INTERP_TRIANGULAR):
        return np.maximum(0.0, 1.0 - ax)
    if interp == InterpType.INTERP_CUBIC:
        a = -0.5
        near = ((a + 2) * ax - (a + 3)) * ax * ax + 1
        far = ((a * ax - 5 * a) * ax + 8 * a) * ax - 4 * a
        return np.where(ax < 1, near, np.where(ax < 2, far, 0.0))
    if interp == InterpType.INTERP_LANCZOS3:
        return np.where(ax < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
    raise ValueError(f"unsupported interpolation {interp!r}")


def axis_weights(
    in_size: int, out_size: int, start: float, end: float, interp: InterpType, antialias: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The filter taps of one axis: output ``j`` reads source positions ``first[j] + k`` for
    ``k < K`` with ``weights[j, k]`` (``first`` is ``(out,)`` int64, ``weights`` ``(out, K)``
    float32).

    Taps outside the image are folded onto the edge pixel they clamp to, and zero-weight taps at
    either end are dropped, so ``K`` is the widest non-zero span (at most ``in_size``). The
    compiled kernel computes the same taps (``fl_axis_weights``).
    """
    scale = (end - start) / out_size
    if interp == InterpType.INTERP_NN:
        pos = np.float32(start) + (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * (
            np.float32(scale)
        )
        first = np.clip(np.floor(pos).astype(np.int64), 0, in_size - 1)
        return first, np.ones((out_size, 1), np.float32)
    centres = start + (np.arange(out_size) + 0.5) * scale
    stretch = abs(scale) if antialias and abs(scale) > 1 else 1.0
    if interp == InterpType.INTERP_GAUSSIAN:
        raw, values = gaussian_taps(out_size, start, scale, stretch)
    else:
        support = FILTER_SUPPORT[interp] * stretch
        taps = math.ceil(2 * support) + 2
        raw = np.floor(centres - support - 0.5).astype(np.int64)[:, None] + np.arange(taps)
        values = _filter_values(interp, (raw + 0.5 - centres[:, None]) / stretch)
    total = values.sum(axis=1)
    index = np.clip(raw, 0, in_size - 1)
    nonzero = values != 0
    reaches = total != 0
    nearest = np.clip(np.floor(centres).astype(np.int64), 0, in_size - 1)
    low = np.where(reaches, np.where(nonzero, index, in_size).min(axis=1), nearest)
    high = np.where(reaches, np.where(nonzero, index, -1).max(axis=1), nearest)
    width = min(int((high - low).max()) + 1, in_size)
    first = np.minimum(low, in_size - width)
    folded = np.zeros((out_size, width))
    rows = np.broadcast_to(np.arange(out_size)[:, None], index.shape)
    np.add.at(folded, (rows[nonzero], (index - first[:, None])[nonzero]), values[nonzero])
    weights = np.divide(folded, total[:, None], out=np.zeros_like(folded), where=reaches[:, None])
    lost = ~reaches
    weights[lost, nearest[lost] - first[lost]] = 1.0
    return first, weights.astype(np.float32)


def pick_filter(scale: float, min_filter: InterpType, mag_filter: InterpType) -> InterpType:
    """The filter of an axis with ``scale`` source pixels per output pixel: ``min_filter`` where
    it shrinks, else ``mag_filter``."""
    return min_filter if abs(scale) > 1 else mag_filter


def resample(
    image: np.ndarray,
    out_size: Sequence[int],
    source: Source,
    min_filter: InterpType = InterpType.INTERP_LINEAR,
    mag_filter: InterpType = InterpType.INTERP_LINEAR,
    antialias: bool = True,
    out_dtype: np.dtype | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Resample an ``HW`` or ``HWC`` image.

    Args:
        image: the input, 2-D or 3-D (channels last).
        out_size: ``(out_h, out_w)``.
        source: ``((y_start, y_end), (x_start, x_end))``, the region mapped onto the output;
            a start greater than its end mirrors that axis.
        min_filter: filter used along axes that are downscaled.
        mag_filter: filter used along axes that are upscaled.
        antialias: stretch the filter when downscaling.
        out_dtype: output type (default: the input's).
        out: where the compiled resampler writes an 8-bit result (see :func:`resample_native`);
            the other paths return a new array.

    Returns:
        The resampled image, ``(out_h, out_w[, C])``: ``out`` when it was written.
    """
    out_dtype = np.dtype(out_dtype if out_dtype is not None else image.dtype)
    out_h, out_w = int(out_size[0]), int(out_size[1])
    scales = [(e - s) / n for (s, e), n in zip(source, (out_h, out_w), strict=True)]
    filters = [pick_filter(sc, min_filter, mag_filter) for sc in scales]
    if image.dtype == np.uint8 and out_dtype == np.uint8:
        native = resample_native(image, (out_h, out_w), source, filters, antialias, out)
        if native is not None:
            return native
    pil = pil_filter(image, filters, scales, antialias, out_dtype)
    if pil is not None:
        return resample_pil(image, (out_h, out_w), source, pil)
    return resample_reference(image, (out_h, out_w), source, filters, antialias, out_dtype)


def resample_reference(
    image: np.ndarray,
    out_size: Sequence[int],
    source: Source,
    filters: Sequence[InterpType],
    antialias: bool,
    out_dtype: np.dtype,
    axes: Sequence[int] | None = None,
) -> np.ndarray:
    """The NumPy implementation of :func:`resample` (any dtype), rows first, in float32.

    ``filters`` holds the filter of each axis, already chosen between the min and mag filters.
    ``axes`` are the axes that ``out_size``, ``source`` and ``filters`` describe, resampled in
    that order (default: the leading ones); any number of axes, in arrays of any rank.
    """
    work = image
    axes = range(len(source)) if axes is None else axes
    for axis, (start, end), n, interp in zip(axes, source, out_size, filters, strict=True):
        first, weights = axis_weights(work.shape[axis], int(n), start, end, interp, antialias)
        if interp == InterpType.INTERP_NN:
            work = np.take(work, first, axis=axis)
            continue
        source_values = work.astype(np.float32, copy=False)
        shape = [1] * work.ndim
        shape[axis] = int(n)
        total = np.take(source_values, first, axis=axis) * weights[:, 0].reshape(shape)
        for tap in range(1, weights.shape[1]):
            total += np.take(source_values, first + tap, axis=axis) * weights[:, tap].reshape(shape)
        work = total
    if work.dtype == out_dtype:
        return np.ascontiguousarray(work)
    return saturate_cast(work, out_dtype)


def resample_native(
    image: np.ndarray,
    out_size: Sequence[int],
    source: Source,
    filters: Sequence[InterpType],
    antialias: bool,
    out: np.ndarray | None = None,
) -> np.ndarray | None:
    """Resample an 8-bit image with the compiled kernel; None when it cannot run here.

    Computes what :func:`resample_reference` computes (same taps, same float32 order; a weight
    may differ in its last bit, so a rare pixel may differ by 1).

    Args:
        image: ``HW`` or ``HWC`` uint8 input.
        out_size: ``(out_h, out_w)``.
        source: the source region per axis (start > end mirrors).
        filters: the filter of each axis (already chosen between min/mag filter).
        antialias: stretch the filter when downscaling.
        out: the uint8 destination; it may keep fewer channels than ``image`` (e.g. 3 of RGBX).
    """
    out_h, out_w = int(out_size[0]), int(out_size[1])
    if out is None:
        out = np.empty((out_h, out_w, *image.shape[2:]), np.uint8)
    taps = []
    for extent, n, (start, end), interp in zip(
        image.shape[:2], (out_h, out_w), source, filters, strict=True
    ):
        axis = axis_weights_native(extent, n, start, end, FILTER_IDS[interp], antialias)
        if axis is None:
            return None
        taps += axis
    if not resample_u8(image, out, *taps):
        return None
    return out


#: The filter numbers of ``fl_axis_weights``.
FILTER_IDS = {
    InterpType.INTERP_NN: 0,
    InterpType.INTERP_LINEAR: 1,
    InterpType.INTERP_TRIANGULAR: 1,
    InterpType.INTERP_CUBIC: 2,
    InterpType.INTERP_LANCZOS3: 3,
    InterpType.INTERP_GAUSSIAN: 4,
}

_PIL_FILTERS = {
    InterpType.INTERP_LINEAR: "BILINEAR",
    InterpType.INTERP_TRIANGULAR: "BILINEAR",
    InterpType.INTERP_CUBIC: "BICUBIC",
    InterpType.INTERP_LANCZOS3: "LANCZOS",
}
_PIL_SUPPORT = {name: FILTER_SUPPORT[interp] for interp, name in _PIL_FILTERS.items()}


def pil_filter(
    image: np.ndarray,
    filters: Sequence[InterpType],
    scales: Sequence[float],
    antialias: bool,
    out_dtype: np.dtype,
) -> str | None:
    """The Pillow filter name that reproduces this resampling, or None if Pillow cannot.

    Pillow always antialiases and uses one filter for both axes; cubic and Lanczos are used only
    for downscaling, where Pillow's kernels are DALI's.
    """
    if image.dtype != np.uint8 or out_dtype != np.uint8:
        return None
    if not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] in (1, 3, 4))):
        return None
    names = set()
    for interp, scale in zip(filters, scales, strict=True):
        name = _PIL_FILTERS.get(interp)
        upscale = abs(scale) <= 1
        if name is None or (upscale and name != "BILINEAR") or (not upscale and not antialias):
            return None
        names.add(name)
    return names.pop() if len(names) == 1 else None


def edge_region(
    image: np.ndarray, source: Source, support: Sequence[float], keep_width: bool = False
) -> tuple[np.ndarray, float, float]:
    """The part of ``image`` a filter reads, with clamped (replicated) borders where it leaves.

    Args:
        image: ``HW`` or ``HWC`` input.
        source: the normalised (start < end) source region.
        support: filter half-width per axis, in input pixels.
        keep_width: keep every column when no padding is needed (keeps rows contiguous).

    Returns:
        ``(region, y_offset, x_offset)``: source coordinates minus the offsets index the region.
        A view when nothing needs padding, else a copy.
    """
    bounds = []
    for (start, end), sup, extent in zip(source, support, image.shape[:2], strict=True):
        lo = math.floor(start - sup) - 1
        hi = math.ceil(end + sup) + 1
        bounds.append((lo, hi, extent))
    (ylo, yhi, height), (xlo, xhi, width) = bounds
    if ylo >= 0 and yhi <= height and xlo >= 0 and xhi <= width:
        if keep_width:
            return image[ylo:yhi], float(ylo), 0.0
        return image[ylo:yhi, xlo:xhi], float(ylo), float(xlo)
    top, left = max(-ylo, 0), max(-xlo, 0)
    inner = image[max(ylo, 0) : min(yhi, height), max(xlo, 0) : min(xhi, width)]
    rows, cols = inner.shape[:2]
    if rows == 0 or cols == 0:  # the region lies wholly outside: every tap is an edge pixel
        ys = np.clip(np.arange(ylo, yhi), 0, height - 1)
        xs = np.clip(np.arange(xlo, xhi), 0, width - 1)
        return np.take(np.take(image, ys, axis=0), xs, axis=1), float(ylo), float(xlo)
    out = np.empty((yhi - ylo, xhi - xlo, *image.shape[2:]), dtype=image.dtype)
    out[top : top + rows, left : left + cols] = inner
    out[:top, left : left + cols] = inner[:1]
    out[top + rows :, left : left + cols] = inner[-1:]
    out[:, :left] = out[:, left : left + 1]
    out[:, left + cols :] = out[:, left + cols - 1 : left + cols]
    return out, float(ylo), float(xlo)


def resample_pil(
    image: np.ndarray,
    out_size: Sequence[int],
    source: Source,
    filter_name: str,
) -> np.ndarray:
    """Resample an 8-bit ``HW``/``HWC`` (1, 3 or 4 channels) image with Pillow; the result has the
    input's channel count."""
    from PIL import Image

    out_h, out_w = int(out_size[0]), int(out_size[1])
    (y0, y1), (x0, x1) = source
    flip_y, flip_x = y0 > y1, x0 > x1
    y0, y1 = sorted((y0, y1))
    x0, x1 = sorted((x0, x1))
    base = _PIL_SUPPORT[filter_name]
    support = [base * max((y1 - y0) / out_h, 1.0), base * max((x1 - x0) / out_w, 1.0)]
    region, dy, dx = edge_region(image, ((y0, y1), (x0, x1)), support, keep_width=True)
    squeeze = region.ndim == 3 and region.shape[2] == 1
    if squeeze:
        region = region[:, :, 0]
    if region.ndim == 3 and region.shape[2] == 4:
        pil = Image.frombuffer(
            "RGBX", region.shape[1::-1], np.ascontiguousarray(region), "raw", "RGBX", 0, 1
        )
    else:
        pil = Image.fromarray(region)
    resized = pil.resize(
        (out_w, out_h),
        getattr(Image.Resampling, filter_name),
        box=(x0 - dx, y0 - dy, x1 - dx, y1 - dy),
    )
    out = np.asarray(resized)
    if squeeze:
        out = out[:, :, None]
    if flip_y or flip_x:
        out = np.ascontiguousarray(out[:: -1 if flip_y else 1, :: -1 if flip_x else 1])
    return out
