"""Python bindings of the audio family's compiled kernels (``feedline_audio.c``).

They live in the compiled CPU library (:data:`~feedline.operators.native.CPU_LIBRARY`), built on
first use; cffi releases the GIL around each call. Each function returns None where that
library is unavailable (or disabled with ``FEEDLINE_NATIVE=0``) or the arguments do not suit it
(:func:`spectrogram_f32`: ``nfft`` not a power of two, or above :data:`MAX_NFFT`); the caller
then takes its NumPy/SciPy path, which computes the same values (:func:`preemphasis_f32` and
:func:`sparse_rows_f32` bit for bit, :func:`to_decibels_f32` with a correctly rounded log10).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from feedline.operators.native.libraries import CPU_LIBRARY

__all__ = [
    "MAX_NFFT",
    "SparseRows",
    "preemphasis_f32",
    "sparse_rows_f32",
    "spectrogram_f32",
    "to_decibels_f32",
]


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


#: The largest ``nfft`` the compiled spectrogram takes (its sizes are C ``int``s).
MAX_NFFT = 1 << 24


def _fits(nfft: int, window: np.ndarray) -> bool:
    return 2 <= nfft <= MAX_NFFT and nfft & (nfft - 1) == 0 and 1 <= len(window) <= nfft


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


def _map_f32(function: str, data: np.ndarray, *scalars: float) -> np.ndarray | None:
    """``function(data, length, *scalars, out)`` of the library on float32 ``data`` into a new
    array of its shape; None without the library."""
    loaded = CPU_LIBRARY.try_load()
    if loaded is None:
        return None
    ffi, lib = loaded
    data = np.ascontiguousarray(data, np.float32)
    out = np.empty_like(data)
    if data.size:
        getattr(lib, function)(
            ffi.from_buffer("float[]", data), data.size, *scalars, ffi.from_buffer("float[]", out)
        )
    return out


def preemphasis_f32(signal: np.ndarray, coeff: float, before: float) -> np.ndarray | None:
    """``out[t] = signal[t] - coeff * signal[t - 1]`` over a flat float32 signal, ``before``
    standing for ``signal[-1]``, in float32; None without the library."""
    return _map_f32("fl_preemphasis_f32", signal, coeff, before)


class SparseRows:
    """A float32 matrix in compressed sparse rows, as :func:`sparse_rows_f32` takes it: row
    ``f``'s non-zero values ``weights[offsets[f]:offsets[f + 1]]`` in the columns ``indices``
    of the same range (ascending)."""

    def __init__(self, dense: np.ndarray) -> None:
        values = np.asarray(dense, np.float32)
        rows, columns = np.nonzero(values)
        self.shape = values.shape
        self.offsets = np.searchsorted(rows, np.arange(len(values) + 1)).astype(np.int32)
        self.indices = columns.astype(np.int32)
        self.weights = np.ascontiguousarray(values[rows, columns])


def sparse_rows_f32(matrix: SparseRows, data: np.ndarray) -> np.ndarray | None:
    """``matrix @ data`` for a 2-D float32 ``data`` (``(matrix.shape[1], n)``), accumulated in
    float32 in column order as SciPy's sparse product; None without the library (or when the
    shapes do not match)."""
    loaded = CPU_LIBRARY.try_load()
    if loaded is None or data.ndim != 2 or data.shape[0] != matrix.shape[1]:
        return None
    ffi, lib = loaded
    data = np.ascontiguousarray(data, np.float32)
    out = np.empty((matrix.shape[0], data.shape[1]), np.float32)
    if out.size:
        lib.fl_sparse_rows_f32(
            ffi.from_buffer("float[]", data),
            data.shape[1],
            matrix.shape[0],
            ffi.from_buffer("int32_t[]", matrix.offsets),
            ffi.from_buffer("int32_t[]", matrix.indices),
            ffi.from_buffer("float[]", matrix.weights),
            ffi.from_buffer("float[]", out),
        )
    return out


def to_decibels_f32(
    data: np.ndarray, multiplier: float, reference: float | None, floor: float
) -> np.ndarray | None:
    """``multiplier * log10(max(data / reference, floor))`` of float32 ``data`` in float32, the
    reference being the data's maximum when None; None without the library."""
    use_max = reference is None
    given = 0.0 if reference is None else reference
    return _map_f32("fl_to_decibels_f32", data, multiplier, int(use_max), given, floor)
