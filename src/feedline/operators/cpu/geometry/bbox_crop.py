"""``random_bbox_crop``: a random crop window that keeps bounding boxes consistent.

The search follows DALI's operator:

1. Each round picks one option uniformly: one of ``thresholds``, or "no crop" when
   ``allow_no_crop`` is on. "No crop" returns the whole image and every box.
2. Up to ``num_attempts`` candidate windows are drawn for the option. A relative window draws one
   extent per axis from ``scaling``; where an ``aspect_ratio`` range is a single value, the
   extents are made to follow it (in a random axis order, keeping the largest extent); a window
   whose aspect ratios fall outside ``aspect_ratio`` is discarded. The anchor is uniform in
   ``[0, 1 - extent]``. With ``input_shape`` alone the aspect ratios are those of the window in
   pixels (the largest extent in pixels is kept, so a fixed ratio can make a relative extent
   exceed 1 and its anchor negative, as in DALI). With ``crop_shape`` the window has that size
   (in pixels) and an integer
   anchor uniform between 0 and ``input_shape - crop_shape`` (negative where the window is
   larger than the image, as in DALI 2.4).
3. A window is *valid* when its overlap metric (``threshold_type``: IoU with each box, or the
   fraction of each box inside the window) is at least the threshold for every box
   (``all_boxes_above_threshold``) or for at least one. Boxes are then pruned (by centroid,
   ``lo <= centroid < hi``, or with ``bbox_prune_threshold``: a box is kept when it overlaps the
   window and at least that fraction of its area is inside), and mapped into the window
   (clipped to ``[0, 1]``). A valid window that keeps at least one box ends the search; without
   boxes the first window does.
4. Otherwise the best window so far (highest metric) is remembered and the next round starts.
   After ``total_num_attempts`` windows the best one is returned, with DALI's warning on the
   ``feedline`` logger.

Departures from DALI, all documented in the operator docs: a round stops at its first successful
window; aspect ratios are compared with a relative tolerance of 1e-6 (so fixed ratios such as 4/3
are not lost to rounding); an unbounded search (``total_num_attempts=-1``) that finds nothing in
100,000 windows raises instead of looping forever; overlap of an empty box is 1 when its corner
lies in the window, else 0. A box whose corners are swapped (start > end) is accepted, as DALI
accepts it: it has no area, and is kept, mapped, as the other boxes.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.geometry.bbox import (
    as_float_boxes,
    box_volume,
    intersection_volume,
    iou,
    read_boxes,
    resolve_bbox_layout,
    write_boxes,
)
from feedline.operators.cpu.geometry.schemas import random_bbox_crop_outputs

__all__ = ["CropParams", "CropResult", "RandomBBoxCropKernel", "find_crop", "make_crop_params"]

logger = logging.getLogger("feedline")

UNBOUNDED_SEARCH_LIMIT = 100_000
_ASPECT_TOLERANCE = 1e-6
_NO_CROP = -1.0


@dataclass(frozen=True)
class CropParams:
    """Validated, sample-independent settings of ``random_bbox_crop``."""

    thresholds: tuple[float, ...]
    allow_no_crop: bool
    threshold_type: str
    aspect_ratio: tuple[tuple[float, float], ...]
    scaling: tuple[float, float]
    num_attempts: int
    total_num_attempts: int
    all_boxes_above_threshold: bool
    bbox_prune_threshold: float | None
    fixed_window: bool


@dataclass(frozen=True)
class CropResult:
    """The chosen window and the boxes it keeps.

    Attributes:
        anchor: window start per axis (x, y, z); relative, or pixels with a fixed window.
        shape: window extent per axis, in the same units.
        lo: kept boxes' start corners, relative to the window.
        hi: kept boxes' end corners, relative to the window.
        indices: indices of the kept boxes in the input.
    """

    anchor: np.ndarray
    shape: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    indices: np.ndarray


def _range_pairs(values: tuple[float, ...], arg_name: str) -> tuple[tuple[float, float], ...]:
    pairs = tuple((float(values[i]), float(values[i + 1])) for i in range(0, len(values), 2))
    strict = arg_name == "aspect_ratio"
    for low, high in pairs:
        if (low <= 0 if strict else low < 0) or low > high:
            bound = "0 < min" if strict else "0 <= min"
            raise ValueError(f"{arg_name} range [{low}, {high}] must satisfy {bound} <= max")
    return pairs


def make_crop_params(args: Mapping[str, Any], fixed_window: bool) -> CropParams:
    """Validate the static arguments of ``random_bbox_crop``.

    Args:
        args: the operator's resolved arguments.
        fixed_window: whether ``crop_shape``/``input_shape`` are given (statically or per sample).

    Raises:
        ValueError: naming the offending argument.
    """
    thresholds = tuple(args["thresholds"])
    if not thresholds:
        raise ValueError("thresholds must hold at least one value")
    bad = [t for t in thresholds if not 0.0 <= t <= 1.0]
    if bad:
        raise ValueError(f"thresholds must lie in [0, 1], got {bad[0]}")
    if args["num_attempts"] < 1:
        raise ValueError(f"num_attempts must be at least 1, got {args['num_attempts']}")
    total = args["total_num_attempts"]
    if total != -1 and total < 1:
        raise ValueError(f"total_num_attempts must be -1 (unbounded) or positive, got {total}")
    prune = args["bbox_prune_threshold"]
    if prune is not None and not 0.0 <= prune <= 1.0:
        raise ValueError(f"bbox_prune_threshold must lie in [0, 1], got {prune}")
    aspect = args["aspect_ratio"]
    scaling = args["scaling"]
    allow_no_crop = args["allow_no_crop"]
    if fixed_window:
        for name, value in (("aspect_ratio", aspect), ("scaling", scaling)):
            if value is not None:
                raise ValueError(f"{name} cannot be combined with crop_shape/input_shape")
        if allow_no_crop:
            raise ValueError("allow_no_crop=True cannot be combined with crop_shape/input_shape")
        allow_no_crop = False
    aspect = (1.0, 1.0) if aspect is None else tuple(aspect)
    scaling = (1.0, 1.0) if scaling is None else tuple(scaling)
    if len(aspect) not in (2, 6):
        raise ValueError(f"aspect_ratio needs 2 values (or 6 for 3-D boxes), got {len(aspect)}")
    if len(scaling) != 2:
        raise ValueError(f"scaling must be a range [min, max], got {len(scaling)} values")
    return CropParams(
        thresholds=thresholds,
        allow_no_crop=True if allow_no_crop is None else allow_no_crop,
        threshold_type=args["threshold_type"],
        aspect_ratio=_range_pairs(aspect, "aspect_ratio"),
        scaling=_range_pairs(scaling, "scaling")[0],
        num_attempts=args["num_attempts"],
        total_num_attempts=total,
        all_boxes_above_threshold=args["all_boxes_above_threshold"],
        bbox_prune_threshold=prune,
        fixed_window=fixed_window,
    )


def _axis_pairs(ndim: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(ndim) for j in range(i + 1, ndim)]


def _fixed_ratios(params: CropParams, ndim: int) -> np.ndarray | None:
    """``ratios[d1, d0]``: the fixed ratio ``extent[d1] / extent[d0]`` where an aspect-ratio
    range is a single value, else 0; None when no range is."""
    ratios = np.zeros((ndim, ndim))
    for k, (i, j) in enumerate(_axis_pairs(ndim)):
        low, high = params.aspect_ratio[k % len(params.aspect_ratio)]
        if low == high:
            ratios[i, j], ratios[j, i] = low, 1.0 / low
    return ratios if ratios.any() else None


def _relative_extents(
    rng: np.random.Generator,
    params: CropParams,
    count: int,
    ndim: int,
    pixels: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` relative window extents ``(count, ndim)`` and whether each keeps to the
    aspect-ratio ranges; with ``pixels`` (the image size) the ratios are those of the window in
    pixels, and a fixed ratio may stretch an extent past 1."""
    size = np.ones(ndim) if pixels is None else pixels
    extent = rng.uniform(params.scaling[0], params.scaling[1], size=(count, ndim)) * size
    ratios = _fixed_ratios(params, ndim)
    if ratios is not None:
        largest = extent.max(axis=1, keepdims=True)
        order = rng.permuted(np.tile(np.arange(ndim), (count, 1)), axis=1)
        rows = np.arange(count)
        for a, b in _axis_pairs(ndim):
            d0, d1 = order[:, a], order[:, b]
            ratio = ratios[d1, d0]
            extent[rows, d1] = np.where(ratio > 0, extent[rows, d0] * ratio, extent[rows, d1])
        extent *= largest / extent.max(axis=1, keepdims=True)
    ok = np.all(extent > 0, axis=1)
    ranges = params.aspect_ratio
    with np.errstate(divide="ignore", invalid="ignore"):
        for k, (i, j) in enumerate(_axis_pairs(ndim)):
            low, high = ranges[k % len(ranges)]
            ratio = extent[:, i] / extent[:, j]
            ok &= (low * (1 - _ASPECT_TOLERANCE) <= ratio) & (
                ratio <= high * (1 + _ASPECT_TOLERANCE)
            )
    return extent / size, ok


def _overlap_metric(
    params: CropParams, crop_lo: np.ndarray, crop_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    if params.threshold_type == "iou":
        return iou(crop_lo, crop_hi, lo, hi)
    return _fraction_inside(crop_lo, crop_hi, lo, hi)


def _fraction_inside(
    crop_lo: np.ndarray, crop_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    volume = box_volume(lo, hi)
    corner_inside = np.all((lo >= crop_lo) & (lo <= crop_hi), axis=-1).astype(np.float64)
    inside = intersection_volume(crop_lo, crop_hi, lo, hi)
    return np.where(volume > 0, inside / np.where(volume > 0, volume, 1.0), corner_inside)


def _kept(
    params: CropParams, crop_lo: np.ndarray, crop_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    if params.bbox_prune_threshold is not None:
        inside = intersection_volume(crop_lo, crop_hi, lo, hi)
        volume = box_volume(lo, hi)
        fraction = inside / np.where(inside > 0, volume, 1.0)
        return (inside > 0) & (fraction >= params.bbox_prune_threshold)
    centre = (lo + hi) / 2
    return np.all((centre >= crop_lo) & (centre < crop_hi), axis=-1)


def _remap(
    crop_lo: np.ndarray, crop_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    extent = crop_hi - crop_lo
    new_lo = np.clip((np.maximum(lo, crop_lo) - crop_lo) / extent, 0.0, 1.0)
    new_hi = np.clip((np.minimum(hi, crop_hi) - crop_lo) / extent, 0.0, 1.0)
    return new_lo, new_hi


@dataclass(frozen=True)
class _Candidates:
    """One round's candidate windows: anchors and extents in output units, the relative
    window corners, and whether each keeps to the aspect-ratio ranges."""

    anchor: np.ndarray
    extent: np.ndarray
    crop_lo: np.ndarray
    crop_hi: np.ndarray
    usable: np.ndarray


def _candidates(
    rng: np.random.Generator,
    params: CropParams,
    count: int,
    ndim: int,
    input_shape: np.ndarray | None,
    crop_shape: np.ndarray | None,
) -> _Candidates:
    if crop_shape is not None and input_shape is not None:
        slack = (input_shape - crop_shape).astype(np.int64)
        start = np.minimum(slack, 0)  # a window larger than the image starts before it
        anchor = (start + rng.integers(0, np.abs(slack) + 1, size=(count, ndim))).astype(float)
        extent = np.broadcast_to(crop_shape.astype(np.float64), (count, ndim))
        crop_lo, crop_hi = anchor / input_shape, (anchor + extent) / input_shape
        return _Candidates(anchor, extent, crop_lo, crop_hi, np.ones(count, bool))
    extent, usable = _relative_extents(rng, params, count, ndim, input_shape)
    anchor = rng.random(extent.shape) * (1.0 - extent)  # negative past an extent of 1
    return _Candidates(anchor, extent, anchor, anchor + extent, usable)


def find_crop(
    lo: np.ndarray,
    hi: np.ndarray,
    params: CropParams,
    rng: np.random.Generator,
    input_shape: np.ndarray | None = None,
    crop_shape: np.ndarray | None = None,
) -> CropResult:
    """Search a crop window for boxes ``(lo, hi)`` (relative, ``(N, ndim)`` each).

    The windows of a round are drawn and scored together (one NumPy pass per round), then
    visited in order as the round's attempts.

    Args:
        lo: box start corners in x, y(, z) order.
        hi: box end corners.
        params: validated settings (:func:`make_crop_params`).
        rng: the sample's random generator.
        input_shape: image size per axis (x, y(, z)) in pixels: with ``crop_shape`` for a fixed
            window, alone to measure aspect ratios in pixels.
        crop_shape: window size per axis for a fixed window, in pixels.

    Raises:
        ValueError: if no window satisfies ``aspect_ratio``/``scaling`` in the allowed attempts,
            or an unbounded search gives up after 100,000 windows.
    """
    ndim = lo.shape[1]
    options = [*params.thresholds, *([_NO_CROP] if params.allow_no_crop else [])]
    total = params.total_num_attempts
    limit = total if total > 0 else UNBOUNDED_SEARCH_LIMIT
    count = 0
    best_metric = -1.0
    best: tuple[_Candidates, int] | None = None
    while count < limit:
        threshold = options[int(rng.integers(len(options)))]
        if threshold == _NO_CROP:
            full = np.ones(ndim) if input_shape is None else input_shape.astype(np.float64)
            return CropResult(np.zeros(ndim), full, lo, hi, np.arange(lo.shape[0]))
        size = min(params.num_attempts, limit - count)
        count += size
        round_ = _candidates(rng, params, size, ndim, input_shape, crop_shape)
        window_lo, window_hi = round_.crop_lo[:, None, :], round_.crop_hi[:, None, :]
        if lo.shape[0]:
            metrics = _overlap_metric(params, window_lo, window_hi, lo[None], hi[None])
            metric = (
                metrics.min(axis=1) if params.all_boxes_above_threshold else metrics.max(axis=1)
            )
            kept = _kept(params, window_lo, window_hi, lo[None], hi[None]).any(axis=1)
            valid = metric >= threshold
        else:  # no boxes: nothing to satisfy, any window will do (as in DALI)
            metric, kept, valid = np.zeros(size), np.ones(size, bool), np.ones(size, bool)
        for i in np.flatnonzero(round_.usable).tolist():
            if metric[i] <= best_metric and not valid[i]:
                continue
            best_metric = float(metric[i])
            best = (round_, i)
            if valid[i] and kept[i]:
                return _result(best, lo, hi, params)
    if best is None:
        raise ValueError(
            f"no crop window satisfied aspect_ratio={params.aspect_ratio} with "
            f"scaling={params.scaling} in {count} attempts; widen aspect_ratio or scaling"
        )
    if total < 0:
        raise ValueError(
            f"no valid crop window found in {UNBOUNDED_SEARCH_LIMIT} attempts (best overlap "
            f"{best_metric:.3f}); set total_num_attempts to fall back to the best window, or "
            "relax thresholds"
        )
    logger.warning(  # DALI's words, once per sample, as DALI prints them
        "Could not find a valid cropping window to satisfy the specified requirements (attempted "
        f"{count} times). Using the best cropping window so far (best_metric={best_metric:g})"
    )
    return _result(best, lo, hi, params)


def _result(
    chosen: tuple[_Candidates, int], lo: np.ndarray, hi: np.ndarray, params: CropParams
) -> CropResult:
    round_, i = chosen
    crop_lo, crop_hi = round_.crop_lo[i], round_.crop_hi[i]
    keep = np.flatnonzero(_kept(params, crop_lo, crop_hi, lo, hi))
    new_lo, new_hi = _remap(crop_lo, crop_hi, lo[keep], hi[keep])
    return CropResult(round_.anchor[i].copy(), round_.extent[i].copy(), new_lo, new_hi, keep)


def _shape_arg(value: Any, name: str, ndim: int, layout: str) -> np.ndarray:
    """A per-axis pixel size in ``shape_layout`` order → float64 in x, y(, z) order."""
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    if array.size != ndim:
        raise ValueError(f"{name} must have {ndim} values for {ndim}-D boxes, got {array.size}")
    if np.any(array <= 0) or np.any(array != np.round(array)):
        raise ValueError(f"{name} must hold positive integers, got {array.tolist()}")
    return np.array([array[layout.index(axis)] for axis in "WHD"[:ndim]])


class RandomBBoxCropKernel(SampleKernel):
    """``random_bbox_crop`` on one sample: outputs anchor, shape, boxes (, labels, indices)."""

    def setup(self) -> None:
        args = self.args
        has_crop = args.get("crop_shape") is not None or "crop_shape" in self.ctx.tensor_args
        has_input = args.get("input_shape") is not None or "input_shape" in self.ctx.tensor_args
        if has_crop and not has_input:
            raise ValueError("crop_shape needs input_shape (the image size it is taken from)")
        if args["ltrb"] is not None:
            if args["bbox_layout"]:
                raise ValueError(
                    "ltrb and bbox_layout cannot both be given; ltrb is deprecated, use bbox_layout"
                )
            warnings.warn(
                f"{self.ctx.name}: 'ltrb' is deprecated; use bbox_layout='xyXY' (ltrb=True) or "
                "bbox_layout='xyWH' (ltrb=False)",
                DeprecationWarning,
                stacklevel=2,
            )
        self.params = make_crop_params(args, fixed_window=has_crop)

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        return ("",) * len(random_bbox_crop_outputs(self.ctx.args, len(input_layouts)))

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, ...]:
        coords = as_float_boxes(inputs[0])
        ndim = coords.shape[1] // 2
        layout = args["bbox_layout"]
        if not layout and args["ltrb"] is False:
            layout = "xyWH" if ndim == 2 else "xyzWHD"
        layout = resolve_bbox_layout(layout, ndim)
        lo, hi = read_boxes(coords, layout)
        outside = np.flatnonzero(np.any((lo < 0) | (hi > 1) | (hi < 0) | (lo > 1), axis=1))
        if outside.size:
            i = int(outside[0])
            raise ValueError(
                f"box {i} {coords[i].tolist()} (layout {layout!r}) is not a relative box "
                "within [0, 1]"
            )
        input_shape = crop_shape = None
        shape_layout = resolve_shape_layout(args["shape_layout"], ndim)
        if args["input_shape"] is not None:
            input_shape = _shape_arg(args["input_shape"], "input_shape", ndim, shape_layout)
        if self.params.fixed_window:
            crop_shape = _shape_arg(args["crop_shape"], "crop_shape", ndim, shape_layout)
        result = find_crop(lo, hi, self.params, sample.rng, input_shape, crop_shape)
        outputs: list[np.ndarray] = [
            result.anchor.astype(np.float32),
            result.shape.astype(np.float32),
            write_boxes(result.lo, result.hi, layout),
        ]
        if len(inputs) > 1:
            labels = inputs[1]
            if labels.ndim == 0 or labels.shape[0] != coords.shape[0]:
                raise ValueError(
                    f"labels must have one entry per box ({coords.shape[0]}), got shape "
                    f"{labels.shape}"
                )
            outputs.append(labels[result.indices])
        if args["output_bbox_indices"]:
            outputs.append(result.indices.astype(np.int32))
        return tuple(outputs)


def resolve_shape_layout(layout: str, ndim: int) -> str:
    """Check ``shape_layout``; ``""`` gives ``"WH"`` / ``"WHD"``."""
    default = "WHD"[:ndim]
    if not layout:
        return default
    if sorted(layout) != sorted(default):
        raise ValueError(f"shape_layout {layout!r} must be a permutation of {default!r}")
    return layout
