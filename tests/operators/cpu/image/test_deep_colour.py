"""16-bit colour PNG and TIFF files keep their 16 bits through the CPU decoders."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from PIL import Image

from feedline import types
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.image.decoders import convert_depth
from feedline.operators.cpu.image.deep_colour import is_deep_colour
from feedline.operators.cpu.image.pillow_pixels import EncodedFile
from tests.operators.cpu.image_ops_testing import encode, use_image_plugins
from tests.operators.cpu.image_samples import run_op

FORMATS = (".png", ".tiff")


def written(rgb: np.ndarray, extension: str) -> np.ndarray:
    """The file OpenCV writes for the grey or ``RGB[A]`` pixels ``rgb`` (it takes BGR[A])."""
    order = [0] if rgb.shape[2] == 1 else [2, 1, 0] + ([3] if rgb.shape[2] == 4 else [])
    ok, data = cv2.imencode(extension, np.ascontiguousarray(rgb[:, :, order]))
    assert ok
    return data.ravel()


def pixels(channels: int, seed: int = 3) -> np.ndarray:
    """Random 16-bit pixels, most of which do not survive a trip through 8 bits."""
    return np.random.default_rng(seed).integers(0, 65536, (6, 7, channels), dtype=np.uint16)


def bt601_grey(rgb: np.ndarray) -> np.ndarray:
    """``0.299 R + 0.587 G + 0.114 B`` in float32, rounded half away from zero."""
    red, green, blue = (rgb[:, :, index].astype(np.float32) for index in range(3))
    weighted = np.float32(0.299) * red + np.float32(0.587) * green + np.float32(0.114) * blue
    return np.floor(weighted.astype(np.float64) + 0.5).astype(np.uint16)[:, :, np.newaxis]


@pytest.mark.parametrize("extension", FORMATS)
@pytest.mark.parametrize("channels", [3, 4])
def test_colour_outputs_keep_every_bit(
    empty_plugin_system: PluginSystem, extension: str, channels: int
) -> None:
    use_image_plugins(empty_plugin_system)
    raw = pixels(channels)
    data = [written(raw, extension)]
    expected = {
        types.RGB: raw[:, :, :3],
        types.BGR: raw[:, :, 2::-1],
        types.ANY_DATA: raw,
    }
    for output_type, want in expected.items():
        (out,), _ = run_op(
            "decoders.image", data, None, output_type=output_type, dtype=types.UINT16
        )
        assert out.dtype == np.uint16
        np.testing.assert_array_equal(out, want, err_msg=str(output_type))


@pytest.mark.parametrize("extension", FORMATS)
@pytest.mark.parametrize("dtype", [types.UINT8, types.FLOAT, types.INT16])
def test_other_dtypes_rescale_the_16_bit_values(
    empty_plugin_system: PluginSystem, extension: str, dtype
) -> None:
    use_image_plugins(empty_plugin_system)
    raw = pixels(3, seed=5)
    (out,), _ = run_op("decoders.image", [written(raw, extension)], None, dtype=dtype)
    np.testing.assert_array_equal(out, convert_depth(raw, dtype))


def test_tiff_grey_is_the_float32_weighted_sum(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)
    raw = pixels(4, seed=8)
    (out,), _ = run_op(
        "decoders.image", [written(raw, ".tiff")], None, output_type=types.GRAY, dtype=types.UINT16
    )
    np.testing.assert_array_equal(out, bt601_grey(raw))


def test_png_grey_is_libpngs_weighted_sum(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)
    raw = pixels(3, seed=9)
    (out,), _ = run_op(
        "decoders.image", [written(raw, ".png")], None, output_type=types.GRAY, dtype=types.UINT16
    )
    assert out.dtype == np.uint16 and out.shape == (6, 7, 1)
    # libpng's fixed-point weights differ from BT.601's by a few units in 65535, far less than
    # the steps of 257 an 8-bit decode would leave.
    assert np.abs(out.astype(np.int64) - bt601_grey(raw)).max() <= 8


@pytest.mark.parametrize("extension", FORMATS)
def test_crop_windows_come_from_the_full_depth_pixels(
    empty_plugin_system: PluginSystem, extension: str
) -> None:
    use_image_plugins(empty_plugin_system)
    raw = pixels(4, seed=11)
    (out,), _ = run_op(
        "decoders.image_crop",
        [written(raw, extension)],
        None,
        crop=(2, 3),
        crop_pos_x=1.0,
        crop_pos_y=0.0,
        output_type=types.RGB,
        dtype=types.UINT16,
    )
    np.testing.assert_array_equal(out, raw[0:2, 4:7, :3])


@settings(max_examples=15, deadline=None)
@given(
    hnp.arrays(np.uint16, st.tuples(st.integers(1, 9), st.integers(1, 9), st.sampled_from([3, 4]))),
    st.sampled_from(FORMATS),
)
def test_any_data_round_trips_any_pixels(raw: np.ndarray, extension: str) -> None:
    from feedline.operators.cpu.image.codecs import PillowCodec

    out = PillowCodec().decode(written(raw, extension), types.ANY_DATA)
    np.testing.assert_array_equal(out, raw)


@pytest.mark.parametrize(
    ("data", "deep"),
    [
        (written(pixels(3), ".png"), True),
        (written(pixels(4), ".tiff"), True),
        (encode(np.zeros((4, 4, 3), np.uint8), "PNG"), False),
        (encode(np.zeros((4, 4, 4), np.uint8), "TIFF"), False),
        (written(pixels(1), ".png"), False),
        (written(pixels(1), ".tiff"), False),
    ],
)
def test_only_16_bit_colour_headers_take_the_opencv_path(data: np.ndarray, deep: bool) -> None:
    assert is_deep_colour(Image.open(EncodedFile(data)), data) is deep
