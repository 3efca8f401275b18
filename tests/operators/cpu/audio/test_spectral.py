"""``spectrogram`` and ``power_spectrum`` against explicit DFT sums (float64)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.audio.spectral import FrameBuffer, _pad
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.audio.reference import dft_power, mirror
from tests.operators.cpu.audio.signals import noise, run_audio, use_audio


@pytest.fixture(autouse=True)
def _audio(empty_plugin_system: PluginSystem) -> Iterator[None]:
    use_audio(empty_plugin_system)
    yield


def hann(n: int) -> np.ndarray:
    return np.array([np.sin(np.pi * (t + 0.5) / n) ** 2 for t in range(n)])


def reference_spectrogram(
    x: np.ndarray, length: int, step: int, nfft: int, centered: bool, reflect: bool, power: int
) -> np.ndarray:
    """(bins, windows), window k centred on k * step (or starting there)."""
    n = len(x)
    count = n // step + 1 if centered else (n - length) // step + 1
    columns = []
    for k in range(count):
        start = k * step - (length // 2 if centered else 0)
        frame = []
        for i in range(start, start + length):
            if 0 <= i < n:
                frame.append(x[i])
            else:
                frame.append(x[mirror(i, n)] if reflect else 0.0)
        columns.append(dft_power(np.array(frame) * hann(length), nfft, power))
    return np.stack(columns, axis=1)


def spectrogram(x: np.ndarray, **args: object) -> tuple[np.ndarray, str]:
    (((out,), layout),) = run_audio("spectrogram", [x], **args)
    return out, layout


@pytest.mark.parametrize(
    ("length", "step", "nfft", "centered", "reflect", "power"),
    [(40, 16, 64, True, True, 2), (40, 16, 64, True, False, 2), (40, 16, 40, False, True, 1),
     (64, 30, 64, True, True, 1), (25, 7, 32, True, True, 2)],
)  # fmt: skip
def test_matches_the_dft_definition(
    length: int, step: int, nfft: int, centered: bool, reflect: bool, power: int
) -> None:
    x = noise(300, seed=length)
    out, layout = spectrogram(
        x, window_length=length, window_step=step, nfft=nfft, center_windows=centered,
        reflect_padding=reflect, power=power,
    )  # fmt: skip
    expected = reference_spectrogram(x.astype(np.float64), length, step, nfft, centered,
                                     reflect, power)  # fmt: skip
    assert layout == "ft" and out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * expected.max())


def test_defaults_time_major_layout_and_custom_window() -> None:
    x = noise(2000, seed=2)
    out, _ = spectrogram(x)
    assert out.shape == (257, 2000 // 256 + 1)
    tf, layout = spectrogram(x, layout="tf")
    assert layout == "tf"
    np.testing.assert_array_equal(tf, out.T)
    boxcar, _ = spectrogram(x[:64], window_length=16, window_step=16, nfft=16,
                            window_fn=[1.0] * 16, center_windows=False)  # fmt: skip
    np.testing.assert_allclose(boxcar[:, 1], dft_power(x[16:32].astype(np.float64), 16), rtol=1e-4)


def test_column_and_row_vectors_are_one_channel() -> None:
    x = noise(500, seed=3)
    flat, _ = spectrogram(x, window_length=32, window_step=8)
    for shape in ((500, 1), (1, 500)):
        np.testing.assert_array_equal(spectrogram(x.reshape(shape), window_length=32,
                                                  window_step=8)[0], flat)  # fmt: skip


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 60), st.integers(1, 9))
def test_short_signals_reflect_repeatedly(n: int, step: int) -> None:
    x = noise(n, seed=n)
    out, _ = spectrogram(x, window_length=16, window_step=step, nfft=16)
    expected = reference_spectrogram(x.astype(np.float64), 16, step, 16, True, n > 1, 2)
    if n == 1:  # nothing to mirror: the lone sample repeats
        expected = reference_spectrogram(np.full(16, x[0], np.float64), 16, 16, 16, False,
                                         False, 2).repeat(n // step + 1, axis=1)  # fmt: skip
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("args", "shape", "message"),
    [({"nfft": 32, "window_length": 40}, (100,), "at least window_length"),
     ({"window_fn": [1.0] * 3, "window_length": 4}, (100,), "window_fn"),
     ({}, (100, 2), "one channel")],
)  # fmt: skip
def test_errors(args: dict, shape: tuple[int, ...], message: str) -> None:
    with pytest.raises((ValueError, OperatorError), match=message):
        spectrogram(noise(shape[0], channels=shape[1] if len(shape) > 1 else None), **args)


def test_power_spectrum_along_an_axis() -> None:
    x = noise(6 * 50, seed=4).reshape(6, 50)
    (((out,), _),) = run_audio("power_spectrum", [x])
    assert out.shape == (6, 26) and out.dtype == np.float32
    np.testing.assert_allclose(out[2], dft_power(x[2].astype(np.float64), 50), rtol=1e-4)
    (((first,), _),) = run_audio("power_spectrum", [x], axis=0, nfft=9, power=1)
    assert first.shape == (5, 50)
    np.testing.assert_allclose(first[:, 7], dft_power(x[:, 7].astype(np.float64), 9, 1),
                               rtol=1e-4)  # fmt: skip
    (((cut,), _),) = run_audio("power_spectrum", [x], nfft=20)
    np.testing.assert_allclose(cut[0], dft_power(x[0, :20].astype(np.float64), 20), rtol=1e-4)


def test_check_operators() -> None:
    signals = [[noise(n, n) for n in (300, 200, 257)]]
    assert "threads" in check_operator(
        "spectrogram",
        OperatorExample(inputs=signals, args={"nfft": 64, "window_length": 48, "window_step": 10}),
    )
    assert "threads" in check_operator("power_spectrum", OperatorExample(inputs=signals))


@settings(max_examples=60, deadline=None)
@given(
    length=st.integers(0, 40),
    before=st.integers(0, 50),
    after=st.integers(0, 50),
    reflect=st.booleans(),
)
def test_window_padding_matches_numpy_pad(
    length: int, before: int, after: int, reflect: bool
) -> None:
    # The spectrogram pads with slices of its own; np.pad is the definition it must follow
    # (mirrored without the edge sample, or zeros; an empty signal is padded with zeros).
    signal = np.arange(1, length + 1, dtype=np.float32)
    mode = "reflect" if reflect and length else "constant"
    np.testing.assert_array_equal(
        _pad(signal, before, after, reflect), np.pad(signal, (before, after), mode=mode)
    )


def test_frame_buffer_is_reused_up_to_its_limit_and_keeps_padding_zero() -> None:
    buffer = FrameBuffer(8)
    first = buffer.take(3)
    first[:, :5] = 7.0  # a spectrogram writes only the window's columns
    again = buffer.take(2)
    assert np.shares_memory(first, again) and not again[:, 5:].any()
    huge = buffer.take(FrameBuffer.KEEP_BYTES // (8 * 4) + 1)
    assert not np.shares_memory(huge, buffer.rows) and not huge.any()
    assert len(buffer.rows) < len(huge)
