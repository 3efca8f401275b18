"""``erase`` (fill rectangular regions) and ``grid_mask`` (zero a rotated grid of squares).

``erase``: the regions are given by flat ``anchor``/``shape`` lists holding one value per
selected axis and region (``y0, x0, y1, x1, …`` for ``HW``). Absolute or normalised (fractions
of the extent), optionally centred on the anchor; region bounds are ``int(anchor)`` and
``int(anchor + shape)`` (truncated toward zero, as DALI's ``static_cast``), clipped to the
sample. Axes not selected are erased over their whole extent.

``grid_mask`` follows DALI's CPU kernel: pixel ``(x, y)`` maps to grid coordinates
``fx = (x·cos a − y·sin a − shift_x) / tile`` and ``fy = (x·sin a + y·cos a − shift_y) / tile``;
it is zeroed when both ``fx − floor(fx)`` and ``fy − floor(fy)`` are below ``ratio``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.layout_ops import _axes_of
from feedline.operators.cpu.transforms_common import resolve_layout, saturate_cast

__all__ = ["EraseKernel", "GridMaskKernel", "erase", "erase_axes", "grid_mask"]

_GRID_LAYOUTS = ("HWC", "HW")
_GRID_DEFAULTS = {2: "HW", 3: "HWC"}


def erase_axes(
    layout: str, ndim: int, axes: Sequence[int] | None, axis_names: str | None
) -> list[int]:
    """The axes the anchor/shape values refer to: ``axes`` or ``axis_names`` (not both), else
    every axis but ``C``."""
    if axes is not None and axis_names is not None:
        raise ValueError("erase: arguments 'axes' and 'axis_names' are mutually exclusive")
    if axes is not None:
        return _axes_of("erase", layout, ndim, axes, None) if axes else []
    if axis_names is None:
        return [d for d in range(ndim) if d >= len(layout) or layout[d] != "C"]
    return _axes_of("erase", layout, ndim, None, axis_names) if axis_names else []


def erase(
    data: np.ndarray,
    axes: Sequence[int],
    anchor: Sequence[float],
    shape: Sequence[float],
    fill_value: Sequence[float],
    channel_axis: int,
    normalized_anchor: bool = False,
    normalized_shape: bool = False,
    centered_anchor: bool = False,
) -> np.ndarray:
    """A copy of ``data`` with every region filled with ``fill_value``.

    Raises:
        ValueError: anchor/shape lengths that do not fit the axes, or a multi-channel fill value
            that does not match the channels.
    """
    n = len(axes)
    anchor, shape = [float(v) for v in anchor], [float(v) for v in shape]
    if not anchor and not shape:
        return data
    if not anchor:
        anchor = [0.0] * len(shape)
    if not n or len(anchor) % n or len(shape) != len(anchor):
        raise ValueError(
            f"erase: anchor ({len(anchor)} values) and shape ({len(shape)} values) must hold "
            f"one value per axis ({n}) and region, the same number of regions each"
        )
    fill = np.asarray(fill_value, np.float64).ravel()
    if fill.size > 1:
        if channel_axis < 0 or data.shape[channel_axis] != fill.size:
            raise ValueError(
                f"erase: {fill.size} fill values need a channel axis of that extent (input "
                f"shape {data.shape})"
            )
        view = [1] * data.ndim
        view[channel_axis] = fill.size
        fill = fill.reshape(view)
    fill_cast = saturate_cast(fill, data.dtype)
    out = data.copy()
    for region in range(len(anchor) // n):
        index: list[slice] = [slice(None)] * data.ndim
        for i, axis in enumerate(axes):
            extent = data.shape[axis]
            start = anchor[region * n + i] * (extent if normalized_anchor else 1)
            size = shape[region * n + i] * (extent if normalized_shape else 1)
            if centered_anchor:
                start -= size / 2
            lo, hi = max(int(start), 0), min(int(start + size), extent)
            index[axis] = slice(lo, max(lo, hi))
        target = tuple(index)
        out[target] = np.broadcast_to(fill_cast, out[target].shape) if fill.size > 1 else fill_cast
    return out


class EraseKernel(SampleKernel):
    """Per-sample ``erase``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Erase the regions of one sample."""
        (data,) = inputs
        layout = sample.layouts[0]
        if args["normalized"] is not None and (
            args["normalized_anchor"] is not None or args["normalized_shape"] is not None
        ):
            raise ValueError(
                "erase: 'normalized' is mutually exclusive with 'normalized_anchor' and "
                "'normalized_shape'"
            )
        both = bool(args["normalized"])
        axes = erase_axes(layout, data.ndim, args["axes"], args["axis_names"])
        return erase(
            data,
            axes,
            np.asarray(args["anchor"], np.float64).ravel().tolist(),
            np.asarray(args["shape"], np.float64).ravel().tolist(),
            args["fill_value"],
            layout.find("C"),
            both or bool(args["normalized_anchor"]),
            both or bool(args["normalized_shape"]),
            bool(args["centered_anchor"]),
        )


def grid_mask(
    image: np.ndarray, tile: int, ratio: float, angle: float, shift_x: float, shift_y: float
) -> np.ndarray:
    """A copy of an ``HW``/``HWC`` image with the grid's squares zeroed (see module docs)."""
    height, width = image.shape[:2]
    ca, sa = math.cos(angle) / tile, math.sin(angle) / tile
    y = np.arange(height, dtype=np.float32)[:, None]
    x = np.arange(width, dtype=np.float32)[None, :]
    fx = np.float32(ca) * x - np.float32(sa) * y - np.float32(shift_x / tile)
    fy = np.float32(sa) * x + np.float32(ca) * y - np.float32(shift_y / tile)
    keep = (fx - np.floor(fx) >= ratio) | (fy - np.floor(fy) >= ratio)
    if image.ndim == 3:
        keep = keep[:, :, None]
    return np.where(keep, image, image.dtype.type(0))


class GridMaskKernel(SampleKernel):
    """Per-sample ``grid_mask``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Mask one image."""
        (image,) = inputs
        resolve_layout("grid_mask", sample.layouts[0], image.ndim, _GRID_LAYOUTS, _GRID_DEFAULTS)
        tile = int(np.asarray(args["tile"]).reshape(()))
        ratio = float(np.asarray(args["ratio"]).reshape(()))
        if tile < 1:
            raise ValueError(f"grid_mask: argument 'tile' = {tile} must be positive")
        if not 0 <= ratio <= 1:
            raise ValueError(f"grid_mask: argument 'ratio' = {ratio} must be in [0, 1]")
        return grid_mask(
            image,
            tile,
            ratio,
            float(np.asarray(args["angle"]).reshape(())),
            float(np.asarray(args["shift_x"]).reshape(())),
            float(np.asarray(args["shift_y"]).reshape(())),
        )
