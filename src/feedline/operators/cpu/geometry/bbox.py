"""Bounding-box helpers and the ``bb_flip`` / ``bbox_paste`` operators.

Boxes are relative coordinates (``[0, 1]`` of the image). A *bbox layout* names the meaning of
each coordinate: ``x y z`` are start anchors, ``X Y Z`` end anchors and ``W H D`` extents, so
``"xyXY"`` is ``[left, top, right, bottom]`` and ``"xyWH"`` is ``[left, top, width, height]``.
Internally a set of boxes is a pair ``(lo, hi)`` of ``(N, ndim)`` arrays in ``x, y, z`` order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel

__all__ = [
    "BBoxPasteKernel",
    "BbFlipKernel",
    "as_float_boxes",
    "box_volume",
    "check_boxes",
    "flip_boxes",
    "intersection_volume",
    "iou",
    "paste_boxes",
    "read_boxes",
    "resolve_bbox_layout",
    "write_boxes",
]

_STARTS, _ENDS, _EXTENTS = "xyz", "XYZ", "WHD"


def resolve_bbox_layout(layout: str, ndim: int, arg_name: str = "bbox_layout") -> str:
    """Check ``layout`` for ``ndim``-D boxes; ``""`` gives ``"xyXY"`` / ``"xyzXYZ"``.

    Raises:
        ValueError: if the layout is not a permutation of the start/end or start/extent form.
    """
    start_end = _STARTS[:ndim] + _ENDS[:ndim]
    start_extent = _STARTS[:ndim] + _EXTENTS[:ndim]
    if not layout:
        return start_end
    if sorted(layout) not in (sorted(start_end), sorted(start_extent)):
        raise ValueError(
            f"{arg_name} {layout!r} is not valid for {ndim}-D boxes: it must be a permutation "
            f"of {start_end!r} or {start_extent!r}"
        )
    return layout


def as_float_boxes(
    boxes: np.ndarray, ncoords: int | None = None, what: str = "boxes"
) -> np.ndarray:
    """Return ``boxes`` as a float array of shape ``(N, ncoords)``.

    ``ncoords=None`` accepts 4 (2-D) or 6 (3-D) coordinates per box.

    Raises:
        TypeError: for a non-floating dtype.
        ValueError: for a shape that is not ``(N, ncoords)``.
    """
    if not np.issubdtype(boxes.dtype, np.floating):
        raise TypeError(f"{what} must be floating point, got {boxes.dtype}")
    allowed = (ncoords,) if ncoords is not None else (4, 6)
    if boxes.ndim != 2 or boxes.shape[1] not in allowed:
        expected = " or ".join(f"(N, {n})" for n in allowed)
        raise ValueError(f"{what} must have shape {expected}, got {boxes.shape}")
    return boxes


def read_boxes(coords: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """Split ``(N, 2*ndim)`` coordinates in ``layout`` into float64 ``(lo, hi)`` corners."""
    ndim = coords.shape[1] // 2
    coords = coords.astype(np.float64, copy=False)
    lo = np.stack([coords[:, layout.index(_STARTS[d])] for d in range(ndim)], axis=1)
    if _ENDS[0] in layout:
        hi = np.stack([coords[:, layout.index(_ENDS[d])] for d in range(ndim)], axis=1)
    else:
        hi = lo + np.stack([coords[:, layout.index(_EXTENTS[d])] for d in range(ndim)], axis=1)
    return lo.reshape(-1, ndim), hi.reshape(-1, ndim)


def write_boxes(lo: np.ndarray, hi: np.ndarray, layout: str) -> np.ndarray:
    """Inverse of :func:`read_boxes`: corners back to float32 coordinates in ``layout``."""
    ndim = lo.shape[1]
    out = np.empty((lo.shape[0], 2 * ndim), dtype=np.float32)
    uses_ends = _ENDS[0] in layout
    for d in range(ndim):
        out[:, layout.index(_STARTS[d])] = lo[:, d]
        if uses_ends:
            out[:, layout.index(_ENDS[d])] = hi[:, d]
        else:
            out[:, layout.index(_EXTENTS[d])] = hi[:, d] - lo[:, d]
    return out


def box_volume(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Area (2-D) or volume (3-D) of each box; inverted boxes count as empty."""
    return np.clip(hi - lo, 0.0, None).prod(axis=-1)


def intersection_volume(
    lo_a: np.ndarray, hi_a: np.ndarray, lo_b: np.ndarray, hi_b: np.ndarray
) -> np.ndarray:
    """Volume of the intersection of boxes ``a`` and ``b`` (broadcasting over leading axes)."""
    return box_volume(np.maximum(lo_a, lo_b), np.minimum(hi_a, hi_b))


def iou(lo_a: np.ndarray, hi_a: np.ndarray, lo_b: np.ndarray, hi_b: np.ndarray) -> np.ndarray:
    """Intersection over union (0 where both boxes are empty), broadcasting over leading axes."""
    inter = intersection_volume(lo_a, hi_a, lo_b, hi_b)
    union = box_volume(lo_a, hi_a) + box_volume(lo_b, hi_b) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def check_boxes(boxes: Any) -> None:
    """Check a sample of 2-D boxes (a NumPy or CuPy array): floating point, 4 coordinates each.

    Raises:
        TypeError: not floating point.
        ValueError: the size is not a multiple of 4.
    """
    if not np.issubdtype(boxes.dtype, np.floating):
        raise TypeError(f"boxes must be floating point, got {boxes.dtype}")
    if boxes.size % 4:
        raise ValueError(
            f"boxes must hold 4 coordinates per box, got shape {boxes.shape} ({boxes.size} values)"
        )


def _four_coordinate_boxes(boxes: np.ndarray) -> np.ndarray:
    check_boxes(boxes)
    return boxes.reshape(-1, 4).astype(np.float32)


def flip_boxes(boxes: np.ndarray, ltrb: bool, horizontal: bool, vertical: bool) -> np.ndarray:
    """Mirror relative 2-D boxes: ``x -> 1 - x`` horizontally, ``y -> 1 - y`` vertically.

    Args:
        boxes: float array holding 4 coordinates per box (any shape with ``size % 4 == 0``).
        ltrb: True for ``[l, t, r, b]``, False for ``[x, y, w, h]``.
        horizontal: flip the x axis.
        vertical: flip the y axis.

    Returns:
        float32 boxes of the input's shape.
    """
    flat = _four_coordinate_boxes(boxes)
    one = np.float32(1.0)
    for axis, flip in ((0, horizontal), (1, vertical)):
        if not flip:
            continue
        start = flat[:, axis].copy()
        if ltrb:
            flat[:, axis] = one - flat[:, axis + 2]
            flat[:, axis + 2] = one - start
        else:
            flat[:, axis] = one - start - flat[:, axis + 2]
    return flat.reshape(boxes.shape)


def paste_boxes(
    boxes: np.ndarray, ratio: float, paste_x: float, paste_y: float, ltrb: bool
) -> np.ndarray:
    """Map boxes of an image pasted onto a canvas ``ratio`` times larger (see ``fn.bbox_paste``).

    Corners become ``c / ratio + paste * (ratio - 1) / ratio``; extents ``w / ratio``. The offset
    is nudged down (float32) where needed so that a box ending at 1 still ends at or before 1.

    Raises:
        ValueError: if ``ratio < 1``.
    """
    if not ratio >= 1.0:
        raise ValueError(f"ratio must be at least 1 (the canvas is never smaller), got {ratio}")
    flat = _four_coordinate_boxes(boxes)
    scale = np.float32(1.0) / np.float32(ratio)
    offset_mul = (np.float32(ratio) - np.float32(1.0)) / np.float32(ratio)
    offsets = []
    for paste in (paste_x, paste_y):
        offset = np.float32(paste) * offset_mul
        if scale + offset > 1:
            offset = np.float32(1.0) - scale
            while scale + offset > 1:
                offset = np.nextafter(offset, np.float32(-1.0))
        offsets.append(offset)
    offset_xy = np.array(offsets, dtype=np.float32)
    flat[:, :2] = flat[:, :2] * scale + offset_xy
    flat[:, 2:] = flat[:, 2:] * scale + (offset_xy if ltrb else np.float32(0.0))
    return flat.reshape(boxes.shape)


class BbFlipKernel(SampleKernel):
    """``bb_flip``: mirror boxes horizontally and/or vertically."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        return flip_boxes(inputs[0], args["ltrb"], bool(args["horizontal"]), bool(args["vertical"]))


class BBoxPasteKernel(SampleKernel):
    """``bbox_paste``: boxes of an image pasted onto a larger canvas."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        return paste_boxes(inputs[0], args["ratio"], args["paste_x"], args["paste_y"], args["ltrb"])
