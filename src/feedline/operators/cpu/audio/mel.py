"""The ``mel_filter_bank`` and ``mfcc`` kernels.

The filter bank is sparse (each frequency bin feeds at most two filters): it is applied as a
float32 sparse product, in the compiled CPU library where it loads (one GIL-free call per
sample, :func:`~feedline.operators.cpu.audio.bindings.sparse_rows_f32`), else with SciPy's
CSR matrix (the same values), else row by row with NumPy in float64.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.audio.bindings import SparseRows, sparse_rows_f32

__all__ = [
    "MelFilterBankKernel",
    "MfccKernel",
    "apply_rows",
    "dct_matrix",
    "hz_to_mel",
    "mel_filters",
    "mel_to_hz",
    "nonzero_bands",
]

_SLANEY_STEP = 200.0 / 3  # Hz per mel below 1 kHz
_SLANEY_KNEE = 1000.0
_SLANEY_LOG_STEP = np.log(6.4) / 27


def hz_to_mel(hz: np.ndarray, formula: str) -> np.ndarray:
    """Frequencies in Hz to mels (``slaney`` or ``htk``)."""
    hz = np.asarray(hz, np.float64)
    if formula == "htk":
        return 2595.0 * np.log10(1 + hz / 700.0)
    knee_mel = _SLANEY_KNEE / _SLANEY_STEP
    above = knee_mel + np.log(np.maximum(hz, 1e-10) / _SLANEY_KNEE) / _SLANEY_LOG_STEP
    return np.where(hz >= _SLANEY_KNEE, above, hz / _SLANEY_STEP)


def mel_to_hz(mel: np.ndarray, formula: str) -> np.ndarray:
    """Mels to frequencies in Hz (inverse of :func:`hz_to_mel`)."""
    mel = np.asarray(mel, np.float64)
    if formula == "htk":
        return 700.0 * (10 ** (mel / 2595.0) - 1)
    knee_mel = _SLANEY_KNEE / _SLANEY_STEP
    above = _SLANEY_KNEE * np.exp(_SLANEY_LOG_STEP * (mel - knee_mel))
    return np.where(mel >= knee_mel, above, mel * _SLANEY_STEP)


@lru_cache(maxsize=32)
def mel_filters(
    nfreq: int,
    nfilter: int,
    sample_rate: float,
    freq_low: float,
    freq_high: float,
    normalize: bool,
    formula: str,
) -> np.ndarray:
    """The ``(nfilter, nfreq)`` filter bank for spectra of ``nfreq = nfft // 2 + 1`` bins."""
    nfft = 2 * (nfreq - 1)
    corners = mel_to_hz(
        np.linspace(hz_to_mel(freq_low, formula), hz_to_mel(freq_high, formula), nfilter + 2),
        formula,
    )
    freqs = np.arange(nfreq) * (sample_rate / max(nfft, 1))
    left, center, right = corners[:-2, None], corners[1:-1, None], corners[2:, None]
    rising = (freqs - left) / (center - left)
    falling = (right - freqs) / (right - center)
    bank = np.maximum(0.0, np.minimum(rising, falling))
    if normalize:
        bank *= 2.0 / (right - left)
    bank.flags.writeable = False
    return bank


def apply_rows(
    matrix: np.ndarray,
    data: np.ndarray,
    axis: int,
    bands: Sequence[tuple[int, int]] | None = None,
) -> np.ndarray:
    """``matrix`` applied along ``axis`` of ``data`` (float32 result), one row at a time.

    Each row is a small matrix-vector product over its non-zero ``bands`` (default: the whole
    row): faster than one matrix product for sparse filter banks, and never handed to a
    multi-threaded BLAS routine that would compete with the pipeline's own threads.
    """
    moved = np.moveaxis(data, axis, 0).astype(np.float64)
    flat = moved.reshape(moved.shape[0], -1)
    out = np.zeros((matrix.shape[0], flat.shape[1]), np.float64)
    for row, (low, high) in enumerate(bands or [(0, matrix.shape[1])] * matrix.shape[0]):
        if high > low:
            out[row] = matrix[row, low:high] @ flat[low:high]
    shaped = out.reshape(matrix.shape[0], *moved.shape[1:]).astype(np.float32)
    return np.ascontiguousarray(np.moveaxis(shaped, 0, axis))


def nonzero_bands(matrix: np.ndarray) -> tuple[tuple[int, int], ...]:
    """The ``[first, last + 1)`` non-zero columns of each row (``(0, 0)`` for a zero row)."""
    bands = []
    for row in matrix:
        nonzero = np.flatnonzero(row)
        bands.append((int(nonzero[0]), int(nonzero[-1]) + 1) if nonzero.size else (0, 0))
    return tuple(bands)


@lru_cache(maxsize=32)
def _mel_bands(*key: object) -> tuple[tuple[int, int], ...]:
    return nonzero_bands(mel_filters(*key))  # type: ignore[arg-type]


@lru_cache(maxsize=32)
def _compiled_bank(*key: object) -> SparseRows:
    """The filter bank in float32 compressed rows for the compiled product, which gives the
    same values as SciPy's (:func:`_sparse_bank`) without SciPy's Python overhead or the GIL."""
    return SparseRows(mel_filters(*key))  # type: ignore[arg-type]


@lru_cache(maxsize=32)
def _sparse_bank(*key: object) -> Any:
    """The filter bank as a float32 SciPy CSR matrix (None without SciPy): each frequency bin
    feeds at most two filters, so a sparse product is several times faster than a dense one."""
    try:
        import scipy.sparse
    except ImportError:
        return None
    return scipy.sparse.csr_matrix(mel_filters(*key).astype(np.float32))  # type: ignore[arg-type]


def _frequency_axis(layout: str, ndim: int) -> int:
    if layout:
        if "f" not in layout:
            raise ValueError(f"mel_filter_bank: the input layout {layout!r} has no 'f' axis")
        return layout.index("f")
    return 0 if ndim == 1 else ndim - 2


class MelFilterBankKernel(SampleKernel):
    """Per-sample ``mel_filter_bank``."""

    def setup(self) -> None:
        """Check the frequency range."""
        a = self.args
        rate = a["sample_rate"]
        high = a["freq_high"] or rate / 2
        if a["nfilter"] < 1 or rate <= 0:
            raise ValueError(
                f"mel_filter_bank: nfilter ({a['nfilter']}) and sample_rate ({rate}) must be "
                "positive"
            )
        if not 0 <= a["freq_low"] < high <= rate / 2:
            raise ValueError(
                f"mel_filter_bank: need 0 <= freq_low ({a['freq_low']}) < freq_high ({high}) "
                f"<= sample_rate / 2 ({rate / 2})"
            )
        self._high = high

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Apply the filter bank along the frequency axis."""
        (spectrum,) = inputs
        axis = _frequency_axis(sample.layouts[0], spectrum.ndim)
        a = self.args
        key = (spectrum.shape[axis], a["nfilter"], a["sample_rate"], a["freq_low"], self._high,
               a["normalize"], a["mel_formula"])  # fmt: skip
        moved = (spectrum if axis == 0 else np.moveaxis(spectrum, axis, 0)).astype(
            np.float32, copy=False
        )
        flat = moved.reshape(moved.shape[0], -1)
        product = sparse_rows_f32(_compiled_bank(*key), flat)
        if product is None:
            sparse = _sparse_bank(*key)
            if sparse is None:
                return apply_rows(mel_filters(*key), spectrum, axis, _mel_bands(*key))
            product = np.asarray(sparse @ flat)
        out = product.reshape(-1, *moved.shape[1:])
        return out if axis == 0 else np.ascontiguousarray(np.moveaxis(out, 0, axis))


@lru_cache(maxsize=32)
def dct_matrix(n: int, count: int, dct_type: int, normalize: bool) -> np.ndarray:
    """The ``(count, n)`` matrix of the DCT of ``dct_type`` (textbook scaling, or
    orthonormal with ``normalize``)."""
    k = np.arange(count, dtype=np.float64)[:, None]
    i = np.arange(n, dtype=np.float64)[None, :]
    if dct_type == 1:
        basis = np.cos(np.pi / max(n - 1, 1) * i * k)
        basis[:, 0] *= 0.5
        basis[:, -1] *= 0.5
    elif dct_type == 2:
        basis = np.cos(np.pi / n * (i + 0.5) * k)
        if normalize:
            basis *= np.where(k == 0, np.sqrt(1 / n), np.sqrt(2 / n))
    elif dct_type == 3:
        basis = np.cos(np.pi / n * i * (k + 0.5))
        if normalize:
            basis *= np.sqrt(2 / n)
            basis[:, 0] = np.sqrt(1 / n)
        else:
            basis[:, 0] *= 0.5
    else:
        basis = np.cos(np.pi / n * (i + 0.5) * (k + 0.5))
        if normalize:
            basis *= np.sqrt(2 / n)
    basis.flags.writeable = False
    return basis


class MfccKernel(SampleKernel):
    """Per-sample ``mfcc``."""

    def setup(self) -> None:
        """Check the DCT arguments (DALI's errors and wording).

        Raises:
            RuntimeError: an unsupported DCT type, normalization with type 1, a negative axis.
            ValueError: a non-positive ``n_mfcc`` or a negative ``lifter``.
        """
        a = self.args
        if a["dct_type"] not in (1, 2, 3, 4):
            raise RuntimeError(
                f"mfcc: Unsupported DCT type: {a['dct_type']}. Supported types are: 1, 2, 3, 4"
            )
        if a["dct_type"] == 1 and a["normalize"]:
            raise RuntimeError("mfcc: Ortho-normalization is not supported for DCT type I")
        if a["axis"] < 0:
            raise RuntimeError(f"mfcc: Provided axis cannot be negative (got {a['axis']})")
        if a["n_mfcc"] < 1:
            raise ValueError(f"mfcc: n_mfcc ({a['n_mfcc']}) must be positive")
        if a["lifter"] < 0:
            raise ValueError(f"mfcc: lifter ({a['lifter']}) must not be negative")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """The cepstral coefficients of one sample."""
        (data,) = inputs
        a = self.args
        axis = a["axis"]
        if axis >= data.ndim:
            raise ValueError(f"mfcc: Axis {axis} is out of bounds [0,{data.ndim})")
        n = data.shape[axis]
        if a["dct_type"] == 1 and n < 2:
            raise ValueError("mfcc: dct_type=1 needs at least 2 values along the axis")
        basis = dct_matrix(n, a["n_mfcc"], a["dct_type"], a["normalize"])
        if a["lifter"] > 0:
            lift = 1 + a["lifter"] / 2 * np.sin(np.pi * (np.arange(a["n_mfcc"]) + 1) / a["lifter"])
            basis = basis * lift[:, None]
        return apply_rows(basis, data, axis)
