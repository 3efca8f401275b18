"""float64 references written from the operators' documented definitions (no lookup tables, no
FFT): the tests compare the operators with these."""

from __future__ import annotations

import math

import numpy as np


def windowed_sinc(x: np.ndarray, lobes: int) -> np.ndarray:
    """``sinc(x) * hann(x / lobes)`` on ``(-lobes, lobes)``, 0 outside."""
    inside = np.abs(x) < lobes
    return np.where(inside, np.sinc(x) * 0.5 * (1 + np.cos(np.pi * x / lobes)), 0.0)


def resample_reference(signal: np.ndarray, ratio: float, n_out: int, lobes: int = 16) -> np.ndarray:
    """Output ``j`` = Σ_i x[i] w(i - j / ratio) over the signal (1-D, float64)."""
    x = signal.astype(np.float64)
    out = np.empty(n_out)
    for j in range(n_out):
        position = j / ratio
        first = max(math.ceil(position) - lobes, 0)
        last = min(math.ceil(position) + lobes, len(x))
        taps = np.arange(first, last)
        out[j] = np.dot(x[first:last], windowed_sinc(taps - position, lobes))
    return out


def dft_power(frame: np.ndarray, nfft: int, power: int = 2) -> np.ndarray:
    """|DFT|^power of a zero-padded frame at bins 0..nfft//2, by explicit sums."""
    padded = np.zeros(nfft)
    padded[: len(frame)] = frame
    k = np.arange(nfft // 2 + 1)[:, None]
    n = np.arange(nfft)[None, :]
    re = (padded * np.cos(2 * np.pi * k * n / nfft)).sum(axis=1)
    im = (padded * np.sin(2 * np.pi * k * n / nfft)).sum(axis=1)
    magnitude2 = re * re + im * im
    return magnitude2 if power == 2 else np.sqrt(magnitude2)


def mirror(index: int, n: int) -> int:
    """Reflect an index into [0, n) without repeating the edge samples."""
    while index < 0 or index >= n:
        index = -index if index < 0 else 2 * (n - 1) - index
    return index
