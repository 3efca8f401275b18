"""``gaussian_blur``: separable Gaussian convolution over the spatial axes, as DALI defines it.

The kernel of an axis has ``window_size`` taps (odd) weighted ``exp(-x² / 2σ²)`` and normalised
to sum 1. Given only ``sigma``, ``window_size = 2 * ceil(3σ) + 1``; given only ``window_size``,
``σ = ((window_size - 1) / 2 - 1) * 0.3 + 0.8``. Borders mirror without repeating the edge pixel
(``dcb|abcd|cba``, OpenCV's ``BORDER_REFLECT_101``). Channel (``C``) and frame (``F``) axes are
not blurred. Integer outputs are rounded (halves away from zero) and saturated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.transforms_common import output_dtype, saturate_cast

__all__ = ["BLUR_DEFAULT_LAYOUTS", "GaussianBlurKernel", "gaussian_blur", "gaussian_window"]

#: Layout assumed for data without one.
BLUR_DEFAULT_LAYOUTS = {1: "W", 2: "HW", 3: "HWC", 4: "FHWC"}
_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.int64, np.float32)


def gaussian_window(sigma: float, window_size: int) -> np.ndarray:
    """The normalised taps of one axis (either argument may be 0: derived from the other).

    Raises:
        ValueError: both are 0, a negative value, or an even window size.
    """
    if sigma < 0 or window_size < 0:
        raise ValueError(
            f"gaussian_blur: sigma ({sigma}) and window_size ({window_size}) must not be negative"
        )
    if sigma == 0 and window_size == 0:
        raise ValueError("gaussian_blur: give sigma or window_size (both are 0)")
    if window_size == 0:
        window_size = 2 * math.ceil(3 * sigma) + 1
    if window_size % 2 == 0:
        raise ValueError(f"gaussian_blur: window_size {window_size} must be odd")
    radius = (window_size - 1) // 2
    if sigma == 0:
        sigma = (radius - 1) * 0.3 + 0.8
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    taps = np.exp(-(x * x) / (2 * sigma * sigma))
    return taps / taps.sum()


def _convolve_axis(data: np.ndarray, taps: np.ndarray, axis: int) -> np.ndarray:
    radius = len(taps) // 2
    if radius == 0:
        return data * taps[0]
    extent = data.shape[axis]
    pad = [(0, 0)] * data.ndim
    pad[axis] = (radius, radius)
    padded = np.pad(data, pad, mode="reflect")
    out = np.zeros_like(data)
    for k, weight in enumerate(taps):
        index = [slice(None)] * data.ndim
        index[axis] = slice(k, k + extent)
        out += weight * padded[tuple(index)]
    return out


def gaussian_blur(
    image: np.ndarray,
    layout: str,
    sigma: Sequence[float],
    window_size: Sequence[int],
    dtype: np.dtype,
) -> np.ndarray:
    """Blur ``image`` along every axis of ``layout`` except ``C`` and ``F``.

    ``sigma`` and ``window_size`` hold one value for all spatial axes or one per axis
    (outermost first).
    """
    axes = [i for i, name in enumerate(layout) if name not in "CF"]
    channel = layout.find("C")
    if channel not in (-1, len(layout) - 1) and layout[:channel] not in ("", "F"):
        raise ValueError(f"gaussian_blur: channels must be first or last, got {layout!r}")
    sigmas = _per_axis("sigma", sigma, len(axes))
    windows = _per_axis("window_size", window_size, len(axes))
    work = image.astype(np.float64 if image.dtype.itemsize >= 4 else np.float32)
    for axis, s, w in zip(axes, sigmas, windows, strict=True):
        work = _convolve_axis(work, gaussian_window(float(s), int(w)), axis)
    return saturate_cast(work, dtype)


def _per_axis(name: str, values: Sequence[Any], count: int) -> list[Any]:
    values = list(np.asarray(values).ravel())
    if len(values) == 1:
        return values * count
    if len(values) != count:
        raise ValueError(
            f"gaussian_blur: argument {name!r} has {len(values)} values; give 1 or one per "
            f"spatial axis ({count})"
        )
    return values


class GaussianBlurKernel(SampleKernel):
    """Per-sample ``gaussian_blur``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Blur one sample."""
        (image,) = inputs
        layout = sample.layouts[0] or BLUR_DEFAULT_LAYOUTS.get(image.ndim, "")
        if len(layout) != image.ndim:
            raise ValueError(
                f"gaussian_blur: a {image.ndim}-D input needs a layout (1-D to 4-D inputs "
                "without one are taken as W, HW, HWC, FHWC)"
            )
        if image.dtype not in tuple(np.dtype(t) for t in _TYPES):
            raise TypeError(f"gaussian_blur: input type {image.dtype} is not supported")
        dtype = output_dtype("gaussian_blur", args["dtype"], image.dtype, (image.dtype, np.float32))
        return gaussian_blur(image, layout, args["sigma"], args["window_size"], dtype)
