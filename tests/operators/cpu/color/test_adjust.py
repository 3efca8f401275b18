"""Brightness/contrast and the colour-twist family against float64 references written here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, types
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.image_samples import (
    PerSample,
    generated_image,
    real_images,
    run_op,
    use_transforms,
)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


NP_TYPES = {"UINT8": np.uint8, "INT16": np.int16, "INT32": np.int32, "FLOAT": np.float32}


def to_type(values: np.ndarray, dtype: type) -> np.ndarray:
    """Round halves away from zero and saturate (DALI's conversion), from float64."""
    if np.dtype(dtype).kind == "f":
        return values.astype(dtype)
    info = np.iinfo(dtype)
    rounded = np.sign(values) * np.floor(np.abs(values) + 0.5)
    return np.clip(rounded, info.min, info.max).astype(dtype)


def bc_reference(image, brightness=1.0, shift=0.0, contrast=1.0, center=None, out=None):
    out = out or image.dtype.type
    in_kind, out_kind = np.dtype(image.dtype).kind, np.dtype(out).kind
    if center is None:
        center = 0.5 if in_kind == "f" else (np.iinfo(image.dtype).max + 1) / 2
    out_range = 1.0 if out_kind == "f" else float(np.iinfo(out).max)
    values = shift * out_range + brightness * (
        center + contrast * (image.astype(np.float64) - center)
    )
    return values, to_type(values, out)


@settings(max_examples=60, deadline=None)
@given(
    in_type=st.sampled_from(sorted(NP_TYPES)),
    out_type=st.sampled_from([None, *sorted(NP_TYPES)]),
    brightness=st.floats(0, 3),
    shift=st.floats(-0.5, 0.5),
    contrast=st.floats(0, 3),
    center=st.sampled_from([None, 0.25, 100.0]),
    seed=st.integers(0, 2**16),
)
def test_brightness_contrast_matches_formula(
    in_type, out_type, brightness, shift, contrast, center, seed
) -> None:
    rng = np.random.default_rng(seed)
    image = generated_image(rng, 5, 6)
    data = (
        (image / 255).astype(np.float32)
        if in_type == "FLOAT"
        else image.astype(NP_TYPES[in_type]) * (50 if in_type != "UINT8" else 1)
    )
    kwargs = {"brightness": brightness, "brightness_shift": shift, "contrast": contrast}
    if center is not None:
        kwargs["contrast_center"] = center
    if out_type is not None:
        kwargs["dtype"] = getattr(types, out_type)
    (out,), layout = run_op("brightness_contrast", [data], **kwargs)
    target = NP_TYPES[out_type] if out_type else data.dtype.type
    values, expected = bc_reference(data, brightness, shift, contrast, center, target)
    assert out.dtype == target and layout == "HWC"
    if np.dtype(target).kind == "f":
        np.testing.assert_allclose(out, values, rtol=1e-5, atol=1e-5 * (1 + np.abs(values).max()))
    else:
        # float32 arithmetic may flip a rounding exactly at .5; wider types lose more precision
        tolerance = 1 if np.dtype(target).itemsize < 4 else 1 + 1e-6 * np.abs(values).max()
        assert np.abs(out.astype(np.float64) - expected).max() <= tolerance


def test_exact_cases_and_dali_facts() -> None:
    x = np.arange(256, dtype=np.uint8).reshape(16, 16, 1)
    (out,), _ = run_op("contrast", [x], contrast=0.0)
    assert (out == 128).all()  # default centre of uint8 (DALI: 128)
    (out,), _ = run_op("brightness", [x], brightness=0.5, brightness_shift=0.1)
    expected = np.floor(x * 0.5 + 25.5 + 0.5)  # exact halves round up
    np.testing.assert_array_equal(out, expected)
    i16 = (np.arange(-128, 128, dtype=np.int16) * 100).reshape(16, 16, 1)
    (out,), _ = run_op("contrast", [i16], contrast=0.0)
    assert (out == 16384).all()
    (out,), _ = run_op("brightness", [i16], brightness_shift=0.5)
    assert out.ravel()[:3].tolist() == [3584, 3684, 3784]  # DALI 2.4: -12800 -> 3584
    halves = (np.arange(-20, 20) * 0.5).astype(np.float32).reshape(1, 40, 1)
    (out,), _ = run_op("brightness", [halves], dtype=types.INT16)
    away = np.sign(halves) * np.floor(np.abs(halves) + 0.5)  # DALI: -0.5 -> -1, 0.5 -> 1
    np.testing.assert_array_equal(out, away)
    (out,), _ = run_op("brightness", [x.astype(np.float32) * 1000], dtype=types.UINT8)
    assert out.max() == 255 and out.min() == 0


def test_brightness_any_layout_and_per_sample() -> None:
    images = real_images("file_tree", 2)
    chw = [np.ascontiguousarray(i.transpose(2, 0, 1)) for i in images]
    out, layout = run_op("brightness", chw, "CHW", brightness=PerSample([0.5, 2.0]))
    assert layout == "CHW"
    for image, factor, got in zip(chw, [0.5, 2.0], out, strict=True):
        np.testing.assert_array_equal(got, to_type(image * factor, np.uint8))


# ------------------------------------------------------------------------------- colour twist

RGB_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])


def twist_reference(rgb, hue=0.0, saturation=1.0, value=1.0, brightness=1.0, contrast=1.0):
    """Rotate the (I, Q) chroma as a complex number, scale it, go back to RGB (float64)."""
    yiq = rgb.astype(np.float64) @ RGB_TO_YIQ.T * value
    chroma = (yiq[..., 1] + 1j * yiq[..., 2]) * np.exp(-1j * math.radians(hue)) * saturation
    yiq = np.stack([yiq[..., 0], chroma.real, chroma.imag], axis=-1)
    rgb_out = np.linalg.solve(RGB_TO_YIQ, yiq.reshape(-1, 3).T).T.reshape(rgb.shape)
    half = 0.5 if rgb.dtype.kind == "f" else 128.0
    return brightness * (contrast * rgb_out + half * (1 - contrast))


@settings(max_examples=40, deadline=None)
@given(
    hue=st.floats(-400, 400),
    saturation=st.floats(0, 2.5),
    brightness=st.floats(0, 2),
    contrast=st.floats(0, 2),
    seed=st.integers(0, 2**16),
)
def test_color_twist_matches_yiq_reference(hue, saturation, brightness, contrast, seed) -> None:
    rng = np.random.default_rng(seed)
    image = generated_image(rng, 6, 7)
    kwargs = {"hue": hue, "saturation": saturation, "brightness": brightness, "contrast": contrast}
    (u8,), _ = run_op("color_twist", [image], **kwargs)
    expected = twist_reference(image, hue, saturation, 1.0, brightness, contrast)
    assert np.abs(u8.astype(np.float64) - to_type(expected, np.uint8)).max() <= 1
    as_float = (image / 255).astype(np.float32)
    (f32,), _ = run_op("color_twist", [as_float], **kwargs)
    expected = twist_reference(as_float, hue, saturation, 1.0, brightness, contrast)
    np.testing.assert_allclose(f32, expected, atol=1e-4)


def test_hue_saturation_hsv_on_real_images() -> None:
    images = real_images("coco_dali_dummy", 2)
    out, _ = run_op("hue", images, hue=PerSample([45.0, -120.0]))
    for image, hue, got in zip(images, [45.0, -120.0], out, strict=True):
        diff = got.astype(np.float64) - to_type(twist_reference(image, hue=hue), np.uint8)
        assert np.abs(diff).max() <= 1 and np.abs(diff).mean() < 0.05
    out, _ = run_op("saturation", images, saturation=0.25)
    for image, got in zip(images, out, strict=True):
        diff = got.astype(np.float64) - to_type(twist_reference(image, saturation=0.25), np.uint8)
        assert np.abs(diff).max() <= 1
    out, _ = run_op("hsv", images, hue=30.0, saturation=1.5, value=0.8)
    for image, got in zip(images, out, strict=True):
        expected = to_type(twist_reference(image, 30.0, 1.5, 0.8), np.uint8)
        assert np.abs(got.astype(np.float64) - expected).max() <= 1


def test_identity_and_full_turn() -> None:
    image = generated_image(np.random.default_rng(4), 8, 9)
    (out,), _ = run_op("hue", [image], hue=0.0)
    np.testing.assert_array_equal(out, image)
    (out,), _ = run_op("hue", [image], hue=360.0)
    assert np.abs(out.astype(int) - image).max() <= 1


def test_bgr_chw_and_sequences_agree_with_rgb_hwc() -> None:
    image = generated_image(np.random.default_rng(5), 6, 8)
    (rgb,), _ = run_op("hue", [image], hue=70.0)
    (bgr,), _ = run_op(
        "hue", [np.ascontiguousarray(image[..., ::-1])], hue=70.0, image_type=types.BGR
    )
    np.testing.assert_array_equal(bgr, rgb[..., ::-1])
    (chw,), layout = run_op(
        "hue", [np.ascontiguousarray(image.transpose(2, 0, 1))], "CHW", hue=70.0
    )
    assert layout == "CHW"
    np.testing.assert_array_equal(chw, rgb.transpose(2, 0, 1))
    (seq,), _ = run_op("hue", [np.stack([image, image])], "FHWC", hue=70.0)
    np.testing.assert_array_equal(seq[1], rgb)


def test_dtypes() -> None:
    image = generated_image(np.random.default_rng(6), 4, 5)
    as_float = (image / 255).astype(np.float32)
    (out,), _ = run_op("hsv", [as_float], hue=10.0)
    assert out.dtype == np.uint8  # DALI 2.4: hsv's dtype defaults to UINT8
    (out,), _ = run_op("hsv", [as_float], hue=10.0, dtype=types.FLOAT)
    assert out.dtype == np.float32
    (out,), _ = run_op("saturation", [image.astype(np.float16)], saturation=0.5)
    assert out.dtype == np.float16
    (out,), _ = run_op("color_twist", [image], contrast=0.0, dtype=types.INT16)
    assert out.dtype == np.int16 and (out == 128).all()


@pytest.mark.parametrize(
    ("op", "sample", "layout", "kwargs", "message"),
    [
        ("hue", np.zeros((4, 4, 4), np.uint8), "HWC", {}, "expected 3 colour channels"),
        ("hue", np.zeros((4, 4), np.uint8), "HW", {}, "no channel axis"),
        ("hue", np.zeros((4, 4, 3), np.float64), "HWC", {}, "input type float64"),
        ("hue", np.zeros((4, 4, 3), np.uint8), "HWC", {"dtype": types.INT8}, "INT8"),
        ("hue", np.zeros((4, 4, 3), np.uint8), "HWC", {"image_type": types.GRAY}, "GRAY"),
        ("saturation", np.zeros((4, 4, 3), np.uint8), "HWC", {"saturation": -1.0}, "negative"),
        ("brightness", np.zeros((4, 4, 3), np.uint16), "HWC", {}, "input type uint16"),
        ("contrast", np.zeros((4, 4, 3), np.uint8), "HWC", {"dtype": types.FLOAT64}, "FLOAT64"),
    ],
)
def test_errors(op: str, sample: np.ndarray, layout: str, kwargs: dict, message: str) -> None:
    with pytest.raises(OperatorError, match=message) as info:
        run_op(op, [sample], layout, **kwargs)
    assert op in str(info.value)
