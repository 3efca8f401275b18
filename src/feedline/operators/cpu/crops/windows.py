"""Kernel of ``roi_random_crop``.

The start comes from the sample's own generator (``SampleContext.rng``), so it is the same for
any ``num_threads``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel

__all__ = ["RoiRandomCropKernel", "roi_window_start"]


def _vector(name: str, value: Any, ndim: int) -> np.ndarray:
    array = np.asarray(value, dtype=np.int64).reshape(-1)
    if array.size != ndim:
        raise ValueError(f"{name} has {array.size} values, expected {ndim} (one per dimension)")
    return array


def roi_window_start(
    roi_start: np.ndarray,
    roi_end: np.ndarray,
    crop_shape: np.ndarray,
    in_shape: np.ndarray | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """A random window start per dimension: the window holds the ROI when it is larger, lies
    within it when smaller, and stays in ``[0, in_shape)`` when ``in_shape`` is given."""
    roi_extent = roi_end - roi_start
    low = np.where(roi_extent > crop_shape, roi_start, roi_end - crop_shape)
    high = np.where(roi_extent > crop_shape, roi_end - crop_shape, roi_start)
    if in_shape is not None:
        low = np.clip(low, 0, in_shape - crop_shape)
        high = np.clip(high, 0, in_shape - crop_shape)
    return np.array([rng.integers(lo, hi + 1) for lo, hi in zip(low, high, strict=True)], np.int64)


class RoiRandomCropKernel(SampleKernel):
    """``roi_random_crop``: the start of a fixed-shape window placed at random around a ROI."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layout."""
        return ("",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        if (args.get("roi_end") is None) == (args.get("roi_shape") is None):
            raise ValueError("Either ROI end or ROI shape should be defined, but not both")
        if args.get("in_shape") is not None and inputs:
            raise ValueError("``in_shape`` argument is incompatible with providing an input.")
        crop_shape = np.asarray(args["crop_shape"], dtype=np.int64).reshape(-1)
        ndim = crop_shape.size
        roi_start = _vector("roi_start", args["roi_start"], ndim)
        if args.get("roi_end") is not None:
            roi_end = _vector("roi_end", args["roi_end"], ndim)
        else:
            roi_end = roi_start + _vector("roi_shape", args["roi_shape"], ndim)
        in_shape = None
        if inputs:
            # as DALI: the input's leading dimensions, one per crop dimension (HW of an HWC image)
            in_shape = _vector("the input's shape", inputs[0].shape[:ndim], ndim)
        elif args.get("in_shape") is not None:
            in_shape = _vector("in_shape", args["in_shape"], ndim)
        if in_shape is not None:
            _check_bounds(roi_start, roi_end, crop_shape, in_shape)
        return roi_window_start(roi_start, roi_end, crop_shape, in_shape, sample.rng)


def _check_bounds(
    roi_start: np.ndarray, roi_end: np.ndarray, crop_shape: np.ndarray, in_shape: np.ndarray
) -> None:
    for d in range(in_shape.size):
        if in_shape[d] < 0:
            raise ValueError(f"Input shape can't be negative. Got {in_shape.tolist()}")
        if crop_shape[d] < 0:
            raise ValueError(f"Crop shape can't be negative. Got {crop_shape.tolist()}")
        if crop_shape[d] > in_shape[d]:
            raise ValueError(
                "Cropping shape can't be bigger than the input shape. Got: crop_shape "
                f"{crop_shape[d]} and input shape {in_shape[d]} in dimension {d}"
            )
        if not (roi_start[d] >= 0 and roi_end[d] <= in_shape[d]):
            raise ValueError(
                f"ROI can't be out of bounds. Got roi_start {roi_start[d]}, roi_end {roi_end[d]}, "
                f"input shape {in_shape[d]} in dimension {d}"
            )
