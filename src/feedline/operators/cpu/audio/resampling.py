"""Band-limited resampling as DALI defines it: a Hann-windowed sinc sampled into a lookup table.

The filter has ``lobes`` zero crossings on each side (``quality`` 0 → 3 lobes, 50 → 16,
100 → 64: ``round(0.007 q² - 0.09 q + 3)``) and is read from a table of ``64 * lobes + 1``
points with linear interpolation. Output sample ``j`` sits at input position ``j * in_rate /
out_rate`` and sums the ``2 * lobes`` input samples around it (those outside the signal count
as zero). As in DALI, the kernel is not widened when downsampling, and the output length is
``ceil(n_in * out_rate / in_rate)``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = [
    "SincWindow",
    "convert_normalized",
    "lobes_for_quality",
    "resample",
    "resampled_length",
    "sinc_window",
    "to_float",
]

_BLOCK = 256  # outputs per block; positions restart from an exact value at each block


def lobes_for_quality(quality: float) -> int:
    """The number of sinc lobes of a ``quality`` in [0, 100].

    Raises:
        ValueError: ``quality`` outside [0, 100].
    """
    if not 0 <= quality <= 100:
        raise ValueError(f"resampling quality must be in [0, 100], got {quality}")
    return math.floor(0.007 * quality * quality - 0.09 * quality + 3 + 0.5)


class SincWindow:
    """The tabulated windowed sinc of ``lobes`` lobes (float32, like DALI's)."""

    def __init__(self, lobes: int) -> None:
        coeffs = lobes * 64 + 1
        step = np.float32(2.0 * lobes / (coeffs - 1))
        envelope_step = np.float32(2.0 / coeffs)
        center = (coeffs - 1) // 2
        offsets = (np.arange(coeffs) - center).astype(np.float32)
        x = (offsets * step).astype(np.float64)
        y = (offsets * envelope_step).astype(np.float64)
        table = np.zeros(coeffs + 2, np.float32)
        table[1 : coeffs + 1] = np.sinc(x) * 0.5 * (1 + np.cos(np.pi * y))
        self.lobes = lobes
        self.table = table
        self.center = np.float32(center + 1)
        self.scale = np.float32(1 / step)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The window at offsets ``x`` (float32 array, each in ``[-lobes, lobes)``)."""
        position = x * self.scale + self.center
        index = np.floor(position)
        frac = position - index
        index = index.astype(np.intp)
        low = self.table[index]
        return low + frac * (self.table[index + 1] - low)


@lru_cache(maxsize=8)
def sinc_window(lobes: int) -> SincWindow:
    """The (shared) window of ``lobes`` lobes."""
    return SincWindow(lobes)


def resampled_length(n_in: int, in_rate: float, out_rate: float) -> int:
    """``ceil(n_in * out_rate / in_rate)``, computed in double precision as DALI does."""
    return math.ceil(n_in * out_rate / in_rate)


def resample(
    signal: np.ndarray, in_rate: float, out_rate: float, window: SincWindow, n_out: int
) -> np.ndarray:
    """Resample ``signal`` (float32, ``(n,)`` or ``(n, channels)``) to ``n_out`` samples.

    Returns:
        float32 array of shape ``(n_out,)`` or ``(n_out, channels)``.
    """
    mono = signal.ndim == 1
    frames = signal.reshape(len(signal), -1).astype(np.float32, copy=False)
    n_in, channels = frames.shape
    out = np.zeros((n_out, channels), np.float32)
    if n_in == 0 or n_out == 0:
        return out[:, 0] if mono else out
    padded = np.zeros((n_in + 1, channels), np.float32)  # row n_in stands for "outside"
    padded[:n_in] = frames
    scale = in_rate / out_rate
    step = np.float32(scale)
    taps = np.arange(2 * window.lobes)
    for begin in range(0, n_out, _BLOCK):
        count = min(_BLOCK, n_out - begin)
        start = begin * scale
        base = math.floor(start)
        # Positions within the block accumulate in float32 from the block's start, as in DALI.
        increments = np.full(count, step, np.float32)
        increments[0] = np.float32(start - base)
        positions = np.cumsum(increments, dtype=np.float32)
        rel = (np.ceil(positions).astype(np.intp) - window.lobes)[:, None] + taps[None, :]
        weights = window(rel.astype(np.float32) - positions[:, None])
        index = rel + base
        index[(index < 0) | (index >= n_in)] = n_in
        out[begin : begin + count] = np.einsum("ot,otc->oc", weights, padded[index])
    return out[:, 0] if mono else out


def to_float(samples: np.ndarray) -> np.ndarray:
    """float32 samples: integers divided by their type's maximum (unsigned ones mapped to
    [-1, 1] around half range), floats as they are."""
    dtype = samples.dtype
    if dtype.kind == "f":
        return samples.astype(np.float32, copy=False)
    top = float(np.iinfo(dtype).max)
    if dtype.kind == "u":
        return (samples.astype(np.float64) / top * 2 - 1).astype(np.float32)
    return (samples.astype(np.float64) / top).astype(np.float32)


def convert_normalized(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float values in [-1, 1] to ``dtype``: integers scaled to their range, rounded and
    saturated (unsigned ones with 0 at half range), halves rounded away from zero; floats
    cast."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return values.astype(dtype, copy=False)
    info = np.iinfo(dtype)
    scaled = values.astype(np.float32, copy=False)
    top = np.float32(info.max)
    scaled = (scaled + 1) * np.float32(0.5) * top if dtype.kind == "u" else scaled * top
    scaled = scaled.astype(np.float64)
    rounded = np.trunc(scaled + np.copysign(0.5, scaled))  # halves away from zero
    return np.clip(rounded, info.min, info.max).astype(dtype)
