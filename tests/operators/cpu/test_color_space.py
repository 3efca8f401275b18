"""``color_space_conversion`` against BT.601 formulas written here and Pillow's luma."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from feedline import OperatorError, types
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.image_samples import generated_image, real_images, run_op, use_transforms


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


def rgb_to_ycbcr(rgb: np.ndarray) -> np.ndarray:
    """ITU-R BT.601 studio swing from the Kr = 0.299, Kb = 0.114 definition (float64)."""
    r, g, b = (rgb[..., i].astype(np.float64) / 255 for i in range(3))
    luma = 0.299 * r + 0.587 * g + 0.114 * b
    cb = (b - luma) / (2 * (1 - 0.114))
    cr = (r - luma) / (2 * (1 - 0.299))
    return np.stack([16 + 219 * luma, 128 + 224 * cb, 128 + 224 * cr], axis=-1)


def ycbcr_to_rgb(ycc: np.ndarray) -> np.ndarray:
    luma = (ycc[..., 0].astype(np.float64) - 16) / 219
    cb = (ycc[..., 1].astype(np.float64) - 128) / 224
    cr = (ycc[..., 2].astype(np.float64) - 128) / 224
    r = luma + 2 * (1 - 0.299) * cr
    b = luma + 2 * (1 - 0.114) * cb
    g = (luma - 0.299 * r - 0.114 * b) / 0.587
    return np.stack([r, g, b], axis=-1) * 255


def rounded(values: np.ndarray) -> np.ndarray:
    return np.clip(np.floor(values + 0.5), 0, 255)


def test_real_images_to_gray_and_ycbcr() -> None:
    images = real_images("file_tree", 2)
    out, layout = run_op(
        "color_space_conversion", images, image_type=types.RGB, output_type=types.GRAY
    )
    assert layout == "HWC"
    for image, got in zip(images, out, strict=True):
        assert got.shape == (*image.shape[:2], 1) and got.dtype == np.uint8
        pillow = np.asarray(Image.fromarray(image).convert("L"))
        assert np.abs(got[..., 0].astype(int) - pillow).max() <= 1
        luma = image.astype(np.float64) @ [0.299, 0.587, 0.114]
        assert np.abs(got[..., 0] - luma).max() <= 0.51  # fixed-point weights: 2e-5 each
    out, _ = run_op("color_space_conversion", images, image_type=types.RGB, output_type=types.YCbCr)
    for image, got in zip(images, out, strict=True):
        assert np.abs(got - rounded(rgb_to_ycbcr(image))).max() <= 1


def test_gray_is_dalis_fixed_point_exactly() -> None:
    colours = np.random.default_rng(0).integers(0, 256, (64, 64, 3)).astype(np.uint8)
    (out,), _ = run_op(
        "color_space_conversion", [colours], image_type=types.RGB, output_type=types.GRAY
    )
    # 15-bit weights of 0.299/0.587/0.114 (sum 2**15), rounded: DALI 2.4 matches bit for bit
    weights = np.array([9798, 19235, 3735])
    assert weights.sum() == 2**15
    np.testing.assert_allclose(weights / 2**15, [0.299, 0.587, 0.114], atol=2e-5)
    expected = (colours.astype(np.int64) @ weights + 2**14) // 2**15
    np.testing.assert_array_equal(out[..., 0], expected)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**16))
def test_round_trips_and_inverse_formula(seed: int) -> None:
    rng = np.random.default_rng(seed)
    image = generated_image(rng, 7, 9)
    (ycc,), _ = run_op(
        "color_space_conversion", [image], image_type=types.RGB, output_type=types.YCbCr
    )
    assert np.abs(ycc - rounded(rgb_to_ycbcr(image))).max() <= 1
    (back,), _ = run_op(
        "color_space_conversion", [ycc], image_type=types.YCbCr, output_type=types.RGB
    )
    assert np.abs(back - rounded(ycbcr_to_rgb(ycc))).max() <= 1
    assert np.abs(back.astype(int) - image).max() <= 3  # quantisation of the studio range
    (gray,), _ = run_op(
        "color_space_conversion", [ycc], image_type=types.YCbCr, output_type=types.GRAY
    )
    assert np.abs(gray[..., 0] - rounded((ycc[..., 0] - 16.0) * 255 / 219)).max() <= 1


def test_bgr_and_gray_sources() -> None:
    image = generated_image(np.random.default_rng(1), 5, 6)
    bgr = np.ascontiguousarray(image[..., ::-1])
    (out,), _ = run_op(
        "color_space_conversion", [image], image_type=types.RGB, output_type=types.BGR
    )
    np.testing.assert_array_equal(out, bgr)
    (from_bgr,), _ = run_op(
        "color_space_conversion", [bgr], image_type=types.BGR, output_type=types.GRAY
    )
    (from_rgb,), _ = run_op(
        "color_space_conversion", [image], image_type=types.RGB, output_type=types.GRAY
    )
    np.testing.assert_array_equal(from_bgr, from_rgb)
    gray = image[..., :1].copy()
    (rgb,), _ = run_op(
        "color_space_conversion", [gray], image_type=types.GRAY, output_type=types.RGB
    )
    np.testing.assert_array_equal(rgb, np.repeat(gray, 3, axis=-1))
    (ycc,), _ = run_op(
        "color_space_conversion", [gray], image_type=types.GRAY, output_type=types.YCbCr
    )
    np.testing.assert_array_equal(
        ycc[..., 0], rounded(16 + gray[..., 0].astype(np.float64) * 219 / 255)
    )
    assert (ycc[..., 1:] == 128).all()
    (same,), _ = run_op(
        "color_space_conversion", [image], image_type=types.RGB, output_type=types.RGB
    )
    np.testing.assert_array_equal(same, image)
    (chw,), layout = run_op(
        "color_space_conversion",
        [np.ascontiguousarray(image.transpose(2, 0, 1))],
        "CHW",
        image_type=types.RGB,
        output_type=types.GRAY,
    )
    assert layout == "CHW"
    np.testing.assert_array_equal(chw[0], from_rgb[..., 0])


@pytest.mark.parametrize(
    ("sample", "kwargs", "message"),
    [
        (np.zeros((4, 4, 3), np.float32), {}, "input type float32"),
        (np.zeros((4, 4, 1), np.uint8), {}, "RGB input needs 3 channel"),
        (np.zeros((0, 4, 3), np.uint8), {}, "empty image"),
        (np.zeros((4, 4, 3), np.uint8), {"output_type": types.ANY_DATA}, "ANY_DATA"),
    ],
)
def test_errors(sample: np.ndarray, kwargs: dict, message: str) -> None:
    args = {"image_type": types.RGB, "output_type": types.GRAY, **kwargs}
    with pytest.raises(OperatorError, match=message):
        run_op("color_space_conversion", [sample], **args)
