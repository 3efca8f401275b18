"""``mel_filter_bank`` and ``mfcc`` against their documented definitions."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from feedline import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.audio.mel import dct_matrix, hz_to_mel, mel_filters, mel_to_hz
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.audio.signals import run_audio, use_audio


@pytest.fixture(autouse=True)
def _audio(empty_plugin_system: PluginSystem) -> Iterator[None]:
    use_audio(empty_plugin_system)
    yield


def spectrum(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random(shape).astype(np.float32)


def test_mel_scales_at_known_points() -> None:
    assert hz_to_mel(1000.0, "slaney") == pytest.approx(15.0)  # 1000 Hz / (200/3 Hz per mel)
    assert hz_to_mel(6400.0, "slaney") == pytest.approx(15.0 + 27.0)  # 27 mels per factor 6.4
    assert hz_to_mel(700.0, "htk") == pytest.approx(2595 * np.log10(2))
    freqs = np.array([0.0, 300.0, 999.0, 1000.0, 4000.0, 11025.0])
    for formula in ("slaney", "htk"):
        np.testing.assert_allclose(mel_to_hz(hz_to_mel(freqs, formula), formula), freqs,
                                   atol=1e-9)  # fmt: skip


def triangle(f: np.ndarray, left: float, center: float, right: float) -> np.ndarray:
    return np.clip(np.minimum((f - left) / (center - left), (right - f) / (right - center)), 0, 1)


@pytest.mark.parametrize("formula", ["slaney", "htk"])
def test_filters_are_triangles_in_hz_between_mel_spaced_corners(formula: str) -> None:
    rate, nfreq, count = 16000.0, 257, 12
    bank = mel_filters(nfreq, count, rate, 100.0, 7000.0, False, formula)
    mels = np.linspace(hz_to_mel(100.0, formula), hz_to_mel(7000.0, formula), count + 2)
    corners = mel_to_hz(mels, formula)
    freqs = np.arange(nfreq) * rate / 512
    for m in range(count):
        np.testing.assert_allclose(bank[m], triangle(freqs, *corners[m : m + 3]), atol=1e-12)
    normalized = mel_filters(nfreq, count, rate, 100.0, 7000.0, True, formula)
    widths = corners[2:] - corners[:-2]
    np.testing.assert_allclose(normalized, bank * (2 / widths)[:, None])


def test_operator_applies_the_bank_along_f() -> None:
    ft = spectrum(129, 11)
    (((out,), layout),) = run_audio("mel_filter_bank", [ft], nfilter=20, sample_rate=8000.0)
    bank = mel_filters(129, 20, 8000.0, 0.0, 4000.0, True, "slaney")
    assert out.shape == (20, 11) and out.dtype == np.float32 and layout == ""
    np.testing.assert_allclose(out, bank @ ft.astype(np.float64), rtol=1e-5)
    ((tf,), layout), = run_audio("mel_filter_bank", [ft.T.copy()], in_layout="tf", nfilter=20,
                                 sample_rate=8000.0)  # fmt: skip
    assert layout == "tf"
    np.testing.assert_allclose(tf, out.T, rtol=1e-6)
    batch = spectrum(3, 129, 5)
    (((many,), _),) = run_audio("mel_filter_bank", [batch], nfilter=20, sample_rate=8000.0)
    np.testing.assert_allclose(many[1], bank @ batch[1].astype(np.float64), rtol=1e-5)


def test_mel_errors() -> None:
    with pytest.raises((ValueError, OperatorError), match="freq_high"):
        run_audio("mel_filter_bank", [spectrum(65, 3)], freq_low=5000.0, freq_high=4000.0,
                  sample_rate=16000.0)  # fmt: skip
    with pytest.raises((ValueError, OperatorError), match="no 'f' axis"):
        run_audio("mel_filter_bank", [spectrum(65, 3)], in_layout="xy")


def direct_dct(x: np.ndarray, kind: int, count: int) -> np.ndarray:
    n = len(x)
    out = np.zeros(count)
    for k in range(count):
        for i in range(n):
            if kind == 1:
                w = 0.5 if i in (0, n - 1) else 1.0
                out[k] += w * x[i] * np.cos(np.pi / (n - 1) * i * k)
            elif kind == 2:
                out[k] += x[i] * np.cos(np.pi / n * (i + 0.5) * k)
            elif kind == 3:
                w = 0.5 if i == 0 else 1.0
                out[k] += w * x[i] * np.cos(np.pi / n * i * (k + 0.5))
            else:
                out[k] += x[i] * np.cos(np.pi / n * (i + 0.5) * (k + 0.5))
    return out


@pytest.mark.parametrize("kind", [1, 2, 3, 4])
def test_mfcc_is_the_textbook_dct(kind: int) -> None:
    mel = spectrum(16, 6, seed=kind) - 0.5
    (((out,), _),) = run_audio("mfcc", [mel], dct_type=kind, n_mfcc=10)
    assert out.shape == (10, 6) and out.dtype == np.float32
    expected = np.stack([direct_dct(mel[:, t].astype(np.float64), kind, 10) for t in range(6)], 1)
    np.testing.assert_allclose(out, expected, atol=1e-5)


@pytest.mark.parametrize("kind", [2, 3, 4])
def test_normalized_bases_are_orthonormal(kind: int) -> None:
    basis = dct_matrix(12, 12, kind, True)
    np.testing.assert_allclose(basis @ basis.T, np.eye(12), atol=1e-12)


def test_mfcc_axis_and_lifter() -> None:
    mel = spectrum(5, 30, seed=9)
    (((along1,), _),) = run_audio("mfcc", [mel], axis=1, n_mfcc=8)
    (((lifted,), _),) = run_audio("mfcc", [mel], axis=1, n_mfcc=8, lifter=6.0)
    lift = 1 + 3.0 * np.sin(np.pi * np.arange(1, 9) / 6.0)
    np.testing.assert_allclose(lifted, along1 * lift, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(along1[2], direct_dct(mel[2].astype(np.float64), 2, 8), atol=1e-5)


@pytest.mark.parametrize(
    ("args", "message"),
    [({"dct_type": 1, "normalize": True}, "not supported for DCT type I"),
     ({"axis": 2}, r"Axis 2 is out of bounds \[0,2\)"), ({"axis": -1}, "cannot be negative"),
     ({"dct_type": 5}, "Unsupported DCT type: 5")],
)  # fmt: skip
def test_mfcc_errors(args: dict, message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        run_audio("mfcc", [spectrum(8, 3)], **args)


def test_check_operators() -> None:
    spectra = [[spectrum(65, t, seed=t) for t in (4, 9, 1)]]
    args = {"nfilter": 16, "sample_rate": 16000.0}
    assert "threads" in check_operator("mel_filter_bank", OperatorExample(spectra, args=args))
    assert "threads" in check_operator("mfcc", OperatorExample(spectra, args={"n_mfcc": 13}))
