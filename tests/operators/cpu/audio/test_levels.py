"""``to_decibels``, ``preemphasis_filter`` and ``nonsilent_region``."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, types
from feedline.core.plugins import PluginSystem
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.audio.signals import noise, run_audio, use_audio


@pytest.fixture(autouse=True)
def _audio(empty_plugin_system: PluginSystem) -> Iterator[None]:
    use_audio(empty_plugin_system)
    yield


def one(name: str, x: np.ndarray, **args: object) -> list[np.ndarray]:
    return [samples[0] for samples, _ in run_audio(name, [x], **args)]


def test_decibels_relative_to_the_maximum_with_a_floor() -> None:
    power = np.array([[1.0, 0.5], [1e-3, 0.0]], np.float32)
    (out,) = one("to_decibels", power, cutoff_db=-20.0)
    np.testing.assert_allclose(out, [[0.0, 10 * np.log10(0.5)], [-20.0, -20.0]], atol=1e-5)
    (amplitude,) = one("to_decibels", power, multiplier=20.0, reference=0.5)
    np.testing.assert_allclose(amplitude[0], [20 * np.log10(2), 0.0], atol=1e-5)
    assert amplitude[1, 1] == pytest.approx(-200.0)
    (silent,) = one("to_decibels", np.zeros(4, np.float32))
    np.testing.assert_allclose(silent, -200.0)
    with pytest.raises(RuntimeError, match="can't be zero"):
        one("to_decibels", power, reference=0.0)


@pytest.mark.parametrize(("border", "before"), [("zero", None), ("clamp", 0), ("reflect", 1)])
def test_preemphasis_borders(border: str, before: int | None) -> None:
    x = noise(50, seed=1)
    (out,) = one("preemphasis_filter", x, border=border, preemph_coeff=0.8)
    previous = np.concatenate([[0.0 if before is None else x[before]], x[:-1]])
    np.testing.assert_allclose(out, x - 0.8 * previous, atol=1e-6)


def test_preemphasis_types_and_per_sample_coefficients() -> None:
    x = (noise(40, seed=2) * 1000).astype(np.int16)
    (as_float,) = one("preemphasis_filter", x)
    assert as_float.dtype == np.float32
    expected = x.astype(np.float64) - 0.97 * np.concatenate([[x[0]], x[:-1]])
    np.testing.assert_allclose(as_float, expected, rtol=1e-6)
    (as_int,) = one("preemphasis_filter", x, dtype=types.INT16)
    assert as_int.dtype == np.int16
    np.testing.assert_array_equal(as_int, np.trunc(expected + np.copysign(0.5, expected)))
    signals = [noise(30, seed=s) for s in (3, 4)]
    coefficients = {"preemph_coeff": [np.float32(0.0), np.float32(0.5)]}
    ((outs, _),) = run_audio("preemphasis_filter", signals, arg_inputs=coefficients)
    np.testing.assert_array_equal(outs[0], signals[0])
    np.testing.assert_allclose(outs[1][1:], signals[1][1:] - 0.5 * signals[1][:-1], atol=1e-6)


def brute_force_region(x: np.ndarray, cutoff_db: float, window: int, ref: float) -> tuple[int, int]:
    power = [sum(float(v) ** 2 for v in x[max(i - window + 1, 0) : i + 1]) / window
             for i in range(len(x))]  # fmt: skip
    threshold = (ref or max(power)) * 10 ** (cutoff_db / 10)
    loud = [i for i, p in enumerate(power) if p >= threshold]
    if not loud:
        return 0, 0
    begin = max(loud[0] - window + 1, 0)
    return begin, loud[-1] + 1 - begin


def burst(n: int, start: int, stop: int, seed: int) -> np.ndarray:
    x = noise(n, seed=seed, scale=1e-3)
    x[start:stop] += np.sin(np.arange(stop - start) * 0.3).astype(np.float32)
    return x


def test_nonsilent_region_of_a_burst() -> None:
    x = burst(3000, 1000, 2000, seed=5)
    begin, length = one("nonsilent_region", x, window_length=64, cutoff_db=-30.0)
    assert begin.dtype == np.int32 and begin.shape == () and length.shape == ()
    assert 1000 - 64 <= begin <= 1000 and 1000 <= begin + length <= 2000 + 64
    assert (int(begin), int(length)) == brute_force_region(x, -30.0, 64, 0.0)


@settings(max_examples=15, deadline=None)
@given(st.integers(50, 400), st.integers(0, 2**31), st.sampled_from([8, 16, 32]),
       st.sampled_from([-10.0, -40.0]), st.sampled_from([0.0, 0.05]))  # fmt: skip
def test_nonsilent_region_matches_brute_force(
    n: int, seed: int, window: int, cutoff: float, reference: float
) -> None:
    rng = np.random.default_rng(seed)
    start = int(rng.integers(0, n - 10))
    x = burst(n, start, int(rng.integers(start + 1, n)), seed)
    found = one("nonsilent_region", x, window_length=window, cutoff_db=cutoff,
                reference_power=reference, reset_interval=-1)  # fmt: skip
    assert tuple(int(v) for v in found) == brute_force_region(x, cutoff, window, reference)


def test_nonsilent_region_errors() -> None:
    with pytest.raises((ValueError, OperatorError), match="multiple of window_length"):
        one("nonsilent_region", noise(100), window_length=100)
    with pytest.raises((ValueError, OperatorError), match="1-D"):
        one("nonsilent_region", noise(100, channels=2))


def test_check_operators() -> None:
    signals = [[noise(n, n) for n in (300, 200, 257)]]
    for name in ("to_decibels", "preemphasis_filter"):
        assert "threads" in check_operator(name, OperatorExample(signals))
    example = OperatorExample(signals, args={"window_length": 32, "reset_interval": 256})
    assert "threads" in check_operator("nonsilent_region", example)
