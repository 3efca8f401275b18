"""Kernels of ``random_crop_generator`` and ``roi_random_crop``.

Both draw from the sample's own generator (``SampleContext.rng``), so the windows are the same
for any ``num_threads``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel

__all__ = ["RandomCropGeneratorKernel", "RoiRandomCropKernel", "random_window", "roi_window_start"]


def _range(name: str, values: Sequence[float]) -> tuple[float, float]:
    if len(values) not in (1, 2):
        raise ValueError(f"{name} must hold one value or a range [min, max], got {list(values)}")
    low, high = float(values[0]), float(values[-1])
    if not 0 < low <= high:
        raise ValueError(f"{name} must satisfy 0 < min <= max, got [{low}, {high}]")
    return low, high


def random_window(
    height: int,
    width: int,
    area: tuple[float, float],
    aspect: tuple[float, float],
    num_attempts: int,
    rng: np.random.Generator,
) -> tuple[tuple[int, int], tuple[int, int]]:
    """A random ``(anchor, shape)`` in ``(y, x)`` order for an image of ``height`` x ``width``.

    Each attempt draws an area fraction uniformly from ``area`` and an aspect ratio (width /
    height) log-uniformly from ``aspect``; the first window that fits gets a uniform anchor.
    Without one, the whole image cut to the nearest allowed aspect ratio is centred.
    """
    log_low, log_high = math.log(aspect[0]), math.log(aspect[1])
    for _ in range(num_attempts):
        target = rng.uniform(area[0], area[1]) * height * width
        ratio = math.exp(rng.uniform(log_low, log_high))
        w = round(math.sqrt(target * ratio))
        h = round(math.sqrt(target / ratio))
        if 0 < w <= width and 0 < h <= height:
            y = int(rng.integers(height - h + 1))
            x = int(rng.integers(width - w + 1))
            return (y, x), (h, w)
    w, h = width, height
    if height > 0 and width / height < aspect[0]:
        h = max(1, round(width / aspect[0]))
    elif height > 0 and width / height > aspect[1]:
        w = max(1, round(height * aspect[1]))
    return ((height - h) // 2, (width - w) // 2), (h, w)


class RandomCropGeneratorKernel(SampleKernel):
    """``random_crop_generator``: an image shape in, a random window's anchor and shape out."""

    def setup(self) -> None:
        """Validate the static arguments."""
        if self.args["num_attempts"] < 1:
            raise ValueError(f"num_attempts must be at least 1, got {self.args['num_attempts']}")
        self.area = _range("random_area", self.args["random_area"])
        self.aspect = _range("random_aspect_ratio", self.args["random_aspect_ratio"])

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layout on either output."""
        return ("", "")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, np.ndarray]:
        shape = inputs[0]
        if not np.issubdtype(shape.dtype, np.integer):
            raise TypeError(f"the input shape must have an integer type, got {shape.dtype}")
        if shape.ndim != 1 or shape.size not in (2, 3):
            raise ValueError(
                "expected a 1-D tensor with 2 or 3 values holding an image shape (HW or HWC), "
                f"got shape {shape.shape}"
            )
        height, width = int(shape[0]), int(shape[1])
        anchor, extent = random_window(
            height, width, self.area, self.aspect, self.args["num_attempts"], sample.rng
        )
        return np.array(anchor, np.int32), np.array(extent, np.int32)


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
            in_shape = _vector("the input's shape", inputs[0].shape, ndim)
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
