"""The CPU kernel of ``draw_gaussians``: Gaussians drawn into a heatmap, vectorised in NumPy.

Every active object covers a square window of pixels around its integer center (``floor(cx - r)``
to ``ceil(cx + r)``, clipped to the heatmap); all windows of a sample are unrolled into one flat
list of (slice, row, column, value) and merged into the heatmap with ``np.maximum.at``, so
overlapping Gaussians keep their maximum whatever the objects' order. The arithmetic is float32,
step for step as in the GPU kernel (``kernels/gaussians.cu`` of the GPU plugin).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel

__all__ = ["DrawGaussiansKernel", "GaussianObjects", "check_inputs", "draw_gaussians"]

_OP = "draw_gaussians"
_F32 = np.float32


@dataclass(frozen=True)
class GaussianObjects:
    """The objects of one sample, checked: what both kernels draw from.

    Attributes:
        active: bool, one per object.
        class_ids: int32, one per object.
        centers: int32 ``[N, 2]``, ``[x, y]`` per object.
        radii: float32, one per object.
        slices: the heatmap's number of class slices (1 for an ``[H, W]`` heatmap).
    """

    active: np.ndarray
    class_ids: np.ndarray
    centers: np.ndarray
    radii: np.ndarray
    slices: int


def _expect(array: Any, dtype: type, what: str, type_name: str) -> None:
    if np.dtype(array.dtype) != np.dtype(dtype):
        raise TypeError(f"{_OP}: {what} has to be of type {type_name}, got {np.dtype(array.dtype)}")


def check_inputs(
    heat_map: Any,
    active: Any,
    class_ids: Any,
    centers: Any,
    radii: Any,
    k_for_classes: Sequence[float],
) -> tuple[int, int, int]:
    """Check one sample's inputs (types, shapes, class ids of active objects: host arrays of the
    small per-object inputs, any array for the heatmap).

    Returns:
        The heatmap's ``(slices, height, width)``.

    Raises:
        TypeError: an input of the wrong type (the message names it as ACCV-Lab's operator does).
        ValueError: a heatmap that is not 2-D or 3-D, per-object inputs of different lengths, or
            an active object whose class id has no ``k_for_classes`` entry or no heatmap slice.
    """
    _expect(heat_map, np.float32, "heat_map", "FLOAT")
    _expect(active, np.bool_, "active", "BOOL")
    _expect(class_ids, np.int32, "class_ids", "INT32")
    _expect(centers, np.int32, "centers", "INT32")
    _expect(radii, np.float32, "radii", "FLOAT")
    if heat_map.ndim not in (2, 3):
        raise ValueError(
            f"{_OP}: Heatmap has to have 2 or 3 dimensions, got shape {heat_map.shape}"
        )
    slices, height, width = (1, *heat_map.shape) if heat_map.ndim == 2 else heat_map.shape
    count = radii.size
    for name, array, per_object in (("active", active, 1), ("class_ids", class_ids, 1)):
        if array.size != count * per_object:
            raise ValueError(
                f"{_OP}: {name} has {array.size} values for {count} objects (one per radius)"
            )
    if centers.size != 2 * count:
        raise ValueError(
            f"{_OP}: centers has {centers.size} values for {count} objects (expected [{count}, 2])"
        )
    used = class_ids.reshape(-1)[active.reshape(-1)]
    if used.size:
        bad = used[(used < 0) | (used >= len(k_for_classes))]
        if bad.size:
            raise ValueError(
                f"{_OP}: class_id for active sample ({int(bad[0])}) exceeds elements in "
                f"k_for_classes ({len(k_for_classes)})."
            )
        if int(used.max()) >= slices:
            raise ValueError(
                f"{_OP}: class_id for active sample ({int(used.max())}) has no slice in the "
                f"heatmap of shape {tuple(heat_map.shape)}"
            )
    return int(slices), int(height), int(width)


def _windows(
    centers: np.ndarray, radii: np.ndarray, height: int, width: int
) -> tuple[np.ndarray, ...]:
    """Per object, the clipped window ``x0, x1, y0, y1`` (inclusive) and whether it is drawn."""
    bounds = []
    for axis, size in ((0, width), (1, height)):
        center = centers[:, axis].astype(_F32)
        # clip the float bounds first: a huge radius must not overflow the integer conversion
        low = np.clip(np.floor(center - radii), -1, size).astype(np.int64)
        high = np.clip(np.ceil(center + radii), -1, size).astype(np.int64)
        bounds.append((low, high, size))
    (x0, x1, w), (y0, y1, h) = bounds
    inside = (x1 >= 0) & (x0 < w) & (y1 >= 0) & (y0 < h)
    x0, x1 = np.clip(x0, 0, w - 1), np.clip(x1, 0, w - 1)
    y0, y1 = np.clip(y0, 0, h - 1), np.clip(y1, 0, h - 1)
    return x0, x1, y0, y1, inside & (x1 >= x0) & (y1 >= y0)


def draw_gaussians(
    heat_map: np.ndarray,
    objects: GaussianObjects,
    k_for_classes: Sequence[float],
    radius_to_sigma_factor: float,
) -> np.ndarray:
    """The heatmap with every active object's Gaussian drawn in (a new float32 array).

    Objects with a NaN radius draw nothing; a radius of 0 leaves the heatmap unchanged where it
    is not negative (the 0/0 at the center is skipped, as a C ``max`` skips NaN).
    """
    out = np.array(heat_map, dtype=_F32, copy=True)
    planes = out.reshape(objects.slices, out.shape[-2], out.shape[-1])
    height, width = planes.shape[1:]
    keep = objects.active & ~np.isnan(objects.radii)
    centers, radii = objects.centers[keep], objects.radii[keep]
    class_ids = objects.class_ids[keep].astype(np.int64)
    x0, x1, y0, y1, drawn = _windows(centers, radii, height, width)
    span = np.where(drawn, x1 - x0 + 1, 0)
    counts = span * np.where(drawn, y1 - y0 + 1, 0)
    total = int(counts.sum())
    if total == 0:
        return out
    owner = np.repeat(np.arange(len(counts)), counts)
    local = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    xs = x0[owner] + local % span[owner]
    ys = y0[owner] + local // span[owner]
    dx = xs - centers[owner, 0].astype(np.int64)
    dy = ys - centers[owner, 1].astype(np.int64)
    sigma = radii * _F32(radius_to_sigma_factor)
    k = np.asarray(k_for_classes, dtype=_F32)[class_ids]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        inverse = _F32(1.0) / (_F32(2.0) * sigma * sigma)
        exponent = -(dx * dx + dy * dy).astype(_F32) * inverse[owner]
        values = k[owner] * np.exp(exponent)
    values = np.where(np.isnan(values), _F32(-np.inf), values)
    flat_index = (class_ids[owner] * height + ys) * width + xs
    np.maximum.at(planes.reshape(-1), flat_index, values)
    return out


class DrawGaussiansKernel(SampleKernel):
    """``draw_gaussians`` on one sample."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Draw the sample's active objects into a copy of its heatmap."""
        heat_map, active, class_ids, centers, radii = inputs
        k_for_classes = tuple(args["k_for_classes"])
        slices, _, _ = check_inputs(heat_map, active, class_ids, centers, radii, k_for_classes)
        objects = GaussianObjects(
            active.reshape(-1),
            class_ids.reshape(-1),
            centers.reshape(-1, 2),
            radii.reshape(-1),
            slices,
        )
        return draw_gaussians(heat_map, objects, k_for_classes, args["radius_to_sigma_factor"])
