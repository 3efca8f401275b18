"""Kernel of ``paste``: an image placed on a larger canvas, as DALI places it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.tensors import resolve_layout

__all__ = ["PasteKernel", "paste", "paste_geometry"]


def paste_geometry(
    height: int, width: int, ratio: float, paste_x: float, paste_y: float, min_canvas: float
) -> tuple[int, int, int, int]:
    """``(canvas_h, canvas_w, y0, x0)`` of ``paste`` as DALI computes them.

    The canvas is ``max(extent * ratio, min_canvas_size)`` truncated to an integer; the image's
    top-left corner is at ``paste * (canvas - extent)``, truncated.
    """
    ratio32 = np.float32(ratio)
    canvas_h = int(max(np.float32(height) * ratio32, np.float32(min_canvas)))
    canvas_w = int(max(np.float32(width) * ratio32, np.float32(min_canvas)))
    y0 = int(np.float32(paste_y) * np.float32(canvas_h - height))
    x0 = int(np.float32(paste_x) * np.float32(canvas_w - width))
    return canvas_h, canvas_w, y0, x0


def paste(
    image: np.ndarray,
    ratio: float,
    fill_value: Sequence[int],
    paste_x: float = 0.5,
    paste_y: float = 0.5,
    min_canvas_size: float = 0.0,
) -> np.ndarray:
    """Place an HWC uint8 ``image`` on a canvas filled with ``fill_value`` (one per channel)."""
    height, width, channels = image.shape
    canvas_h, canvas_w, y0, x0 = paste_geometry(
        height, width, ratio, paste_x, paste_y, min_canvas_size
    )
    out = np.empty((canvas_h, canvas_w, channels), image.dtype)
    out[...] = np.asarray(fill_value, dtype=image.dtype)
    out[y0 : y0 + height, x0 : x0 + width] = image
    return out


class PasteKernel(SampleKernel):
    """Per-sample ``paste`` of HWC uint8 images."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Paste one image onto its canvas."""
        (image,) = inputs
        resolve_layout("paste", sample.layouts[0], image.ndim, ("HWC",), {3: "HWC"})
        if image.dtype != np.uint8:
            raise TypeError(  # DALI's words after "paste: "
                f"paste: input type {image.dtype} is not supported (requested type: uint8 "
                f"current buffer type: {image.dtype})"
            )
        channels = image.shape[2]
        if args["n_channels"] != channels:
            raise ValueError(
                f"paste: argument 'n_channels' = {args['n_channels']} but the image has "
                f"{channels} channels"
            )
        fill = list(args["fill_value"])
        if len(fill) == 1:
            fill *= channels
        if len(fill) != channels:
            raise ValueError(
                f"paste: argument 'fill_value' needs 1 or {channels} values, got {len(fill)}"
            )
        if any(not 0 <= v <= 255 for v in fill):
            raise ValueError(f"paste: argument 'fill_value' = {fill} must be within [0, 255]")
        ratio = float(args["ratio"])
        if not ratio >= 1.0:  # the checks and words are DALI's
            raise ValueError(f"paste: ratio of less than 1 is not supported (ratio = {ratio})")
        if not float(args["min_canvas_size"]) >= 0.0:
            raise ValueError(
                "paste: min_canvas_size_ of less than 0 is not supported "
                f"(min_canvas_size = {args['min_canvas_size']})"
            )
        for name in ("paste_x", "paste_y"):
            if not 0.0 <= float(args[name]) <= 1.0:
                raise ValueError(f"paste: {name} must be in range [0, 1] (got {args[name]})")
        return paste(image, ratio, fill, args["paste_x"], args["paste_y"], args["min_canvas_size"])
