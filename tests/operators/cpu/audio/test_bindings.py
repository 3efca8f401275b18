"""The compiled spectrogram (``feedline_audio.c``) against a float64 NumPy spectrogram and the
SciPy path, and the conditions under which the operator takes it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.native.library import native_enabled
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.audio import bindings, spectral
from feedline.operators.cpu.audio.spectral import hann_window, stft, stft_scipy, windows
from feedline.operators.native.libraries import CPU_LIBRARY
from tests.operators.cpu.audio.signals import noise, run_audio, use_audio

compiled = pytest.mark.skipif(
    CPU_LIBRARY.try_load() is None, reason="the compiled CPU library cannot be built here"
)


@pytest.fixture(autouse=True)
def _audio(empty_plugin_system: PluginSystem) -> Iterator[None]:
    use_audio(empty_plugin_system)
    yield


def float64_spectrogram(
    signal: np.ndarray, window: np.ndarray, step: int, nfft: int, centered: bool, reflect: bool,
    power: int,
) -> np.ndarray:  # fmt: skip
    """(windows, bins) in float64: np.pad's padding, windows cut one by one, NumPy's FFT."""
    x = signal.astype(np.float64)
    length = len(window)
    count = len(x) // step + 1 if centered else max((len(x) - length) // step + 1, 0)
    if centered:
        before = length // 2
        after = max((count - 1) * step - before + length - len(x), 0)
        mode = "reflect" if reflect and len(x) else "constant"
        x = np.pad(x, (before, after), mode=mode)
    frames = [x[k * step : k * step + length] * window for k in range(count)]
    spectrum = np.abs(np.fft.rfft(np.reshape(frames, (count, length)), n=nfft, axis=1))
    return spectrum**power


def _close(actual: np.ndarray, expected: np.ndarray) -> None:
    """Within float32 FFT rounding: both paths stay within about 5e-7 of the largest value."""
    assert actual.shape == expected.shape and actual.dtype == np.float32
    if expected.size:
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=2e-6 * expected.max())


signal_lengths = st.one_of(st.sampled_from([0, 1, 2, 3]), st.integers(4, 3000))


@compiled
@settings(max_examples=120, deadline=None)
@given(
    n=signal_lengths,
    log_nfft=st.integers(1, 12),
    data=st.data(),
    centered=st.booleans(),
    reflect=st.booleans(),
    power=st.sampled_from([1, 2]),
    frequency_major=st.booleans(),
)
def test_compiled_matches_float64_numpy(
    n: int, log_nfft: int, data: st.DataObject, centered: bool, reflect: bool, power: int,
    frequency_major: bool,
) -> None:  # fmt: skip
    nfft = 2**log_nfft
    length = data.draw(st.integers(1, nfft), label="window_length")
    step = data.draw(st.integers(1, 2 * length + 3), label="step")
    x = noise(n, seed=n + nfft)
    window = hann_window(length).astype(np.float32)
    count = windows(n, length, step, centered)
    out = bindings.spectrogram_f32(x, window, step, nfft, count, centered, reflect, power,
                                   frequency_major)  # fmt: skip
    assert out is not None
    expected = float64_spectrogram(x, window, step, nfft, centered, reflect, power)
    _close(out.T if frequency_major else out, expected)
    scipy_path = stft_scipy(x, window, step, nfft, centered, reflect, power, frequency_major)
    _close(out, scipy_path)


@settings(max_examples=30, deadline=None)
@given(
    n=signal_lengths,
    nfft=st.integers(3, 600).filter(lambda v: v & (v - 1) != 0),
    data=st.data(),
    centered=st.booleans(),
    frequency_major=st.booleans(),
)
def test_other_sizes_take_the_scipy_path(
    n: int, nfft: int, data: st.DataObject, centered: bool, frequency_major: bool
) -> None:
    length = data.draw(st.integers(1, nfft), label="window_length")
    step = data.draw(st.integers(1, length + 3), label="step")
    x = noise(n, seed=nfft)
    window = hann_window(length).astype(np.float32)
    count = windows(n, length, step, centered)
    assert bindings.spectrogram_f32(x, window, step, nfft, count, centered, True, 2,
                                    frequency_major) is None  # fmt: skip
    out = stft(x, window, step, nfft, centered, True, 2, frequency_major)
    expected = float64_spectrogram(x, window, step, nfft, centered, True, 2)
    _close(out.T if frequency_major else out, expected)


@compiled
def test_the_operator_runs_the_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    results: list[np.ndarray | None] = []

    def counted(*args: object) -> np.ndarray | None:
        results.append(bindings.spectrogram_f32(*args))  # type: ignore[arg-type]
        return results[-1]

    monkeypatch.setattr(spectral, "spectrogram_f32", counted)
    x = noise(4000, seed=9)
    (((out, _short), _),) = run_audio("spectrogram", [x, x[:700]], nfft=512, window_length=400,
                               window_step=160)  # fmt: skip
    assert len(results) >= 2 and all(result is not None for result in results)
    window = hann_window(400)
    _close(out, float64_spectrogram(x, window, 160, 512, True, True, 2).T)


def test_disabled_library_takes_the_scipy_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEEDLINE_NATIVE", "0")
    native_enabled.cache_clear()
    try:
        x = noise(1000, seed=3)
        window = hann_window(400).astype(np.float32)
        assert bindings.spectrogram_f32(x, window, 160, 512, 7, True, True, 2, True) is None
        out = stft(x, window, 160, 512, frequency_major=True)
    finally:
        monkeypatch.undo()
        native_enabled.cache_clear()
    _close(out.T, float64_spectrogram(x, window, 160, 512, True, True, 2))


@compiled
@pytest.mark.parametrize("threads", [1, 2])
def test_batches_agree_across_threads(threads: int) -> None:
    signals = [noise(n, seed=n) for n in (0, 1, 399, 401, 5000, 16000)]
    args = {"layout": "tf", "power": 1, "nfft": 1024, "window_length": 400, "window_step": 100}
    ((outs, layout),) = run_audio("spectrogram", signals, num_threads=threads, **args)
    assert layout == "tf"
    window = hann_window(400)
    for signal, out in zip(signals, outs, strict=True):
        _close(out, float64_spectrogram(signal, window, 100, 1024, True, True, 1))
