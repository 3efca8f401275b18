"""``noise.gaussian``: add normally distributed noise, reproducibly per sample.

Each sample draws from its own generator (derived from the operator seed, the iteration and the
sample index), so outputs do not depend on the number of threads. The noise is drawn exactly as
``random.normal`` draws it, so with the same seed ``noise.gaussian(x)`` equals
``x + random.normal(x)`` (as in DALI). Integer outputs are rounded (halves away from zero) and
saturated; the output type and layout are the input's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.tensors import check_dtype, saturate_cast

__all__ = ["NOISE_TYPES", "GaussianNoiseKernel", "add_gaussian_noise"]

NOISE_TYPES = (
    np.uint8,
    np.int8,
    np.uint16,
    np.int16,
    np.uint32,
    np.int32,
    np.uint64,
    np.int64,
    np.float32,
)


def add_gaussian_noise(
    data: np.ndarray, rng: np.random.Generator, mean: float = 0.0, stddev: float = 1.0
) -> np.ndarray:
    """``data + N(mean, stddev)`` drawn from ``rng`` (float32 noise), in ``data``'s type.

    The draw is ``random.normal``'s (``rng.normal`` rounded to float32), so both operators give
    the same noise for the same generator.
    """
    noise = rng.normal(mean, stddev, size=data.shape).astype(np.float32)
    if data.dtype.kind == "f":
        return (data + noise).astype(data.dtype, copy=False)
    work = np.float64 if data.dtype.itemsize >= 4 else np.float32
    return saturate_cast(data.astype(work) + noise, data.dtype)


class GaussianNoiseKernel(SampleKernel):
    """Per-sample ``noise.gaussian``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Add noise to one sample."""
        (data,) = inputs
        check_dtype("noise.gaussian", data, NOISE_TYPES)
        stddev = float(args["stddev"])
        if stddev < 0:
            raise ValueError(f"noise.gaussian: argument 'stddev' = {stddev} must be non-negative")
        return add_gaussian_noise(data, sample.rng, float(args["mean"]), stddev)
