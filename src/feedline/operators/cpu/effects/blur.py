"""``gaussian_blur``: separable Gaussian convolution over the spatial axes, as DALI defines it.

The kernel of an axis has ``window_size`` taps (odd) weighted ``exp(-x² / 2σ²)`` and normalised
to sum 1. Given only ``sigma``, ``window_size = 2 * ceil(3σ) + 1``; given only ``window_size``,
``σ = ((window_size - 1) / 2 - 1) * 0.3 + 0.8``. Borders mirror without repeating the edge pixel
(``dcb|abcd|cba``, OpenCV's ``BORDER_REFLECT_101``). Channel (``C``) and frame (``F``) axes are
not blurred; data without a layout is blurred along every axis (at most 3), as in DALI. Integer
outputs are rounded (halves away from zero) and saturated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.frames import (
    check_frame_counts,
    frame_value,
    per_frame_args,
    split_axes,
)
from feedline.operators.cpu.common.tensors import output_dtype, saturate_cast

__all__ = ["GaussianBlurKernel", "gaussian_blur", "gaussian_window"]

_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.int64, np.float32)


def gaussian_window(sigma: float, window_size: int) -> np.ndarray:
    """The normalised taps of one axis (either argument may be 0: derived from the other).

    Raises:
        ValueError: both are 0, a negative value, or an even window size (DALI's messages).
    """
    _check_axis(sigma, window_size, 0, 0)
    if window_size == 0:
        window_size = 2 * math.ceil(3 * sigma) + 1
    radius = (window_size - 1) // 2
    if sigma == 0:
        sigma = (radius - 1) * 0.3 + 0.8
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    taps = np.exp(-(x * x) / (2 * sigma * sigma))
    return taps / taps.sum()


def _check_axis(sigma: float, window_size: int, sample: int, axis: int) -> None:
    where = f"for sample: {sample}, axis"
    if sigma == 0 and window_size == 0:
        raise ValueError(
            f"gaussian_blur: `sigma` and `window_size` shouldn't be 0 at the same time {where}: "
            f"{axis}."
        )
    if sigma < 0:
        raise ValueError(
            f"gaussian_blur: `sigma` must have non-negative values, got {sigma:g} {where}: {axis}."
        )
    if window_size < 0:
        raise ValueError(
            f"gaussian_blur: `window_size` must have non-negative values, got {window_size} "
            f"{where} : {axis}."
        )
    if window_size % 2 == 0 and window_size:
        raise ValueError(
            f"gaussian_blur: Kernel window should have odd length, got: {window_size}."
        )


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
    sample: int = 0,
) -> np.ndarray:
    """Blur ``image`` along its spatial axes: every axis of ``layout`` except ``C`` and ``F``,
    every axis when ``layout`` is empty (at most 3).

    ``sigma`` and ``window_size`` hold one value for all spatial axes or one per axis
    (outermost first); ``sample`` is the sample's index, for the error messages.

    Raises:
        ValueError: a layout DALI refuses, a wrong number of per-axis values, or a bad
            ``sigma``/``window_size`` (DALI's messages).
    """
    split = split_axes("gaussian_blur", layout, image.ndim)
    axes = range(split.leading, split.leading + split.spatial)
    sigmas = _per_axis("sigma", sigma, len(axes))
    windows = _per_axis("window_size", window_size, len(axes))
    for axis, (s, w) in enumerate(zip(sigmas, windows, strict=True)):
        _check_axis(float(s), int(w), sample, axis)
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
            f'gaussian_blur: Argument "{name}" expects either a single value or a list of '
            f"{count} elements. {len(values)} given."
        )
    return values


class GaussianBlurKernel(SampleKernel):
    """Per-sample ``gaussian_blur``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Blur one sample."""
        (image,) = inputs
        if image.dtype not in tuple(np.dtype(t) for t in _TYPES):
            raise TypeError(f"gaussian_blur: input type {image.dtype} is not supported")
        dtype = output_dtype("gaussian_blur", args["dtype"], image.dtype, (image.dtype, np.float32))
        layout = sample.layouts[0]
        per_frame = per_frame_args(sample.arg_layouts, layout)
        if not per_frame:
            return gaussian_blur(
                image, layout, args["sigma"], args["window_size"], dtype, sample.index
            )
        frames = image.shape[0]
        check_frame_counts(sample.index, {name: len(args[name]) for name in per_frame}, frames)

        def frame_arg(name: str, frame: int) -> Any:
            return frame_value(args[name], frame) if name in per_frame else args[name]

        out = sample.output(image.shape, dtype)
        for frame in range(frames):
            out[frame] = gaussian_blur(
                image[frame],
                layout[1:],
                frame_arg("sigma", frame),
                frame_arg("window_size", frame),
                dtype,
                sample.index,
            )
        return out
