"""``crop_mirror_normalize`` against a NumPy restatement of its formula."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.image_ops_testing import dali_round, use_image_plugins
from tests.operators.cpu.image_samples import PerSample, generated_image, real_images, run_op

RNG = np.random.default_rng(23)
IMAGE = generated_image(RNG, 29, 38)
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)


def reference(
    image: np.ndarray,
    crop: tuple[int, int] | None = None,
    pos: tuple[float, float] = (0.5, 0.5),
    mirror: bool = False,
    mean=(0.0,),
    std=(1.0,),
    scale: float = 1.0,
    shift: float = 0.0,
) -> np.ndarray:
    """HWC float64 result of crop → mirror → (x - mean) / std * scale + shift."""
    if crop is not None:
        y0 = dali_round(pos[1] * (image.shape[0] - crop[0]))
        x0 = dali_round(pos[0] * (image.shape[1] - crop[1]))
        image = image[y0 : y0 + crop[0], x0 : x0 + crop[1]]
    if mirror:
        image = image[:, ::-1]
    return (image - np.asarray(mean)) / np.asarray(std) * scale + shift


def test_imagenet_normalisation_on_real_photos() -> None:
    images = real_images("file_tree", 3)
    out, layout = run_op(
        "crop_mirror_normalize",
        images,
        crop=(100, 120),
        mean=MEAN,
        std=STD,
        mirror=PerSample([0, 1, 0]),
    )
    assert layout == "CHW"
    for index, (image, got) in enumerate(zip(images, out, strict=True)):
        expected = reference(image, (100, 120), mirror=index == 1, mean=MEAN, std=STD)
        assert got.dtype == np.float32 and got.shape == (3, 100, 120)
        np.testing.assert_allclose(got, expected.transpose(2, 0, 1), rtol=1e-5, atol=1e-5)


def test_hwc_output_pad_output_and_positions() -> None:
    (got,), layout = run_op(
        "crop_mirror_normalize",
        [IMAGE],
        crop=(10, 12),
        crop_pos_x=0.2,
        crop_pos_y=0.9,
        output_layout="HWC",
        pad_output=True,
        mean=(1, 2, 3),
        std=2.0,
    )
    assert layout == "HWC" and got.shape == (10, 12, 4)
    expected = reference(IMAGE, (10, 12), (0.2, 0.9), mean=(1, 2, 3), std=(2.0,))
    np.testing.assert_allclose(got[:, :, :3], expected, rtol=1e-6)
    np.testing.assert_array_equal(got[:, :, 3], 0)


def test_integer_output_is_rounded_and_saturated() -> None:
    (got,), _ = run_op(
        "crop_mirror_normalize",
        [IMAGE],
        mean=100.0,
        std=50.0,
        scale=100.0,
        shift=128.0,
        dtype=types.UINT8,
    )
    expected = reference(IMAGE, mean=(100.0,), std=(50.0,), scale=100.0, shift=128.0)
    expected = np.clip(np.floor(expected + 0.5), 0, 255).transpose(2, 0, 1)
    assert got.dtype == np.uint8
    assert np.abs(got.astype(int) - expected).max() <= 1
    assert (got == 255).any() and (got == 0).any()


def test_chw_input_and_sequences() -> None:
    (got,), layout = run_op(
        "crop_mirror_normalize",
        [IMAGE.transpose(2, 0, 1)],
        "CHW",
        output_layout="HWC",
        mirror=1,
        mean=MEAN,
        std=STD,
    )
    assert layout == "HWC"
    np.testing.assert_allclose(
        got, reference(IMAGE, mirror=True, mean=MEAN, std=STD), rtol=1e-5, atol=1e-5
    )
    video = np.stack([IMAGE, IMAGE[::-1]])
    (frames,), layout = run_op("crop_mirror_normalize", [video], "FHWC", crop=(8, 8))
    assert layout == "FCHW" and frames.shape == (2, 3, 8, 8)
    np.testing.assert_allclose(frames[1], reference(IMAGE[::-1], (8, 8)).transpose(2, 0, 1))


def test_per_sample_mean_and_std() -> None:
    out, _ = run_op(
        "crop_mirror_normalize",
        [IMAGE, IMAGE],
        mean=PerSample([[0, 0, 0], [10, 20, 30]]),
        std=PerSample([[1, 1, 1], [2, 4, 8]]),
        output_layout="HWC",
    )
    np.testing.assert_allclose(out[1], reference(IMAGE, mean=(10, 20, 30), std=(2, 4, 8)))


def test_out_of_bounds_pad() -> None:
    (got,), _ = run_op(
        "crop_mirror_normalize",
        [IMAGE],
        crop=(35, 38),
        out_of_bounds_policy="pad",
        fill_values=(5, 6, 7),
        output_layout="HWC",
    )
    y0 = dali_round(0.5 * (29 - 35))
    assert y0 == -3
    np.testing.assert_array_equal(got[0, 0], [5, 6, 7])
    np.testing.assert_array_equal(got[3:32], IMAGE.astype(np.float32))


@pytest.mark.parametrize("mirror", [0, 1])
@pytest.mark.parametrize(("layout", "dtype"), [("HWC", types.FLOAT), ("CHW", types.UINT8)])
def test_padding_holds_fill_values_as_given_not_normalized(mirror, layout, dtype) -> None:
    """DALI writes ``fill_values`` into the padded area unchanged; only the pixels taken from
    the sample are normalized (mean, std, scale, shift)."""
    kwargs = dict(mean=(10, 20, 30), std=(2, 4, 8), scale=0.5, shift=3, mirror=mirror)
    (got,), _ = run_op(
        "crop_mirror_normalize",
        [IMAGE],
        crop=(35, 44),
        out_of_bounds_policy="pad",
        fill_values=(5, 6, 7),
        output_layout=layout,
        dtype=dtype,
        **kwargs,
    )
    hwc = got if layout == "HWC" else got.transpose(1, 2, 0)
    inner = reference(IMAGE, **kwargs)
    if dtype == types.UINT8:
        inner = np.clip(np.sign(inner) * np.floor(np.abs(inner) + 0.5), 0, 255)
    height, width = IMAGE.shape[:2]
    top, left = -dali_round(0.5 * (height - 35)), -dali_round(0.5 * (width - 44))
    rows = slice(top, top + height)
    cols = slice(44 - left - width, 44 - left) if mirror else slice(left, left + width)
    np.testing.assert_allclose(hwc[rows, cols], inner, atol=1e-4)
    outside = np.ones(hwc.shape[:2], bool)
    outside[rows, cols] = False
    np.testing.assert_array_equal(hwc[outside], np.broadcast_to([5, 6, 7], (outside.sum(), 3)))


@pytest.mark.parametrize(
    ("kwargs", "layout", "message"),
    [
        ({"std": (1.0, 0.0, 1.0)}, "HWC", "must not contain zeros"),
        ({"mean": (1.0, 2.0)}, "HWC", "'mean' has 2 values, the data has 3 channels"),
        ({"output_layout": "CWHX"}, "HWC", "not a permutation"),
        ({}, "HW", 'The layout "HW" does not match any of the allowed layouts'),
        ({"crop": (50, 10)}, "HWC", "out of bounds"),
    ],
)
def test_errors(kwargs: dict, layout: str, message: str) -> None:
    sample = IMAGE[:, :, 0] if layout == "HW" else IMAGE
    with pytest.raises(OperatorError, match=message):
        run_op("crop_mirror_normalize", [sample], layout, **kwargs)


def test_unsupported_dtype_is_rejected_at_build() -> None:
    with pytest.raises(TypeError, match="'dtype' = INT64 is not supported; expected FLOAT"):
        run_op("crop_mirror_normalize", [IMAGE], dtype=types.INT64)


def test_mirror_without_a_crop_keeps_the_whole_image() -> None:
    (got,), _ = run_op("crop_mirror_normalize", [IMAGE], mirror=1, output_layout="HWC")
    np.testing.assert_array_equal(got, IMAGE[:, ::-1].astype(np.float32))


@settings(max_examples=40, deadline=None)
@given(
    height=st.integers(1, 20),
    width=st.integers(1, 20),
    mirror=st.booleans(),
    scale=st.floats(0.1, 10.0),
    shift=st.floats(-10.0, 10.0),
    seed=st.integers(0, 1000),
)
def test_formula_holds_for_any_shape(height, width, mirror, scale, shift, seed) -> None:
    image = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    (got,), _ = run_op(
        "crop_mirror_normalize",
        [image],
        mirror=int(mirror),
        scale=scale,
        shift=shift,
        mean=(3.0, 4.0, 5.0),
        std=(2.0, 3.0, 4.0),
        num_threads=1,
    )
    expected = reference(
        image, None, mirror=mirror, mean=(3, 4, 5), std=(2, 3, 4), scale=scale, shift=shift
    )
    np.testing.assert_allclose(got, expected.transpose(2, 0, 1), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    ("layout", "shape", "crop", "kept"),
    [
        ("CFHW", (3, 2, 4, 5), (2, 3), (slice(None), slice(None), slice(1, 3), slice(1, 4))),
        ("CFHW", (3, 2, 4, 5), (1, 2, 3), (slice(None), slice(1, 2), slice(1, 3), slice(1, 4))),
        ("CFDHW", (3, 2, 2, 4, 5), (2, 3), (slice(None),) * 3 + (slice(1, 3), slice(1, 4))),
        ("DHWC", (2, 4, 5, 3), (2, 3), (slice(None), slice(1, 3), slice(1, 4))),
        ("FHWC", (2, 4, 5, 3), (1, 2, 3), (slice(1, 2), slice(1, 3), slice(1, 4))),
    ],
)
def test_layouts_and_crops_as_dali_takes_them(layout, shape, crop, kept) -> None:
    # the centred anchor of 1 frame out of 2 rounds half away from zero: frame 1, as in DALI
    sample = np.arange(np.prod(shape), dtype=np.uint8).reshape(shape)
    (out,), out_layout = run_op(
        "crop_mirror_normalize", [sample], layout, crop=crop, output_layout=layout,
        mean=[1.0], std=[2.0],
    )  # fmt: skip
    assert out_layout == layout
    np.testing.assert_allclose(out, (sample[kept].astype(np.float32) - 1) / 2)


def test_scale_none_means_the_default() -> None:
    image = generated_image(np.random.default_rng(2), 4, 5)
    (got,), _ = run_op("crop_mirror_normalize", [image], "HWC", mean=[1.0, 2.0, 3.0], scale=None)
    (default,), _ = run_op("crop_mirror_normalize", [image], "HWC", mean=[1.0, 2.0, 3.0])
    np.testing.assert_array_equal(got, default)


@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int16])
@pytest.mark.parametrize("layout", ["HWC", "CHW"])
def test_float32_results_follow_dalis_order_of_operations(dtype, layout) -> None:
    """DALI computes ``(x - centre) * gain`` in float32 with ``gain = (1 / std) * scale`` and
    ``centre = mean - shift / gain``; the results are then DALI's to the bit (the uint8 input
    takes the compiled path, the others NumPy)."""
    rng = np.random.default_rng(8)
    image = (rng.random((9, 11, 3)) * 255).astype(dtype)
    mean, std = (123.675, 116.28, 103.53), (58.395, 57.12, 57.375)
    for scale, shift in [(1.0, 0.0), (64.0, 128.0)]:
        (got,), _ = run_op(
            "crop_mirror_normalize",
            [image],
            mean=mean,
            std=std,
            scale=scale,
            shift=shift,
            output_layout=layout,
        )
        gain = (np.float32(1) / np.float32(std)) * np.float32(scale)
        centre = np.float32(mean) - np.float32(shift) / gain
        expected = (image.astype(np.float32) - centre) * gain
        np.testing.assert_array_equal(
            got, expected if layout == "HWC" else expected.transpose(2, 0, 1)
        )
