"""The ``spectrogram`` and ``power_spectrum`` kernels.

A spectrogram whose ``nfft`` is a power of two runs in the compiled CPU library
(:mod:`~feedline.operators.cpu.audio.bindings`, ``feedline_audio.c``): one call per signal, without
the GIL, cuts the windows (padding them as :func:`_pad` does), applies the window, transforms
several windows at once in the SIMD lanes of a radix-2 real FFT in single precision, and writes
the power or magnitude straight into the requested layout. Other sizes, and machines where the
library is unavailable (or ``FEEDLINE_NATIVE=0``), take :func:`stft_scipy`.

There, transforms run in single precision (as DALI's) with ``scipy.fft`` when SciPy is installed
(the ``audio`` extra pulls it in), else with NumPy's FFT in double precision (several times
slower). Windows are written, windowed, straight into a zero-padded ``nfft``-wide float32 buffer
that the FFT reads whole: asking pocketfft to pad (``n=nfft``) costs it about three times as
long as the transform itself. That buffer is kept per thread (:class:`FrameBuffer`) and only
grows, so a spectrogram allocates no fresh pages for it (page faults on a new half-megabyte
buffer per sample cost as much as the FFT). The power is ``np.abs`` squared in place, put in
the output layout by one contiguous transposing copy. ``power_spectrum`` always takes SciPy.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.audio.bindings import spectrogram_f32

__all__ = [
    "FrameBuffer",
    "PowerSpectrumKernel",
    "SpectrogramKernel",
    "hann_window",
    "power_spectrum",
    "stft",
    "stft_scipy",
    "windows",
]


def hann_window(length: int) -> np.ndarray:
    """DALI's default window: ``0.5 (1 - cos(2π (t + 0.5) / length))``."""
    t = np.arange(length, dtype=np.float64)
    return 0.5 * (1 - np.cos(2 * np.pi * (t + 0.5) / length))


def _rfft(frames: np.ndarray, nfft: int | None, axis: int) -> np.ndarray:
    """Real FFT in float32 with SciPy, in float64 with NumPy when SciPy is missing."""
    try:
        import scipy.fft
    except ImportError:
        return np.fft.rfft(frames.astype(np.float64, copy=False), n=nfft, axis=axis)
    return scipy.fft.rfft(frames.astype(np.float32, copy=False), n=nfft, axis=axis)


def _magnitude(spectrum: np.ndarray, power: int, transpose: bool = False) -> np.ndarray:
    """``|X|²`` (``power=2``) or ``|X|`` in float32, of a 2-D spectrum transposed with
    ``transpose``: ``np.abs`` (a correctly rounded ``hypot``) squared in place, then one
    transposing copy. Summing the squared real and imaginary parts straight into a transposed
    result costs about twice as much, its strided reads defeating the cache."""
    magnitude = np.abs(spectrum)
    if power == 2:
        np.square(magnitude, out=magnitude)
    magnitude = magnitude.astype(np.float32, copy=False)
    return np.ascontiguousarray(magnitude.T) if transpose else magnitude


def _pad(signal: np.ndarray, before: int, after: int, reflect: bool) -> np.ndarray:
    """``signal`` with ``before``/``after`` samples added: mirrored without repeating the edge
    sample (``reflect``), else zeros. Slices instead of ``np.pad``, whose Python overhead costs
    as much as the copy for one signal; pads longer than the signal take ``np.pad``."""
    n = len(signal)
    if reflect and n and (before >= n or after >= n):
        return np.pad(signal, (before, after), mode="reflect")
    out = np.zeros(n + before + after, signal.dtype)
    out[before : before + n] = signal
    if reflect and n:
        out[:before] = signal[1 : before + 1][::-1]
        out[before + n :] = signal[n - 1 - after : n - 1][::-1]
    return out


class FrameBuffer(threading.local):
    """Per-thread ``(rows, nfft)`` float32 buffer whose columns from ``length`` on stay zero:
    windows are written into its first ``length`` columns only. It grows to the longest signal
    seen, up to :attr:`KEEP_BYTES`, and is reused, so its pages are not faulted in again for
    every sample; longer signals get a buffer of their own that is not kept."""

    KEEP_BYTES = 16 << 20
    """The largest buffer kept per thread (16 MiB: 8192 windows of 512 points)."""

    def __init__(self, nfft: int) -> None:
        self.nfft = nfft
        self.rows = np.zeros((0, nfft), np.float32)

    def take(self, count: int) -> np.ndarray:
        """A ``(count, nfft)`` array whose columns past the window are zero (the first ones
        may hold earlier windows)."""
        if len(self.rows) < count:
            rows = max(count, 2 * len(self.rows))
            if rows * self.nfft * 4 > self.KEEP_BYTES:
                rows = count
                if rows * self.nfft * 4 > self.KEEP_BYTES:
                    return np.zeros((count, self.nfft), np.float32)
            self.rows = np.zeros((rows, self.nfft), np.float32)
        return self.rows[:count]


def windows(samples: int, length: int, step: int, centered: bool) -> int:
    """How many windows a spectrogram of ``samples`` has: one centred on every multiple of
    ``step`` up to the signal's length, else every window that fits in the signal."""
    if centered:
        return samples // step + 1
    return max((samples - length) // step + 1, 0)


def stft(
    signal: np.ndarray,
    window: np.ndarray,
    step: int,
    nfft: int,
    centered: bool = True,
    reflect: bool = True,
    power: int = 2,
    frequency_major: bool = False,
    buffer: FrameBuffer | None = None,
) -> np.ndarray:
    """The ``(windows, nfft // 2 + 1)`` power/magnitude spectrogram of a 1-D float32 signal
    (``(nfft // 2 + 1, windows)`` with ``frequency_major``): the compiled kernel's where it
    runs, else :func:`stft_scipy`'s (with ``buffer``)."""
    count = windows(len(signal), len(window), step, centered)
    compiled = spectrogram_f32(
        signal, window, step, nfft, count, centered, reflect, power, frequency_major
    )
    if compiled is not None:
        return compiled
    return stft_scipy(signal, window, step, nfft, centered, reflect, power, frequency_major, buffer)


def stft_scipy(
    signal: np.ndarray,
    window: np.ndarray,
    step: int,
    nfft: int,
    centered: bool = True,
    reflect: bool = True,
    power: int = 2,
    frequency_major: bool = False,
    buffer: FrameBuffer | None = None,
) -> np.ndarray:
    """:func:`stft` with SciPy's FFT (NumPy's without SciPy), its windows padded with zeros to
    ``nfft`` in ``buffer`` (a new array without)."""
    length = len(window)
    count = windows(len(signal), length, step, centered)
    if centered:
        half = length // 2
        # Enough padding for the last window, which starts at (count - 1) * step - half.
        tail = max((count - 1) * step - half + length - len(signal), 0)
        signal = _pad(signal, half, tail, reflect)
    stride = signal.strides[0]
    frames = as_strided(signal, (count, length), (step * stride, stride), writeable=False)
    if buffer is None or buffer.nfft != nfft:
        padded = np.zeros((len(frames), nfft), np.float32)
    else:
        padded = buffer.take(len(frames))
    np.multiply(frames, window, out=padded[:, :length], casting="unsafe")
    return _magnitude(_rfft(padded, None, axis=1), power, frequency_major)


class SpectrogramKernel(SampleKernel):
    """Per-sample ``spectrogram``."""

    def setup(self) -> None:
        """Check the window arguments."""
        args = self.args
        length, step = args["window_length"], args["window_step"]
        nfft = length if args["nfft"] is None else args["nfft"]
        if length < 1 or step < 1:
            raise ValueError(
                f"spectrogram: window_length ({length}) and window_step ({step}) must be positive"
            )
        if nfft < length:
            raise ValueError(
                f"spectrogram: nfft ({nfft}) must be at least window_length ({length})"
            )
        window = args["window_fn"]
        if window is not None and len(window) != length:
            raise ValueError(
                f"spectrogram: window_fn has {len(window)} values; window_length is {length}"
            )
        chosen = hann_window(length) if window is None else np.asarray(window, np.float64)
        self._window = chosen.astype(np.float32)
        self._nfft = nfft
        self._buffer = FrameBuffer(nfft)

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The ``layout`` argument."""
        return (self.args["layout"],)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """The spectrogram of one signal."""
        (signal,) = inputs
        if sum(extent > 1 for extent in signal.shape) > 1:
            raise ValueError(
                "spectrogram: expected one channel, (n,), (n, 1) or (1, n) (any extra axes of "
                f"extent 1); got shape {signal.shape}"
            )
        a = self.args
        frames = stft(
            signal.reshape(-1).astype(np.float32, copy=False),
            self._window,
            a["window_step"],
            self._nfft,
            a["center_windows"],
            a["reflect_padding"],
            a["power"],
            frequency_major=a["layout"] == "ft",
            buffer=self._buffer,
        )
        return frames


def power_spectrum(data: np.ndarray, axis: int, nfft: int | None, power: int) -> np.ndarray:
    """The power spectrum (``power=2``) or magnitude of ``data`` along ``axis``."""
    return _magnitude(_rfft(data, nfft, axis), power)


class PowerSpectrumKernel(SampleKernel):
    """Per-sample ``power_spectrum``."""

    def setup(self) -> None:
        """Check ``nfft``."""
        nfft = self.args["nfft"]
        if nfft is not None and nfft < 1:
            raise ValueError(f"power_spectrum: nfft ({nfft}) must be positive")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """The spectrum of one sample."""
        (data,) = inputs
        axis = self.args["axis"]
        if not -data.ndim <= axis < data.ndim:
            raise ValueError(
                f"power_spectrum: axis {axis} is out of range for a {data.ndim}-D input"
            )
        return power_spectrum(data, axis, self.args["nfft"], self.args["power"])
