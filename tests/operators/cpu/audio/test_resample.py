"""``audio_resample``: DALI's windowed-sinc definition, lengths, argument rules, type conversion."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, types
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.audio.resampling import _polyphase, lobes_for_quality, sinc_window
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.audio.reference import resample_reference
from tests.operators.cpu.audio.signals import noise, run_audio, use_audio


@pytest.fixture(autouse=True)
def _audio(empty_plugin_system: PluginSystem) -> Iterator[None]:
    use_audio(empty_plugin_system)
    yield


def resampled(signal: np.ndarray, **args: object) -> np.ndarray:
    (((out,), _),) = run_audio("audio_resample", [signal], **args)
    return out


@pytest.mark.parametrize("scale", [0.37, 0.5, 1.7, 160 / 441])
def test_matches_the_float64_windowed_sinc(scale: float) -> None:
    signal = noise(700, seed=3)
    out = resampled(signal, scale=scale)
    ratio = float(np.float32(scale))
    assert out.dtype == np.float32 and out.shape == (int(np.ceil(700 * ratio)),)
    np.testing.assert_allclose(out, resample_reference(signal, ratio, len(out)), atol=2e-3)


def test_quality_sets_the_number_of_lobes() -> None:
    assert [lobes_for_quality(q) for q in (0, 50, 100)] == [3, 16, 64]
    signal = noise(300, seed=4)
    for quality in (0, 100):
        out = resampled(signal, scale=0.8, quality=quality)
        lobes = lobes_for_quality(quality)
        reference = resample_reference(signal, float(np.float32(0.8)), len(out), lobes)
        np.testing.assert_allclose(out, reference, atol=2e-3)


def test_a_tone_below_both_nyquist_rates_survives() -> None:
    t = np.arange(4000) / 8000.0
    tone = np.sin(2 * np.pi * 440 * t).astype(np.float32)
    out = resampled(tone, in_rate=8000.0, out_rate=11025.0, quality=100)
    expected = np.sin(2 * np.pi * 440 * np.arange(len(out)) / 11025.0)
    interior = slice(200, len(out) - 200)
    np.testing.assert_allclose(out[interior], expected[interior], atol=2e-3)


def test_ways_of_giving_the_ratio_agree() -> None:
    signal = noise(441, seed=5)
    by_rates = resampled(signal, in_rate=44100.0, out_rate=16000.0)
    assert by_rates.shape == (160,)
    by_length = resampled(signal, out_length=160)
    np.testing.assert_allclose(by_rates, by_length, atol=1e-5)
    assert resampled(signal, out_length=17).shape == (17,)


def test_channels_are_resampled_independently() -> None:
    stereo = noise(500, seed=6, channels=2)
    out = resampled(stereo, scale=0.5)
    assert out.shape == (250, 2)
    for c in range(2):
        np.testing.assert_allclose(out[:, c], resampled(stereo[:, c].copy(), scale=0.5), atol=1e-6)


def test_scale_is_a_float32_argument_as_in_dali() -> None:
    # float32(0.6) is slightly above 0.6, so 500 samples make ceil(300.00001) = 301
    assert resampled(noise(500), scale=0.6).shape == (301,)


def test_integer_signals_are_normalized_and_converted() -> None:
    signal = (noise(400, seed=7) * 20000).astype(np.int16)
    as_float = resampled(signal, scale=0.5, dtype=types.FLOAT)
    np.testing.assert_allclose(as_float, resample_reference(signal / 32767.0, 0.5, 200), atol=2e-3)
    as_int = resampled(signal, scale=0.5)
    assert as_int.dtype == np.int16
    assert np.abs(as_int.astype(np.int64) - np.round(as_float * 32767)).max() <= 1


def test_loud_float_saturates_in_integer_output() -> None:
    out = resampled(np.full(64, 3.0, np.float32), scale=1.0, dtype=types.INT16)
    assert out.dtype == np.int16 and (out == 32767).all()


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 300), st.integers(0, 2**31))
def test_scale_one_is_the_identity(n: int, seed: int) -> None:
    signal = noise(n, seed=seed)
    np.testing.assert_allclose(resampled(signal, scale=1.0), signal, atol=1e-6)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "exactly one of"),
        ({"scale": 2.0, "out_length": 5}, "exactly one of"),
        ({"in_rate": 2.0}, "together"),
        ({"scale": -1.0}, "positive"),
        ({"scale": 1.0, "quality": 101.0}, "quality"),
    ],
)
def test_bad_ratio_arguments(args: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        resampled(noise(10), **args)


def test_check_operator_with_per_sample_rates() -> None:
    example = OperatorExample(
        inputs=[[noise(300, 1, channels=2), noise(250, 2, channels=2), noise(90, 3, channels=2)]],
        arg_inputs={
            "in_rate": [np.float32(r) for r in (48000, 44100, 22050)],
            "out_rate": [np.float32(16000)] * 3,
        },
    )
    assert "threads" in check_operator("audio_resample", example)
    assert "docs" in check_operator("experimental.audio_resample", example)


@settings(max_examples=25, deadline=None)
@given(
    p=st.integers(1, 60),
    q=st.integers(1, 60),
    length=st.integers(1, 400),
    channels=st.integers(1, 3),
    lobes=st.sampled_from([3, 16]),
    seed=st.integers(0, 99),
)
def test_upfirdn_and_gathering_paths_agree(
    p: int, q: int, length: int, channels: int, lobes: int, seed: int
) -> None:
    # The exact-ratio path sums with scipy.signal.upfirdn when SciPy is there, else gathers the
    # taps itself: both must give the same outputs for any ratio, length and channel count.
    frames = np.random.default_rng(seed).uniform(-1, 1, (length, channels)).astype(np.float32)
    n_out = -(-length * q // p)
    with_scipy = np.zeros((n_out, channels), np.float32)
    _polyphase(with_scipy, frames, sinc_window(lobes), p, q)
    without = np.zeros_like(with_scipy)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "scipy.signal", None)
        _polyphase(without, frames, sinc_window(lobes), p, q)
    np.testing.assert_allclose(with_scipy, without, atol=2e-6)
