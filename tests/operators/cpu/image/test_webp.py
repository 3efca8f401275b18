"""The WebP codec: OpenCV's decode gives Pillow's pixels for lossy and lossless files, with and
without alpha, in every output type, oriented and cropped as the other codecs do."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from feedline.core.types import ImageType
from feedline.operators.cpu.image.codecs import PillowCodec
from feedline.operators.cpu.image.webp import WebpCodec
from tests.operators.cpu.image.test_pillow_pixels import reference


def webp(mode: str, seed: int = 0, exif_orientation: int = 1, **options: object) -> bytes:
    rng = np.random.default_rng(seed)
    ramp = np.linspace(0, 255, 57)[None, :, None]
    pixels = np.clip(ramp + rng.normal(0, 25, (43, 57, 4)), 0, 255).astype(np.uint8)
    image = Image.fromarray(pixels, "RGBA").convert(mode)
    buffer = io.BytesIO()
    if exif_orientation != 1:
        exif = Image.Exif()
        exif[0x0112] = exif_orientation
        options["exif"] = exif
    image.save(buffer, "WEBP", **options)
    return buffer.getvalue()


OPTIONS = [{"lossless": True}, {"quality": 90}, {"quality": 20}]


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
@pytest.mark.parametrize("options", OPTIONS, ids=["lossless", "q90", "q20"])
@pytest.mark.parametrize("output_type", list(ImageType))
def test_pixels_are_pillows(mode: str, options: dict, output_type: ImageType) -> None:
    data = webp(mode, **options)
    got = WebpCodec().decode(np.frombuffer(data, np.uint8), output_type)
    expected = reference(data, output_type)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert got.flags.c_contiguous


@pytest.mark.parametrize("orientation", [1, 3, 6, 8])
def test_orientation_and_region_as_pillows_codec(orientation: int) -> None:
    data = np.frombuffer(webp("RGB", 2, orientation, quality=80), np.uint8)
    ours, pillows = WebpCodec(), PillowCodec()
    np.testing.assert_array_equal(
        ours.decode(data, ImageType.RGB), pillows.decode(data, ImageType.RGB)
    )
    roi = (3, 4, 20, 30)
    np.testing.assert_array_equal(
        ours.decode(data, ImageType.BGR, roi), pillows.decode(data, ImageType.BGR, roi)
    )


def test_an_animated_file_gives_its_first_frame() -> None:
    frames = [Image.new("RGB", (20, 10), (200, 10, 10)), Image.new("RGB", (20, 10), (0, 0, 255))]
    buffer = io.BytesIO()
    frames[0].save(buffer, "WEBP", save_all=True, append_images=frames[1:], lossless=True)
    data = np.frombuffer(buffer.getvalue(), np.uint8)
    got = WebpCodec().decode(data, ImageType.RGB)
    np.testing.assert_array_equal(got, PillowCodec().decode(data, ImageType.RGB))
    assert got[0, 0].tolist() == [200, 10, 10]


@pytest.mark.parametrize("cut", [30, 100, 400])
def test_a_truncated_file_is_an_error(cut: int) -> None:
    data = webp("RGB", quality=90)[:cut]
    with pytest.raises(ValueError, match="WEBP|unrecognised or corrupt"):
        WebpCodec().decode(np.frombuffer(data, np.uint8), ImageType.RGB)


def test_the_size_limits_refuse_from_the_header() -> None:
    codec = WebpCodec()
    codec.max_pixels = 43 * 57 - 1
    with pytest.raises(ValueError, match="max_pixels"):
        codec.decode(np.frombuffer(webp("RGB", lossless=True), np.uint8), ImageType.RGB)


@pytest.mark.parametrize("output_type", [ImageType.RGB, ImageType.BGR, ImageType.ANY_DATA])
def test_still_files_never_go_through_pillows_decoder(
    monkeypatch: pytest.MonkeyPatch, output_type: ImageType
) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("Pillow decoded a still WebP file")

    monkeypatch.setattr(PillowCodec, "decode", refuse)
    for mode in ("RGB", "RGBA"):
        data = np.frombuffer(webp(mode, quality=75), np.uint8)
        assert WebpCodec().decode(data, output_type).shape[:2] == (43, 57)
