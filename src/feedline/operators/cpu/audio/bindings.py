"""Python binding of the audio family's compiled spectrogram (``feedline_audio.c``).

It lives in the compiled CPU library (:data:`~feedline.operators.native.CPU_LIBRARY`), built on
first use; cffi releases the GIL around the call. :func:`spectrogram_f32` returns None where
that library is unavailable (or disabled with ``FEEDLINE_NATIVE=0``) or ``nfft`` is not a power
of two; the caller then takes its SciPy path, which computes the same values.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from feedline.operators.native.libraries import CPU_LIBRARY

__all__ = ["spectrogram_f32"]


@functools.cache
def _plan(nfft: int) -> tuple[np.ndarray, np.ndarray]:
    """``(twiddles, bit-reversal table)`` for a power-of-two ``nfft``, computed once."""
    loaded = CPU_LIBRARY.try_load()
    assert loaded is not None
    ffi, lib = loaded
    half = nfft // 2
    twiddles = np.empty(3 * half, np.float32)
    reverse = np.empty(half, np.int32)
    lib.fl_spectrogram_plan(
        nfft, ffi.from_buffer("float[]", twiddles), ffi.from_buffer("int32_t[]", reverse)
    )
    return twiddles, reverse


def _fits(nfft: int, window: np.ndarray) -> bool:
    return nfft >= 2 and nfft & (nfft - 1) == 0 and 1 <= len(window) <= nfft


def spectrogram_f32(
    signal: np.ndarray,
    window: np.ndarray,
    step: int,
    nfft: int,
    count: int,
    centered: bool,
    reflect: bool,
    power: int,
    frequency_major: bool,
) -> np.ndarray | None:
    """The power (``power=2``) or magnitude spectrogram of ``count`` windows of the float32
    signal, ``(nfft // 2 + 1, count)`` with ``frequency_major``, else ``(count, nfft // 2 + 1)``;
    None when the compiled kernel cannot do it (no library, ``nfft`` not a power of two)."""
    loaded: tuple[Any, Any] | None = CPU_LIBRARY.try_load()
    if loaded is None or not _fits(nfft, window) or power not in (1, 2):
        return None
    ffi, lib = loaded
    twiddles, reverse = _plan(nfft)
    bins = nfft // 2 + 1
    out = np.empty((bins, count) if frequency_major else (count, bins), np.float32)
    if not count:
        return out
    signal = np.ascontiguousarray(signal, np.float32)
    window = np.ascontiguousarray(window, np.float32)
    status = lib.fl_spectrogram_f32(
        ffi.from_buffer("float[]", signal),
        len(signal),
        ffi.from_buffer("float[]", window),
        len(window),
        step,
        nfft,
        int(centered),
        int(reflect),
        power,
        int(frequency_major),
        ffi.from_buffer("float[]", twiddles),
        ffi.from_buffer("int32_t[]", reverse),
        count,
        ffi.from_buffer("float[]", out),
    )
    return out if status == 0 else None
