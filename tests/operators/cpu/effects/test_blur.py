"""``gaussian_blur`` against a direct (non-separable) convolution with mirrored borders."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, fn, pipeline_def, types
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.effects.blur import gaussian_blur, gaussian_window
from tests.operators.cpu.families import use_families
from tests.operators.cpu.image_samples import PerSample, run_op


def mirror(i: int, n: int) -> int:
    """Reflect-101 index: ... 2 1 | 0 1 2 ... n-1 | n-2 ..."""
    if n == 1:
        return 0
    period = 2 * n - 2
    i %= period
    return i if i < n else period - i


def reference(image: np.ndarray, sigma: float, window: int) -> np.ndarray:
    """2-D convolution of an HW float image, tap by tap."""
    taps = gaussian_window(sigma, window)
    r = len(taps) // 2
    h, w = image.shape
    out = np.zeros((h, w))
    for y in range(h):
        for x in range(w):
            total = 0.0
            for dy in range(-r, r + 1):
                for dx in range(-r, r + 1):
                    total += (
                        taps[dy + r] * taps[dx + r] * image[mirror(y + dy, h), mirror(x + dx, w)]
                    )
            out[y, x] = total
    return out


def test_window_follows_dalis_formulas() -> None:
    assert len(gaussian_window(1.0, 0)) == 2 * math.ceil(3.0) + 1
    assert len(gaussian_window(0.4, 0)) == 5
    taps = gaussian_window(0.0, 7)
    sigma = (3 - 1) * 0.3 + 0.8
    expected = np.exp(-(np.arange(-3, 4) ** 2) / (2 * sigma**2))
    np.testing.assert_allclose(taps, expected / expected.sum())
    assert taps.sum() == pytest.approx(1.0)
    for sigma, window, message in [
        (0, 0, "shouldn't be 0 at the same time"),
        (1, 4, "odd length, got: 4"),
        (-1, 3, "non-negative values, got -1"),
    ]:
        with pytest.raises(ValueError, match=message):
            gaussian_window(sigma, window)


@settings(max_examples=25)
@given(
    hnp.arrays(
        np.float32,
        st.tuples(st.integers(1, 7), st.integers(1, 7)),
        elements=st.floats(0, 255, width=32),
    ),
    st.sampled_from([(0.7, 0), (0.0, 3), (1.5, 5), (2.0, 0)]),
)
def test_separable_blur_equals_direct_convolution(image: np.ndarray, params: tuple) -> None:
    sigma, window = params
    got = gaussian_blur(image, "HW", [sigma], [window], np.dtype(np.float32))
    np.testing.assert_allclose(got, reference(image.astype(np.float64), sigma, window), atol=1e-3)


def test_blur_in_a_pipeline_channels_per_axis_and_dtype() -> None:
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (12, 9, 3), dtype=np.uint8) for _ in range(2)]
    out, layout = run_op("gaussian_blur", images, "HWC", sigma=1.2)
    assert layout == "HWC" and out[0].dtype == np.uint8
    for channel in range(3):
        expected = reference(images[0][:, :, channel].astype(np.float64), 1.2, 0)
        assert np.abs(out[0][:, :, channel].astype(np.float64) - expected).max() <= 0.5 + 1e-6
    # a blur along W only: every column kept apart
    out, _ = run_op("gaussian_blur", images, "HWC", window_size=[1, 5], dtype=types.FLOAT)
    assert out[0].dtype == np.float32
    np.testing.assert_allclose(
        out[0][:, 4, 0], images[0][:, 2:7, 0].astype(np.float64) @ gaussian_window(0, 5), rtol=1e-5
    )
    out, _ = run_op("gaussian_blur", images, "HWC", sigma=PerSample([0.5, 3.0]))
    assert out[0].std() > out[1].std()  # the second sample is blurred more


def test_data_without_a_layout_is_blurred_along_every_axis() -> None:
    """As in DALI, an empty layout makes every axis (up to 3) spatial: a 3-D sample is a volume,
    not an HWC image, and 4 axes without a layout are refused."""
    rng = np.random.default_rng(3)
    volume = rng.uniform(0, 255, (4, 5, 6)).astype(np.float32)
    (got,), _ = run_op("gaussian_blur", [volume], "", sigma=[0.7, 1.0, 1.5])
    expected = volume.astype(np.float64)
    for axis, sigma in enumerate([0.7, 1.0, 1.5]):
        taps = gaussian_window(sigma, 0)
        r = len(taps) // 2
        padded = np.pad(expected, [(r, r) if a == axis else (0, 0) for a in range(3)], "reflect")
        windows = np.lib.stride_tricks.sliding_window_view(padded, len(taps), axis=axis)
        expected = windows @ taps
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)
    with pytest.raises(OperatorError, match="empty layout cannot have more than 3 dimensions"):
        run_op("gaussian_blur", [np.zeros((2, 3, 4, 3), np.uint8)], "", sigma=1.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sigma": [1.0, 2.0, 3.0]}, "a single value or a list of 2 elements. 3 given"),
        ({"window_size": 4}, "odd length, got: 4"),
        ({"sigma": 0.0}, "shouldn't be 0 at the same time for sample: 0, axis: 0"),
        ({"sigma": [1.0, -2.0]}, "non-negative values, got -2 for sample: 0, axis: 1"),
        ({"window_size": [3, -5]}, "non-negative values, got -5 for sample: 0, axis : 1"),
        ({"sigma": 1.0, "dtype": types.INT16}, "'dtype' = INT16 is not supported"),
    ],
)
def test_blur_errors(kwargs: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError, TypeError), match=message):
        run_op("gaussian_blur", [np.zeros((4, 4, 3), np.uint8)], "HWC", **kwargs)


@pytest.mark.parametrize(
    ("layout", "shape", "message"),
    [
        ("HCW", (4, 3, 4), "Only channel-first or channel-last layouts are supported, got: HCW"),
        ("HFWC", (4, 2, 4, 3), "For sequences, layout should begin with 'F' or 'C'"),
        ("FCCHW", (2, 3, 3, 4, 4), "more the one occurrence of 'F' or 'C'"),
        ("FWXYZC", (2, 3, 3, 3, 3, 3), "Too many dimensions, found: 4 data axes"),
    ],
)
def test_layouts_dali_refuses(layout: str, shape: tuple, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        run_op("gaussian_blur", [np.zeros(shape, np.uint8)], layout, sigma=1.0)


def _blur_with_per_frame_sigma(
    data: list[np.ndarray], layout: str, sigmas: list[np.ndarray]
) -> list[np.ndarray]:
    @pipeline_def(batch_size=len(data), num_threads=1, device_id=None)
    def pipe():
        images = fn.external_source(source=lambda: data, batch=True, layout=layout)
        sigma = fn.per_frame(fn.external_source(source=lambda: sigmas, batch=True))
        return fn.gaussian_blur(images, sigma=sigma)

    (out,) = pipe().run()
    return [out.at(i) for i in range(len(data))]


def test_per_frame_sigma_blurs_each_frame_with_its_own(
    empty_plugin_system: PluginSystem,
) -> None:
    use_families(empty_plugin_system, "manipulation")
    rng = np.random.default_rng(5)
    sequences = [rng.integers(0, 256, (3, 10, 8, 2), dtype=np.uint8) for _ in range(2)]
    sigmas = [np.float32([0.5, 1.5, 3.0]), np.float32([2.0])]  # one value serves every frame
    out = _blur_with_per_frame_sigma(sequences, "FHWC", sigmas)
    for sequence, sigma, got in zip(sequences, sigmas, out, strict=True):
        for frame in range(3):
            value = sigma[frame if len(sigma) > 1 else 0]
            expected = gaussian_blur(sequence[frame], "HWC", [value], [0], np.uint8, 0)
            np.testing.assert_array_equal(got[frame], expected)


def test_per_frame_argument_needs_frames_in_the_input(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "manipulation")
    images = [np.zeros((3, 10, 8), np.uint8)]
    with pytest.raises(OperatorError, match="input 0 must contain frames too. Got layout `CHW`"):
        _blur_with_per_frame_sigma(images, "CHW", [np.float32([1.0, 2.0, 3.0])])
    with pytest.raises(OperatorError, match="contains 2 per-frame parameters, but there are 3"):
        _blur_with_per_frame_sigma([np.zeros((3, 10, 8, 1), np.uint8)], "FHWC", [np.ones(2)])
