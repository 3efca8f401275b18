"""``jitter``: move every pixel by a random whole-pixel offset (DALI's ``jitter``, GPU-only there).

Output pixel ``(x, y)`` takes the input at ``(x + dx, y + dy)`` with ``dx``, ``dy`` drawn
independently and uniformly from ``{-(nDegree // 2), …, nDegree - 1 - nDegree // 2}`` (DALI's
``rand % nDegree - nDegree / 2``); a source outside the image gives ``fill_value``. Offsets are
whole pixels, so every interpolation type gives the same result. Samples with ``mask = 0`` are
passed through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.transforms_common import resolve_layout, saturate_cast

__all__ = ["JitterKernel", "jitter"]

_LAYOUTS = ("HWC", "HW")
_DEFAULTS = {2: "HW", 3: "HWC"}


def jitter(
    image: np.ndarray, n_degree: int, fill_value: float, rng: np.random.Generator
) -> np.ndarray:
    """A jittered copy of an ``HW``/``HWC`` image."""
    height, width = image.shape[:2]
    half = n_degree // 2
    dy = rng.integers(0, n_degree, (height, width)) - half
    dx = rng.integers(0, n_degree, (height, width)) - half
    sy = np.arange(height)[:, None] + dy
    sx = np.arange(width)[None, :] + dx
    inside = (sy >= 0) & (sy < height) & (sx >= 0) & (sx < width)
    out = image[np.clip(sy, 0, height - 1), np.clip(sx, 0, width - 1)]
    fill = saturate_cast(np.array([fill_value], np.float64), image.dtype)[0]
    out[~inside] = fill
    return out


class JitterKernel(SampleKernel):
    """Per-sample ``jitter`` with the sample's own generator."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Jitter one image (or pass it through when its mask is 0)."""
        (image,) = inputs
        resolve_layout("jitter", sample.layouts[0], image.ndim, _LAYOUTS, _DEFAULTS)
        n_degree = int(args["nDegree"])
        if n_degree < 1:
            raise ValueError(f"jitter: argument 'nDegree' = {n_degree} must be positive")
        if not int(np.asarray(args["mask"]).reshape(())):
            return image
        return jitter(image, n_degree, float(args["fill_value"]), sample.rng)
