"""The compiled speech kernels (``feedline_audio.c``): the spectrogram against a float64 NumPy
spectrogram and the SciPy path, pre-emphasis and the mel filter bank's product against the
NumPy/SciPy paths (bit for bit), and the conditions under which the operators take them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.native.library import native_enabled
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.audio import bindings, levels, mel, spectral
from feedline.operators.cpu.audio.spectral import hann_window, stft, stft_scipy, windows
from feedline.operators.native.libraries import CPU_LIBRARY
from tests.operators.cpu.audio.signals import noise, run_audio, use_audio

compiled = pytest.mark.skipif(
    CPU_LIBRARY.try_load() is None,
    reason="the compiled CPU library is unavailable (no C compiler, or FEEDLINE_NATIVE=0)",
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


@pytest.mark.parametrize("threads", [1, 2])
def test_batches_agree_across_threads(threads: int) -> None:
    signals = [noise(n, seed=n) for n in (0, 1, 399, 401, 5000, 16000)]
    args = {"layout": "tf", "power": 1, "nfft": 1024, "window_length": 400, "window_step": 100}
    ((outs, layout),) = run_audio("spectrogram", signals, num_threads=threads, **args)
    assert layout == "tf"
    window = hann_window(400)
    for signal, out in zip(signals, outs, strict=True):
        _close(out, float64_spectrogram(signal, window, 100, 1024, True, True, 1))


def _numpy_preemphasis(
    monkeypatch: pytest.MonkeyPatch, x: np.ndarray, coeff: float, border: str
) -> np.ndarray:
    with monkeypatch.context() as patch:
        patch.setattr(levels, "preemphasis_f32", lambda *args: None)
        return levels.preemphasis(x, coeff, border)


@compiled
@settings(max_examples=60, deadline=None)
@given(
    n=st.one_of(st.sampled_from([0, 1, 2]), st.integers(3, 5000)),
    coeff=st.floats(-2, 2, width=32),
    border=st.sampled_from(["zero", "clamp", "reflect"]),
)
def test_compiled_preemphasis_is_numpys_bit_for_bit(n: int, coeff: float, border: str) -> None:
    x = noise(n, seed=n)
    with pytest.MonkeyPatch.context() as patch:
        expected = _numpy_preemphasis(patch, x, coeff, border)
    out = levels.preemphasis(x, coeff, border)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, expected)


@compiled
@settings(max_examples=40, deadline=None)
@given(
    nfft=st.sampled_from([64, 256, 512, 1024]),
    nfilter=st.integers(1, 80),
    frames=st.integers(0, 300),
    normalize=st.booleans(),
    formula=st.sampled_from(["slaney", "htk"]),
)
def test_compiled_filter_bank_is_scipys_sparse_product(
    nfft: int, nfilter: int, frames: int, normalize: bool, formula: str
) -> None:
    scipy_sparse = pytest.importorskip("scipy.sparse")
    bank = mel.mel_filters(nfft // 2 + 1, nfilter, 16000.0, 0.0, 8000.0, normalize, formula)
    bins = nfft // 2 + 1
    spectrum = np.abs(noise(bins * frames, seed=frames)).reshape(bins, frames) ** 2
    out = bindings.sparse_rows_f32(bindings.SparseRows(bank), spectrum)
    expected = np.asarray(scipy_sparse.csr_matrix(bank.astype(np.float32)) @ spectrum)
    assert out is not None and out.dtype == np.float32
    np.testing.assert_array_equal(out, expected)
    assert bindings.sparse_rows_f32(bindings.SparseRows(bank), spectrum[1:]) is None


def correctly_rounded_decibels(
    data: np.ndarray, multiplier: float, reference: float | None, floor: float
) -> np.ndarray:
    """``to_decibels``' float32 steps, with the log10 taken in float64 and rounded once."""
    values = data.astype(np.float32)
    if reference is None:
        reference = float(values.max()) if values.size else 0.0
    if reference > 0:
        with np.errstate(invalid="ignore", over="ignore"):
            quotients = values / np.float32(reference)
    else:
        quotients = np.zeros_like(values)
    kept = np.where(np.isnan(quotients), quotients, np.maximum(quotients, np.float32(floor)))
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log10(kept.astype(np.float64)).astype(np.float32)
    return logs * np.float32(multiplier)


def same_or_both_nan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a == b) | (np.isnan(a) & np.isnan(b))


@compiled
@settings(max_examples=60, deadline=None)
@given(
    n=st.one_of(st.sampled_from([0, 1, 7, 8, 9]), st.integers(10, 20000)),
    multiplier=st.sampled_from([10.0, 20.0, -10.0, 1.0]),
    reference=st.one_of(st.none(), st.floats(1e-6, 1e6), st.sampled_from([-1.0, 0.0])),
    cutoff_db=st.sampled_from([-80.0, -200.0, -2000.0, 0.0]),
    scale=st.floats(1e-30, 1e30),
)
def test_compiled_decibels_round_the_log_once(
    n: int, multiplier: float, reference: float | None, cutoff_db: float, scale: float
) -> None:
    data = (np.abs(noise(n, seed=n)) * np.float32(scale)).astype(np.float32)
    with np.errstate(over="ignore"):
        floor = float(np.float32(10.0 ** (cutoff_db / multiplier)))
    out = bindings.to_decibels_f32(data, multiplier, reference, floor)
    expected = correctly_rounded_decibels(data, multiplier, reference, floor)
    assert out is not None and out.dtype == np.float32 and out.shape == data.shape
    # Exact but for quotients within 1e-12 of a float32 rounding boundary of their log10.
    mismatched = ~same_or_both_nan(out, expected)
    assert mismatched.sum() <= max(1, n // 100_000)
    np.testing.assert_allclose(out[mismatched], expected[mismatched], rtol=2e-7)


@compiled
def test_compiled_decibels_take_every_float() -> None:
    """One float in 97 of all positive float32 values, and the special ones."""
    every = np.arange(0, 0x7F800001, 97, dtype=np.uint32).view(np.float32)
    special = np.array([0.0, -0.0, 1e-45, 1e-40, np.inf, -np.inf, np.nan, -1.0], np.float32)
    data = np.concatenate([every, special])
    out = bindings.to_decibels_f32(data, 1.0, 1.0, 0.0)
    expected = correctly_rounded_decibels(data, 1.0, 1.0, 0.0)
    assert out is not None
    assert (~same_or_both_nan(out, expected)).sum() <= 2
    np.testing.assert_array_equal(out[-8:], expected[-8:])


@compiled
@pytest.mark.parametrize("poison", [np.nan, np.inf])
def test_compiled_decibels_reference_follows_numpys_maximum(poison: float) -> None:
    data = np.abs(noise(1000, seed=5))
    data[417] = poison
    out = bindings.to_decibels_f32(data, 10.0, None, 1e-8)
    expected = correctly_rounded_decibels(data, 10.0, None, 1e-8)
    assert out is not None
    np.testing.assert_array_equal(same_or_both_nan(out, expected), True)


@compiled
def test_the_front_end_operators_run_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"preemphasis": 0, "mel": 0, "decibels": 0}

    def counting(name: str, function: Callable[..., np.ndarray | None]) -> Callable:
        def counted(*args: object) -> np.ndarray | None:
            result = function(*args)
            calls[name] += result is not None
            return result

        return counted

    monkeypatch.setattr(levels, "preemphasis_f32", counting("preemphasis", levels.preemphasis_f32))
    monkeypatch.setattr(mel, "sparse_rows_f32", counting("mel", mel.sparse_rows_f32))
    monkeypatch.setattr(levels, "to_decibels_f32", counting("decibels", levels.to_decibels_f32))
    x = noise(3000, seed=4)
    (((emphasized,), _),) = run_audio("preemphasis_filter", [x])
    spectrum = float64_spectrogram(x, hann_window(400), 160, 512, True, True, 2).T
    (((bands,), _),) = run_audio("mel_filter_bank", [spectrum.astype(np.float32)], in_layout="ft")
    (((decibels,), _),) = run_audio("to_decibels", [spectrum.astype(np.float32)], in_layout="ft")
    assert calls["preemphasis"] >= 1 and calls["mel"] >= 1 and calls["decibels"] >= 1
    np.testing.assert_allclose(
        decibels, correctly_rounded_decibels(spectrum.astype(np.float32), 10.0, None, 1e-20)
    )
    np.testing.assert_allclose(emphasized[1:], x[1:] - 0.97 * x[:-1], rtol=1e-6, atol=1e-7)
    assert bands.shape == (128, spectrum.shape[1])
