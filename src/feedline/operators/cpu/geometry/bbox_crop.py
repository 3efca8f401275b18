"""``random_bbox_crop``: a random crop window that keeps bounding boxes consistent.

The search follows DALI's operator:

1. Each round picks one option uniformly: one of ``thresholds``, or "no crop" when
   ``allow_no_crop`` is on. "No crop" returns the whole image and every box.
2. Up to ``num_attempts`` candidate windows are drawn for the option. A relative window draws one
   extent per axis from ``scaling``; where an ``aspect_ratio`` range is a single value, the
   extents are made to follow it (in a random axis order, keeping the largest extent); a window
   whose aspect ratios fall outside ``aspect_ratio`` is discarded. The anchor is uniform in
   ``[0, 1 - extent]``. With ``crop_shape`` the window has that size (in pixels) and an integer
   anchor uniform in ``[0, input_shape - crop_shape]``.
3. A window is *valid* when its overlap metric (``threshold_type``: IoU with each box, or the
   fraction of each box inside the window) is at least the threshold for every box
   (``all_boxes_above_threshold``) or for at least one. Boxes are then pruned (by centroid,
   ``lo <= centroid < hi``, or by ``bbox_prune_threshold``), and mapped into the window
   (clipped to ``[0, 1]``). A valid window that keeps at least one box ends the search.
4. Otherwise the best window so far (highest metric) is remembered and the next round starts.
   After ``total_num_attempts`` windows the best one is returned.

Departures from DALI, all documented in the operator docs: a round stops at its first successful
window; aspect ratios are compared with a relative tolerance of 1e-6 (so fixed ratios such as 4/3
are not lost to rounding); an unbounded search (``total_num_attempts=-1``) that finds nothing in
100,000 windows raises instead of looping forever; overlap of an empty box is 1 when its corner
lies in the window, else 0. A box whose corners are swapped (start > end) is accepted, as DALI
accepts it: it has no area, and is kept, mapped, as the other boxes.
"""

from __future__ import annotations

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


def _relative_extent(rng: np.random.Generator, params: CropParams, ndim: int) -> np.ndarray | None:
    """Draw one relative window extent, or None when it breaks the aspect-ratio ranges."""
    extent = rng.uniform(params.scaling[0], params.scaling[1], size=ndim)
    ranges = params.aspect_ratio
    fixed: dict[tuple[int, int], float] = {}
    for k, (i, j) in enumerate(_axis_pairs(ndim)):
        low, high = ranges[k % len(ranges)]
        if low == high:
            fixed[(i, j)], fixed[(j, i)] = low, 1.0 / low
    if fixed:
        largest = extent.max()
        order = rng.permutation(ndim)
        for a in range(ndim):
            for b in range(a + 1, ndim):
                d0, d1 = order[a], order[b]
                if (d1, d0) in fixed:
                    extent[d1] = extent[d0] * fixed[(d1, d0)]
        extent *= largest / extent.max()
    if not np.all(extent > 0):
        return None
    for k, (i, j) in enumerate(_axis_pairs(ndim)):
        low, high = ranges[k % len(ranges)]
        ratio = extent[i] / extent[j]
        if not low * (1 - _ASPECT_TOLERANCE) <= ratio <= high * (1 + _ASPECT_TOLERANCE):
            return None
    return extent


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
        return _fraction_inside(crop_lo, crop_hi, lo, hi) >= params.bbox_prune_threshold
    centre = (lo + hi) / 2
    return np.all((centre >= crop_lo) & (centre < crop_hi), axis=-1)


def _remap(
    crop_lo: np.ndarray, crop_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    extent = crop_hi - crop_lo
    new_lo = np.clip((np.maximum(lo, crop_lo) - crop_lo) / extent, 0.0, 1.0)
    new_hi = np.clip((np.minimum(hi, crop_hi) - crop_lo) / extent, 0.0, 1.0)
    return new_lo, new_hi


def find_crop(
    lo: np.ndarray,
    hi: np.ndarray,
    params: CropParams,
    rng: np.random.Generator,
    input_shape: np.ndarray | None = None,
    crop_shape: np.ndarray | None = None,
) -> CropResult:
    """Search a crop window for boxes ``(lo, hi)`` (relative, ``(N, ndim)`` each).

    Args:
        lo: box start corners in x, y(, z) order.
        hi: box end corners.
        params: validated settings (:func:`make_crop_params`).
        rng: the sample's random generator.
        input_shape: image size per axis (x, y(, z)) for a fixed window, in pixels.
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
    best: CropResult | None = None
    while count < limit:
        threshold = options[int(rng.integers(len(options)))]
        if threshold == _NO_CROP:
            full = np.ones(ndim) if input_shape is None else input_shape.astype(np.float64)
            return CropResult(np.zeros(ndim), full, lo, hi, np.arange(lo.shape[0]))
        for _ in range(params.num_attempts):
            if count >= limit:
                break
            count += 1
            if crop_shape is not None and input_shape is not None:
                slack = input_shape - crop_shape
                anchor = np.array([rng.integers(s + 1) if s > 0 else 0 for s in slack], float)
                extent = crop_shape.astype(np.float64)
                crop_lo, crop_hi = anchor / input_shape, (anchor + extent) / input_shape
            else:
                maybe_extent = _relative_extent(rng, params, ndim)
                if maybe_extent is None:
                    continue
                extent = maybe_extent
                anchor = rng.uniform(0.0, 1.0 - extent)
                crop_lo, crop_hi = anchor, anchor + extent
            metrics = _overlap_metric(params, crop_lo, crop_hi, lo, hi)
            if metrics.size == 0:
                metric = 0.0
            else:
                metric = float(metrics.min() if params.all_boxes_above_threshold else metrics.max())
            valid = metric >= threshold
            if metric <= best_metric and not valid:
                continue
            best_metric = metric
            keep = np.flatnonzero(_kept(params, crop_lo, crop_hi, lo, hi))
            new_lo, new_hi = _remap(crop_lo, crop_hi, lo[keep], hi[keep])
            best = CropResult(anchor, extent, new_lo, new_hi, keep)
            if valid and keep.size:
                return best
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
    return best


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
        if has_crop != has_input:
            raise ValueError("crop_shape and input_shape must be given together")
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
        if self.params.fixed_window:
            shape_layout = resolve_shape_layout(args["shape_layout"], ndim)
            input_shape = _shape_arg(args["input_shape"], "input_shape", ndim, shape_layout)
            crop_shape = _shape_arg(args["crop_shape"], "crop_shape", ndim, shape_layout)
            if np.any(crop_shape > input_shape):
                raise ValueError(
                    f"crop_shape {crop_shape.tolist()} exceeds input_shape "
                    f"{input_shape.tolist()} (both in {'WHD'[:ndim]} order)"
                )
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
