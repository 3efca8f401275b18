"""The ``spectrogram`` and ``power_spectrum`` kernels (NumPy's real FFT)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel

__all__ = ["PowerSpectrumKernel", "SpectrogramKernel", "hann_window", "power_spectrum", "stft"]


def hann_window(length: int) -> np.ndarray:
    """DALI's default window: ``0.5 (1 - cos(2π (t + 0.5) / length))``."""
    t = np.arange(length, dtype=np.float64)
    return 0.5 * (1 - np.cos(2 * np.pi * (t + 0.5) / length))


def _magnitude(spectrum: np.ndarray, power: int) -> np.ndarray:
    squared = spectrum.real**2 + spectrum.imag**2
    return (squared if power == 2 else np.sqrt(squared)).astype(np.float32)


def _window_indices(n: int, length: int, step: int, centered: bool) -> np.ndarray:
    if centered:
        starts = np.arange(n // step + 1) * step - length // 2
    else:
        starts = np.arange(max((n - length) // step + 1, 0)) * step
    return starts[:, None] + np.arange(length)[None, :]


def stft(
    signal: np.ndarray,
    window: np.ndarray,
    step: int,
    nfft: int,
    centered: bool = True,
    reflect: bool = True,
    power: int = 2,
) -> np.ndarray:
    """The ``(windows, nfft // 2 + 1)`` power/magnitude spectrogram of a 1-D signal."""
    n = len(signal)
    index = _window_indices(n, len(window), step, centered)
    if n == 0:
        frames = np.zeros(index.shape)
    elif centered and reflect:
        period = max(2 * (n - 1), 1)  # a lone sample mirrors onto itself
        index = np.mod(index, period)
        frames = signal[np.where(index >= n, period - index, index)]
    else:
        inside = (index >= 0) & (index < n)
        frames = np.where(inside, signal[np.clip(index, 0, n - 1)], 0.0)
    spectrum = np.fft.rfft(frames * window, n=nfft, axis=1)
    return _magnitude(spectrum, power)


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
        self._window = hann_window(length) if window is None else np.asarray(window, np.float64)
        self._nfft = nfft

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The ``layout`` argument."""
        return (self.args["layout"],)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """The spectrogram of one signal."""
        (signal,) = inputs
        if signal.ndim > 2 or (signal.ndim == 2 and 1 not in signal.shape):
            raise ValueError(
                "spectrogram: expected one channel, (n,), (n, 1) or (1, n); got shape "
                f"{signal.shape}"
            )
        a = self.args
        frames = stft(
            signal.reshape(-1).astype(np.float64),
            self._window,
            a["window_step"],
            self._nfft,
            a["center_windows"],
            a["reflect_padding"],
            a["power"],
        )
        return np.ascontiguousarray(frames.T if a["layout"] == "ft" else frames)


def power_spectrum(data: np.ndarray, axis: int, nfft: int | None, power: int) -> np.ndarray:
    """The power spectrum (``power=2``) or magnitude of ``data`` along ``axis``."""
    spectrum = np.fft.rfft(data.astype(np.float64), n=nfft, axis=axis)
    return _magnitude(spectrum, power)


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
