"""TIFF files with more than four channels: all of them with ANY_DATA, DALI's RGB/BGR/GRAY."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from feedline import types
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.image.codecs import PillowCodec
from feedline.operators.cpu.image.decoders import convert_depth
from feedline.operators.cpu.image.many_channels import many_channel_tiff
from tests.operators.cpu.image_ops_testing import encode, use_image_plugins
from tests.operators.cpu.image_samples import run_op

tifffile = pytest.importorskip("tifffile", reason="the many-channel TIFF decoder needs tifffile")


def tiff_file(pixels: np.ndarray, **options) -> np.ndarray:
    """``pixels`` (HWC) as an RGB TIFF whose channels after the third are extra samples."""
    options.setdefault("planarconfig", "contig")
    if options["planarconfig"] == "separate":  # tifffile then takes one plane per sample
        pixels = np.moveaxis(pixels, -1, 0)
    buffer = io.BytesIO()
    tifffile.imwrite(buffer, pixels, photometric="rgb", **options)
    return np.frombuffer(buffer.getvalue(), np.uint8)


def samples(channels: int, dtype: type, seed: int = 0) -> np.ndarray:
    top = np.iinfo(dtype).max
    return np.random.default_rng(seed).integers(0, top + 1, (5, 7, channels), dtype=dtype)


def grey(pixels: np.ndarray) -> np.ndarray:
    """BT.601 weights in float32 on the first three channels, rounded half away from zero."""
    weights = np.array([0.299, 0.587, 0.114], np.float32)
    weighted = (pixels[:, :, :3].astype(np.float32) * weights).sum(axis=2, dtype=np.float32)
    top = np.iinfo(pixels.dtype).max
    return np.clip(np.floor(weighted.astype(np.float64) + 0.5), 0, top).astype(pixels.dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("channels", [5, 6, 9])
@pytest.mark.parametrize("planarconfig", ["contig", "separate"])
def test_every_channel_comes_out_with_any_data(
    empty_plugin_system: PluginSystem, dtype: type, channels: int, planarconfig: str
) -> None:
    use_image_plugins(empty_plugin_system)
    raw = samples(channels, dtype)
    data = [tiff_file(raw, planarconfig=planarconfig)]
    (out,), layout = run_op(
        "decoders.image", data, None, output_type=types.ANY_DATA, dtype=types.UINT16
    )
    assert layout == "HWC" and out.shape == (5, 7, channels)
    np.testing.assert_array_equal(out, convert_depth(raw, types.UINT16))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_colour_outputs_use_the_first_three(empty_plugin_system: PluginSystem, dtype) -> None:
    use_image_plugins(empty_plugin_system)
    raw = samples(6, dtype, seed=4)
    data = [tiff_file(raw)]
    expected = {
        types.RGB: raw[:, :, :3],
        types.BGR: raw[:, :, 2::-1],
        types.GRAY: grey(raw)[:, :, np.newaxis],
    }
    for output_type, want in expected.items():
        (out,), _ = run_op("decoders.image", data, None, output_type=output_type, dtype=types.FLOAT)
        np.testing.assert_array_equal(
            out, convert_depth(want, types.FLOAT), err_msg=str(output_type)
        )


def test_crop_windows_cover_every_channel(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)
    raw = samples(7, np.uint8, seed=2)
    (out,), _ = run_op(
        "decoders.image_crop",
        [tiff_file(raw, compression="zlib")],
        None,
        crop=(3, 2),
        crop_pos_x=0.0,
        crop_pos_y=1.0,
        output_type=types.ANY_DATA,
    )
    np.testing.assert_array_equal(out, raw[2:5, 0:2])


def test_the_header_decides_without_decoding() -> None:
    header = many_channel_tiff(tiff_file(samples(6, np.uint16)))
    assert header is not None
    assert (header.height, header.width, header.samples, header.bits) == (5, 7, 6, 16)
    assert many_channel_tiff(tiff_file(samples(4, np.uint16))) is None
    assert many_channel_tiff(encode(np.zeros((4, 4, 3), np.uint8), "TIFF")) is None
    assert many_channel_tiff(encode(np.zeros((4, 4, 3), np.uint8), "PNG")) is None
    assert PillowCodec().shape(tiff_file(samples(8, np.uint8))) == (5, 7, 8)


def test_ycbcr_is_refused() -> None:
    with pytest.raises(ValueError, match="YCbCr output is not supported"):
        PillowCodec().decode(tiff_file(samples(5, np.uint8)), types.YCbCr)


def test_without_tifffile_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    data = tiff_file(samples(5, np.uint8))
    monkeypatch.setitem(sys.modules, "tifffile", None)
    with pytest.raises(ImportError, match=r"feedline\[tiff\]"):
        PillowCodec().decode(data, types.ANY_DATA)
