"""``experimental.median_blur``, ``experimental.erode`` and ``experimental.dilate`` with OpenCV.

DALI runs these on the GPU only; here they run per sample on the CPU. Images of any supported
layout are processed as channel-last frames (see :mod:`feedline.operators.cpu.common.frames`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.frames import (
    from_planes,
    split_images,
    stack_planes,
    to_planes,
)
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype

__all__ = ["DilateKernel", "ErodeKernel", "MedianBlurKernel", "median_blur", "morphology"]

_TYPES = (np.uint8, np.int16, np.uint16, np.float32)


def _pair(op: str, name: str, value: Any) -> tuple[int, int]:
    values = [int(v) for v in np.asarray(value).ravel()]
    if len(values) == 1:
        values *= 2
    if len(values) != 2:
        raise ValueError(f"{op}: argument {name!r} needs 1 or 2 values, got {len(values)}")
    return values[0], values[1]


def median_blur(plane: np.ndarray, height: int, width: int) -> np.ndarray:
    """The median over a ``height`` x ``width`` window of an ``HWC`` plane, edges replicated."""
    cv2 = import_cv2("experimental.median_blur")
    channels = plane.shape[2]
    if height == width and channels in (1, 3, 4) and (plane.dtype == np.uint8 or height <= 5):
        return cv2.medianBlur(plane, height).reshape(plane.shape)
    ry, rx = height // 2, width // 2
    padded = np.pad(plane, ((ry, ry), (rx, rx), (0, 0)), mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, (height, width), axis=(0, 1))
    return np.median(windows, axis=(-2, -1)).astype(plane.dtype)


class MedianBlurKernel(SampleKernel):
    """Per-sample ``experimental.median_blur``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Median-blur one image or sequence."""
        op = "experimental.median_blur"
        (image,) = inputs
        split = split_images(op, sample.layouts[0], image.ndim)
        check_dtype(op, image, _TYPES)
        height, width = _pair(op, "window_size", args["window_size"])
        if height < 1 or width < 1 or height % 2 == 0 or width % 2 == 0:
            raise ValueError(f"{op}: window_size ({height}, {width}) must be odd and positive")
        planes = to_planes(image, split)
        blurred = stack_planes([median_blur(p, height, width) for p in planes])
        return from_planes(blurred, split, image.shape)


def morphology(
    plane: np.ndarray,
    operation: str,
    mask: tuple[int, int],
    anchor: tuple[int, int],
    iterations: int,
    border: str,
) -> np.ndarray:
    """Erode or dilate one ``HWC`` plane with a ``mask`` (width, height) rectangle at
    ``anchor`` (x, y)."""
    cv2 = import_cv2(f"experimental.{operation}")
    borders = {
        "constant": cv2.BORDER_CONSTANT,
        "replicate": cv2.BORDER_REPLICATE,
        "reflect": cv2.BORDER_REFLECT,
        "reflect_101": cv2.BORDER_REFLECT_101,
        "wrap": cv2.BORDER_WRAP,
    }
    element = np.ones((mask[1], mask[0]), np.uint8)
    run = cv2.erode if operation == "erode" else cv2.dilate
    if border == "wrap":
        # OpenCV's morphology has no wrap border: pad, filter and crop.
        ry, rx = mask[1] * iterations, mask[0] * iterations
        padded = cv2.copyMakeBorder(plane, ry, ry, rx, rx, cv2.BORDER_WRAP)
        out = run(padded, element, anchor=anchor, iterations=iterations,
                  borderType=cv2.BORDER_CONSTANT)  # fmt: skip
        out = out[ry : ry + plane.shape[0], rx : rx + plane.shape[1]]
    else:
        out = run(plane, element, anchor=anchor, iterations=iterations,
                  borderType=borders[border])  # fmt: skip
    return out.reshape(plane.shape)


class _MorphologyKernel(SampleKernel):
    operation = ""

    def setup(self) -> None:
        """Check ``iterations``."""
        if self.ctx.args["iterations"] < 1:
            raise ValueError(f"{self.ctx.schema.name}: iterations must be >= 1")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Erode or dilate one image or sequence."""
        op = self.ctx.schema.name
        (image,) = inputs
        split = split_images(op, sample.layouts[0], image.ndim)
        check_dtype(op, image, _TYPES)
        mask = _pair(op, "mask_size", args["mask_size"])
        if mask[0] < 1 or mask[1] < 1:
            raise ValueError(f"{op}: mask_size {mask} must be positive")
        anchor = _pair(op, "anchor", args["anchor"])
        for value, extent in zip(anchor, mask, strict=True):
            if value != -1 and not 0 <= value < extent:
                raise ValueError(f"{op}: anchor {anchor} must lie within mask_size {mask}")
        planes = to_planes(image, split)
        results = [
            morphology(f, self.operation, mask, anchor, int(args["iterations"]),
                       args["border_mode"])
            for f in planes
        ]  # fmt: skip
        return from_planes(stack_planes(results), split, image.shape)


class ErodeKernel(_MorphologyKernel):
    """Per-sample ``experimental.erode``."""

    operation = "erode"


class DilateKernel(_MorphologyKernel):
    """Per-sample ``experimental.dilate``."""

    operation = "dilate"
