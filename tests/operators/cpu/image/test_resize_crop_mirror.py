"""``resize_crop_mirror`` and ``fast_resize_crop_mirror``: one resampling pass that must equal
``resize`` followed by a crop of its output and a flip."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn
from feedline.core.types import InterpType
from feedline.operators.cpu.image.resize_crop_mirror import mirrored_crop_plan
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

RNG = np.random.default_rng(5)
IMAGES = [RNG.random((37, 53, 3), np.float32) * 255, RNG.random((60, 41, 3), np.float32) * 255]


def _centre_window(extent: int, size: int, pos: float) -> slice:
    # DALI holds the position in single precision: 0.9 * 5 is 4.4999998, which rounds to 4
    start = int(np.floor(float(np.float32(pos)) * (extent - size) + 0.5))
    return slice(start, start + size)


def _resized(images: list[np.ndarray], **resize_args: Any) -> list[np.ndarray]:
    ((out, _),) = build(lambda: fn.resize(feed(images, "HWC"), **resize_args))
    return out


@given(
    crop_h=st.integers(1, 30),
    crop_w=st.integers(1, 30),
    pos_x=st.floats(0, 1),
    pos_y=st.floats(0, 1),
    mirror=st.integers(0, 3),
)
@example(crop_h=27, crop_w=1, pos_x=0.0, pos_y=0.9, mirror=0)  # a float32 rounding tie
@settings(max_examples=15, deadline=None)
def test_equals_resize_then_crop_then_flip(
    crop_h: int, crop_w: int, pos_x: float, pos_y: float, mirror: int
) -> None:
    resize_args = {"size": (32, 30), "interp_type": InterpType.INTERP_LINEAR}
    expected = []
    for full in _resized(IMAGES, **resize_args):
        window = full[_centre_window(32, crop_h, pos_y), _centre_window(30, crop_w, pos_x)]
        if mirror & 1:
            window = window[:, ::-1]
        if mirror & 2:
            window = window[::-1]
        expected.append(window)
    ((got, layout),) = build(
        lambda: fn.resize_crop_mirror(
            feed(IMAGES, "HWC"),
            crop=(crop_h, crop_w),
            crop_pos_x=pos_x,
            crop_pos_y=pos_y,
            mirror=mirror,
            **resize_args,
        )
    )
    assert layout == "HWC"
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, atol=2e-3)


def test_without_a_crop_it_is_resize() -> None:
    expected = _resized(IMAGES, resize_shorter=30)
    ((got, _),) = build(lambda: fn.resize_crop_mirror(feed(IMAGES, "HWC"), resize_shorter=30))
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


def test_a_window_larger_than_the_resized_image_repeats_the_border() -> None:
    ((got, _),) = build(
        lambda: fn.resize_crop_mirror(
            feed(IMAGES[:1], "HWC"), size=(10, 10), crop=(14, 14), interp_type=InterpType.INTERP_NN
        ),
        batch_size=1,
    )
    (image,) = got
    assert image.shape == (14, 14, 3)
    np.testing.assert_array_equal(image[0], image[1])
    np.testing.assert_array_equal(image[:, -1], image[:, -2])


def test_per_sample_mirror_and_uint8() -> None:
    images = [np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)] * 2
    mirrors = [np.int32(0), np.int32(1)]
    ((got, _),) = build(
        lambda: fn.resize_crop_mirror(
            feed(images, "HWC"), size=(6, 8), mirror=feed(mirrors), interp_type=InterpType.INTERP_NN
        )
    )
    np.testing.assert_array_equal(got[0], images[0])
    np.testing.assert_array_equal(got[1], images[0][:, ::-1])


def test_volumes_flip_depth_with_bit_four() -> None:
    volume = RNG.random((6, 5, 4, 1), np.float32)
    ((got, layout),) = build(
        lambda: fn.resize_crop_mirror(
            feed([volume], "DHWC"),
            size=(6, 5, 4),
            mirror=4,
            interp_type=InterpType.INTERP_NN,
        ),
        batch_size=1,
    )
    assert layout == "DHWC"
    np.testing.assert_array_equal(got[0], volume[::-1])


def test_channel_first_sequences_match_frame_first_ones() -> None:
    frames = RNG.random((3, 2, 9, 11), np.float32)  # F, C, H, W
    args = {"size": (7, 5), "crop": (4, 4), "mirror": 1}
    ((fchw, _),) = build(lambda: fn.resize_crop_mirror(feed([frames], "FCHW"), **args), 1)
    cfhw_in = np.ascontiguousarray(frames.transpose(1, 0, 2, 3))
    ((cfhw, layout),) = build(lambda: fn.resize_crop_mirror(feed([cfhw_in], "CFHW"), **args), 1)
    assert layout == "CFHW"
    np.testing.assert_array_equal(cfhw[0], fchw[0].transpose(1, 0, 2, 3))


def test_fast_variant_defaults_to_no_antialiasing_and_warns() -> None:
    images = [RNG.random((40, 40, 1), np.float32)]
    with pytest.warns(DeprecationWarning, match="fast_resize_crop_mirror is deprecated"):
        ((fast, _),) = build(
            lambda: fn.fast_resize_crop_mirror(feed(images, "HWC"), size=(10, 10)), 1
        )
    ((plain, _),) = build(
        lambda: fn.resize_crop_mirror(feed(images, "HWC"), size=(10, 10), antialias=False), 1
    )
    ((smooth, _),) = build(lambda: fn.resize_crop_mirror(feed(images, "HWC"), size=(10, 10)), 1)
    np.testing.assert_array_equal(fast[0], plain[0])
    assert not np.allclose(fast[0], smooth[0])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"size": (10, 10), "crop": (5, 5), "crop_h": 3}, "'crop' cannot be combined with crop_h"),
        ({"size": (10, 10), "crop": (5, 5), "crop_pos_x": 1.5}, r"crop_pos_x must be in \[0, 1\]"),
        ({"size": (10, 10), "crop": (5, 5, 5, 5)}, "'crop' needs 2 values"),
        ({"crop": (5, 5)}, "no output size"),
    ],
)
def test_argument_errors(args: dict[str, Any], message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        build(lambda: fn.resize_crop_mirror(feed(IMAGES, "HWC"), **args))


def test_plan_narrows_the_source_region() -> None:
    args = {"size": (20, 40), "crop": (10, 10), "crop_pos_x": 0.0, "crop_pos_y": 1.0, "mirror": 1}
    out_size, source = mirrored_crop_plan("resize_crop_mirror", "HW", (40, 80), args)
    assert out_size == (10, 10)
    assert source == ((20.0, 40.0), (20.0, 0.0))


@pytest.mark.parametrize("name", ["resize_crop_mirror", "fast_resize_crop_mirror"])
def test_check_operator(name: str) -> None:
    example = OperatorExample(
        inputs=[[(img * 0.5).astype(np.uint8) for img in IMAGES]],
        layouts=["HWC"],
        args={"resize_shorter": 24, "crop": (16, 18), "mirror": 1},
    )
    assert "threads" in check_operator(name, example)
