"""A slow, obviously correct ``draw_gaussians``: one object, one pixel at a time (test helper)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

F32 = np.float32


def reference_gaussians(
    heat_map: np.ndarray,
    active: Sequence[bool],
    class_ids: Sequence[int],
    centers: Sequence[Sequence[int]],
    radii: Sequence[float],
    k_for_classes: Sequence[float],
    factor: float,
) -> np.ndarray:
    """Every active object's window visited pixel by pixel, keeping the larger value (a NaN
    Gaussian value never replaces a pixel), in float32 as the operator promises."""
    out = np.array(heat_map, F32, copy=True)
    planes = out.reshape(-1, out.shape[-2], out.shape[-1])
    height, width = planes.shape[1:]
    for on, cls, (cx, cy), radius in zip(active, class_ids, centers, radii, strict=True):
        radius = F32(radius)
        if not on or math.isnan(radius):
            continue
        x0 = int(max(-1.0, min(width, math.floor(F32(cx) - radius))))
        x1 = int(max(-1.0, min(width, math.ceil(F32(cx) + radius))))
        y0 = int(max(-1.0, min(height, math.floor(F32(cy) - radius))))
        y1 = int(max(-1.0, min(height, math.ceil(F32(cy) + radius))))
        if x1 < 0 or x0 >= width or y1 < 0 or y0 >= height:
            continue
        sigma = radius * F32(factor)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            inverse = F32(1.0) / (F32(2.0) * sigma * sigma)
            for y in range(max(y0, 0), min(y1, height - 1) + 1):
                for x in range(max(x0, 0), min(x1, width - 1) + 1):
                    distance = F32((x - cx) ** 2 + (y - cy) ** 2)
                    value = F32(k_for_classes[cls]) * np.exp(-distance * inverse)
                    if planes[cls, y, x] < value:
                        planes[cls, y, x] = value
    return out
