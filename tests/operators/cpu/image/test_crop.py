"""``crop``: DALI's anchor rounding, layouts, out-of-bounds policies and per-sample positions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.image.windows import crop_anchor
from tests.operators.cpu.image_ops_testing import dali_round, use_image_plugins
from tests.operators.cpu.image_samples import PerSample, generated_image, real_images, run_op

RNG = np.random.default_rng(17)
IMAGE = generated_image(RNG, 31, 47)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)


# (width, crop width, crop_pos_x) → the columns DALI 2.4 returned.
DALI_WINDOWS = [
    (5, 2, 0.5, [2, 3]),
    (7, 2, 0.5, [3, 4]),
    (6, 3, 0.5, [2, 3, 4]),
    (5, 4, 0.5, [1, 2, 3, 4]),
    (10, 3, 0.5, [4, 5, 6]),
    (5, 2, 0.25, [1, 2]),
]


@pytest.mark.parametrize(("width", "crop_w", "pos", "columns"), DALI_WINDOWS)
def test_anchor_rounding_matches_dali(width: int, crop_w: int, pos: float, columns) -> None:
    row = np.arange(width, dtype=np.uint8).reshape(1, width, 1)
    (got,), _ = run_op("crop", [row], crop_w=crop_w, crop_h=1, crop_pos_x=pos)
    assert got.ravel().tolist() == columns


def test_fractional_crop_size_is_truncated() -> None:
    row = np.arange(10, dtype=np.uint8).reshape(1, 10, 1)
    for crop_w, expected in ((2.5, 2), (3.5, 3), (2.6, 2)):
        (got,), _ = run_op("crop", [row], crop_w=crop_w, crop_h=1, crop_pos_x=0.0)
        assert got.shape[1] == expected


def test_real_photos_centre_crop() -> None:
    for image in real_images("file_tree", 3):
        (got,), _ = run_op("crop", [image], crop=(64, 80))
        y0 = dali_round(0.5 * (image.shape[0] - 64))
        x0 = dali_round(0.5 * (image.shape[1] - 80))
        np.testing.assert_array_equal(got, image[y0 : y0 + 64, x0 : x0 + 80])


def test_layouts() -> None:
    (chw,), layout = run_op("crop", [IMAGE.transpose(2, 0, 1)], "CHW", crop=(10, 20))
    (hwc,), _ = run_op("crop", [IMAGE], "HWC", crop=(10, 20))
    assert layout == "CHW"
    np.testing.assert_array_equal(chw, hwc.transpose(2, 0, 1))
    video = np.stack([IMAGE, IMAGE[::-1]])
    (frames,), layout = run_op("crop", [video], "FHWC", crop=(10, 20), crop_pos_y=0.0)
    assert layout == "FHWC" and frames.shape == (2, 10, 20, 3)
    np.testing.assert_array_equal(frames[1], IMAGE[::-1][:10, 14:34])  # 13.5 rounds up
    volume = RNG.integers(0, 255, (6, 9, 8, 2), dtype=np.uint8)
    (cube,), _ = run_op("crop", [volume], "DHWC", crop=(2, 3, 4), crop_pos_z=1.0)
    np.testing.assert_array_equal(cube, volume[4:6, 3:6, 2:6])
    (plain,), layout = run_op("crop", [IMAGE[:, :, 0]], None, crop=(5, 6))
    assert layout == "" and plain.shape == (5, 6)


def test_pad_and_trim_policies() -> None:
    (padded,), _ = run_op(
        "crop", [IMAGE], crop=(40, 50), out_of_bounds_policy="pad", fill_values=(7, 8, 9)
    )
    y0, x0 = dali_round(0.5 * (31 - 40)), dali_round(0.5 * (47 - 50))
    assert (y0, x0) == (-5, -2)
    np.testing.assert_array_equal(padded[5:36, 2:49], IMAGE)
    np.testing.assert_array_equal(padded[0, 0], [7, 8, 9])
    np.testing.assert_array_equal(padded[-1, -1], [7, 8, 9])
    (trimmed,), _ = run_op("crop", [IMAGE], crop=(40, 50), out_of_bounds_policy="trim_to_shape")
    np.testing.assert_array_equal(trimmed, IMAGE)
    with pytest.raises(OperatorError, match="out of bounds"):
        run_op("crop", [IMAGE], crop=(40, 50))


def test_per_sample_positions_and_dtype() -> None:
    out, _ = run_op(
        "crop",
        [IMAGE, IMAGE],
        crop=(4, 5),
        crop_pos_x=PerSample([0.0, 1.0]),
        crop_pos_y=PerSample([1.0, 0.0]),
        dtype=types.FLOAT,
    )
    np.testing.assert_array_equal(out[0], IMAGE[27:31, 0:5].astype(np.float32))
    np.testing.assert_array_equal(out[1], IMAGE[0:4, 42:47].astype(np.float32))
    (truncated,), _ = run_op("crop", [IMAGE], crop=(4, 4), rounding="truncate")
    np.testing.assert_array_equal(truncated, IMAGE[13:17, 21:25])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"crop": (4, 5), "crop_w": 3.0}, "cannot be combined"),
        ({"crop": (4, 5, 6)}, "needs 2 values"),
        ({"crop": (0, 5)}, "must be positive"),
        ({"crop": (4, 5), "crop_pos_x": 1.5}, r"crop_pos_x must be in \[0, 1\]"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        run_op("crop", [IMAGE], **kwargs)


def test_bad_layout_and_empty_input() -> None:
    with pytest.raises(
        OperatorError, match='The layout "NCHW" does not match any of the allowed layouts'
    ):
        run_op("crop", [IMAGE[None]], "NCHW", crop=(2, 2))
    with pytest.raises(OperatorError, match="empty image"):
        run_op("crop", [IMAGE[:0]], crop=(2, 2))


@settings(max_examples=300, deadline=None)
@given(size=st.integers(1, 500), crop=st.integers(1, 500), pos=st.floats(0.0, 1.0))
def test_window_stays_inside_when_it_fits(size: int, crop: int, pos: float) -> None:
    start = crop_anchor(size, crop, pos)
    if crop <= size:
        assert 0 <= start <= size - crop
    assert abs(start - pos * (size - crop)) <= 0.5


def test_two_values_crop_a_volume_in_height_and_width() -> None:
    volume = np.arange(2 * 4 * 5 * 3, dtype=np.uint8).reshape(2, 4, 5, 3)
    (out,), layout = run_op("crop", [volume], "DHWC", crop=(2, 3))
    assert layout == "DHWC"
    np.testing.assert_array_equal(out, volume[:, 1:3, 1:4])


def test_three_values_crop_a_sequence_across_its_frames() -> None:
    frames = np.arange(4 * 4 * 5 * 3, dtype=np.uint8).reshape(4, 4, 5, 3)
    (out,), _ = run_op("crop", [frames], "FHWC", crop=(2, 2, 3), crop_pos_z=0.0)
    np.testing.assert_array_equal(out, frames[0:2, 1:3, 1:4])
    planar = np.ascontiguousarray(np.moveaxis(frames, -1, 0))  # CFHW
    (out,), layout = run_op("crop", [planar], "CFHW", crop=(2, 2, 3), crop_pos_z=1.0)
    assert layout == "CFHW"
    np.testing.assert_array_equal(out, planar[:, 2:4, 1:3, 1:4])


def test_crop_d_crops_a_sequence_across_its_frames_too() -> None:
    """As a three-value ``crop`` does, ``crop_d`` alone (with crop_h/crop_w) takes the frames of a
    sequence without a D axis as its depth, in crop and crop_mirror_normalize (DALI 2.4)."""
    frames = np.arange(10 * 4 * 5 * 3, dtype=np.uint8).reshape(10, 4, 5, 3)
    (out,), _ = run_op("crop", [frames], "FHWC", crop_d=9.1, crop_h=2, crop_w=3, crop_pos_z=1.0)
    np.testing.assert_array_equal(out, frames[1:10, 1:3, 1:4])
    (out,), _ = run_op(
        "crop_mirror_normalize", [frames], "FHWC", crop_d=4, crop_h=2, crop_w=3, crop_pos_z=0.0
    )
    assert out.shape == (4, 3, 2, 3)


@pytest.mark.parametrize(
    ("crop", "pos", "rounding", "start"),
    [
        ((11, 9), 0.5, "truncate", 0),  # -0.5 truncates toward zero, as DALI's does
        ((11, 11), 0.5, "truncate", -1),
        ((11, 9), 0.5, "round", -1),  # -0.5 rounds away from zero
        ((4, 3), 0.7, "round", 3),  # float32(0.7) * 5 = 3.4999999..., below the half
        ((4, 3), 0.7, "truncate", 3),
    ],
)
def test_anchor_rounding_as_dali(crop, pos, rounding, start) -> None:
    image = np.arange(20 * 8, dtype=np.uint8).reshape(20, 8, 1)
    (out,), _ = run_op(
        "crop",
        [image],
        crop=crop,
        crop_pos_x=pos,
        out_of_bounds_policy="pad",
        rounding=rounding,
        fill_values=(255,),
    )
    column = max(start, 0)
    first = out[:, column - start, 0]
    assert (first % 8 == column).all()
