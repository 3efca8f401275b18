"""``noise.gaussian``: statistics, saturation, types and reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.random.noise import NOISE_TYPES, add_gaussian_noise
from tests.operators.cpu.image_samples import PerSample, real_images, run_op, use_transforms


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


def test_noise_statistics_on_float_data() -> None:
    data = np.zeros((200, 300), np.float32)
    out, layout = run_op(
        "noise.gaussian",
        [data, data + 5],
        "HW",
        mean=PerSample([1.0, -2.0]),
        stddev=PerSample([0.5, 3.0]),
    )
    assert layout == "HW"
    for got, base, mean, std in zip(out, (0, 5), (1.0, -2.0), (0.5, 3.0), strict=True):
        noise = got.astype(np.float64) - base
        n = noise.size
        assert abs(noise.mean() - mean) < 5 * std / np.sqrt(n)
        assert abs(noise.std() - std) < 5 * std / np.sqrt(2 * n)
        # roughly normal: ~68.3 % within one standard deviation
        assert abs(np.mean(np.abs(noise - mean) < std) - 0.6827) < 0.01
    assert not np.array_equal(out[0] - 1, out[1] + 2 - 5)  # samples draw independently


def test_integer_outputs_round_and_saturate() -> None:
    images = real_images("file_tree", 2)
    out, _ = run_op("noise.gaussian", images, stddev=40.0)
    for image, got in zip(images, out, strict=True):
        assert got.dtype == np.uint8 and got.shape == image.shape
        assert got.min() == 0 and got.max() == 255  # saturated, not wrapped
        diff = got.astype(np.float64) - image
        inner = (image > 120) & (image < 135)  # far from the limits
        assert abs(diff[inner].std() - 40) < 2
    (same,), _ = run_op("noise.gaussian", [images[0]], stddev=0.0)
    np.testing.assert_array_equal(same, images[0])
    negative = -images[0].astype(np.int16) - 1
    (shift,), _ = run_op("noise.gaussian", [negative], stddev=0.0, mean=-0.5)
    np.testing.assert_array_equal(shift, negative - 1)  # -x.5 rounds away from zero


def test_reproducible_for_any_thread_count() -> None:
    data = [np.full((16, 16, 3), 100, np.uint8) for _ in range(5)]
    one, _ = run_op("noise.gaussian", data, stddev=10.0, num_threads=1, seed=3)
    two, _ = run_op("noise.gaussian", data, stddev=10.0, num_threads=2, seed=3)
    other, _ = run_op("noise.gaussian", data, stddev=10.0, num_threads=2, seed=4)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(one[0], other[0])


@pytest.mark.parametrize("dtype", NOISE_TYPES)
def test_every_supported_type_keeps_its_type(dtype: type) -> None:
    data = np.full((8, 8), 50, dtype)
    got = add_gaussian_noise(data, np.random.default_rng(0), 0.0, 2.0)
    assert got.dtype == data.dtype and got.shape == data.shape
    assert 40 < got.astype(np.float64).mean() < 60


@pytest.mark.parametrize(
    ("sample", "kwargs", "message"),
    [
        (np.zeros((3, 3), np.float64), {}, "input type float64"),
        (np.zeros((3, 3), np.bool_), {}, "input type bool"),
        (np.zeros((3, 3), np.float32), {"stddev": -1.0}, "non-negative"),
    ],
)
def test_errors(sample: np.ndarray, kwargs: dict, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        run_op("noise.gaussian", [sample], "HW", **kwargs)


def test_noise_is_random_normal_added_to_the_input() -> None:
    data = [np.linspace(0, 200, 300, dtype=np.float32).reshape(10, 30) for _ in range(3)]
    noisy, _ = run_op("noise.gaussian", data, "HW", mean=2.0, stddev=7.0, seed=11)
    normal, _ = run_op("random.normal", data, "HW", mean=2.0, stddev=7.0, seed=11)
    for sample, got, drawn in zip(data, noisy, normal, strict=True):
        np.testing.assert_array_equal(got, sample + drawn)
