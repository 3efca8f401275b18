"""Codecs: signatures, pixels against Pillow, EXIF orientation, corrupt data, third-party codecs."""

from __future__ import annotations

import functools
import io
import struct

import numpy as np
import pytest
from PIL import Image, ImageOps

from feedline import fn, pipeline_def
from feedline.core.errors import OperatorError
from feedline.core.hookspecs import hookimpl
from feedline.core.plugins import PluginSystem
from feedline.core.registry import Registry
from feedline.core.types import ImageType
from feedline.operators.cpu.image import schemas as image_plugin
from feedline.operators.cpu.image.codecs import (
    ImageCodec,
    JpegCodec,
    PillowCodec,
    apply_orientation,
    jpeg_orientation,
)
from tests.conftest import sample_jpegs
from tests.operators.cpu.image_ops_testing import encode, pil_decode, use_image_plugins
from tests.operators.cpu.image_samples import generated_image

RNG = np.random.default_rng(5)
IMAGE = generated_image(RNG, 37, 53)


def registry_with_codecs() -> Registry:
    registry = Registry()
    image_plugin.feedline_register_codecs(registry)
    return registry


@pytest.mark.parametrize(
    ("fmt", "options", "codec"),
    [
        ("JPEG", {}, "jpeg"),
        ("PNG", {}, "png"),
        ("BMP", {}, "bmp"),
        ("TIFF", {}, "tiff"),
        ("WEBP", {"lossless": True}, "webp"),
        ("PPM", {}, "pnm"),
        ("GIF", {}, "gif"),
        ("JPEG2000", {}, "jpeg2000"),
    ],
)
def test_signature_picks_codec_and_pixels_match_pillow(fmt: str, options: dict, codec: str) -> None:
    data = encode(IMAGE, fmt, **options)
    entry = registry_with_codecs().codec_for(data[:64].tobytes())
    assert entry is not None and entry.name == codec
    decoder = JpegCodec() if codec == "jpeg" else PillowCodec()
    got = decoder.decode(data, ImageType.RGB)
    np.testing.assert_array_equal(got, pil_decode(data, "RGB"))
    assert decoder.shape(data) == (37, 53, 3)


def test_unknown_signature_matches_nothing() -> None:
    assert registry_with_codecs().codec_for(b"\x00\x01garbage" * 4) is None


def test_jpeg_rgb_bgr_gray_on_real_photos() -> None:
    files = sample_jpegs(4)
    codec = JpegCodec()
    for path in files:
        data = np.fromfile(path, dtype=np.uint8)
        rgb = codec.decode(data, ImageType.RGB)
        np.testing.assert_array_equal(rgb, pil_decode(data, "RGB"))
        np.testing.assert_array_equal(codec.decode(data, ImageType.BGR), rgb[:, :, ::-1])
        with Image.open(path) as img:
            img.draft("L", img.size)
            gray = np.asarray(img.convert("L"))
        np.testing.assert_array_equal(codec.decode(data, ImageType.GRAY)[:, :, 0], gray)


def test_grayscale_and_cmyk_jpegs() -> None:
    gray = encode(IMAGE[:, :, 0], "JPEG")
    codec = JpegCodec()
    assert codec.decode(gray, ImageType.ANY_DATA).shape == (37, 53, 1)
    np.testing.assert_array_equal(codec.decode(gray, ImageType.RGB), pil_decode(gray, "RGB"))
    assert codec.shape(gray) == (37, 53, 1)
    cmyk = encode(Image.fromarray(IMAGE).convert("CMYK"), "JPEG")
    np.testing.assert_array_equal(codec.decode(cmyk, ImageType.RGB), pil_decode(cmyk, "RGB"))
    assert codec.decode(cmyk, ImageType.ANY_DATA).shape == (37, 53, 3)


def test_ycbcr_comes_from_the_decoder() -> None:
    data = encode(IMAGE, "JPEG")
    with Image.open(io.BytesIO(data.tobytes())) as img:
        img.draft("YCbCr", img.size)
        expected = np.asarray(img)
    np.testing.assert_array_equal(JpegCodec().decode(data, ImageType.YCbCr), expected)


def test_any_data_keeps_channels() -> None:
    rgba = np.dstack([IMAGE, np.arange(37 * 53, dtype=np.uint8).reshape(37, 53)])
    png = encode(rgba, "PNG")
    got = PillowCodec().decode(png, ImageType.ANY_DATA)
    np.testing.assert_array_equal(got, rgba)
    assert PillowCodec().shape(png) == (37, 53, 4)
    gray_alpha = encode(Image.fromarray(rgba).convert("LA"), "PNG")
    assert PillowCodec().decode(gray_alpha, ImageType.ANY_DATA).shape == (37, 53, 2)


def test_gif_first_frame_and_palette() -> None:
    frames = [Image.fromarray(IMAGE).convert("P"), Image.fromarray(IMAGE[::-1]).convert("P")]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    data = np.frombuffer(buffer.getvalue(), np.uint8)
    np.testing.assert_array_equal(
        PillowCodec().decode(data, ImageType.RGB), np.asarray(frames[0].convert("RGB"))
    )


def test_sixteen_bit_png() -> None:
    values = (np.arange(37 * 53, dtype=np.uint16).reshape(37, 53) * 31).astype(np.uint16)
    data = encode(Image.fromarray(values), "PNG")
    got = PillowCodec().decode(data, ImageType.ANY_DATA)
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got[:, :, 0], values)


def _with_exif(image: np.ndarray, orientation: int, fmt: str = "JPEG") -> np.ndarray:
    exif = Image.Exif()
    exif[0x0112] = orientation
    return encode(image, fmt, exif=exif.tobytes())


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
def test_exif_orientation_matches_pillow_exif_transpose(orientation: int, fmt: str) -> None:
    data = _with_exif(IMAGE, orientation, fmt)
    with Image.open(io.BytesIO(data.tobytes())) as img:
        expected = np.asarray(ImageOps.exif_transpose(img).convert("RGB"))
    codec = JpegCodec() if fmt == "JPEG" else PillowCodec()
    np.testing.assert_array_equal(codec.decode(data, ImageType.RGB), expected)
    assert codec.shape(data)[:2] == expected.shape[:2]


def test_jpeg_orientation_parser_reads_both_byte_orders() -> None:
    assert jpeg_orientation(encode(IMAGE, "JPEG")) == 1
    for endian, magic in (("<", b"II*\x00"), (">", b"MM\x00*")):
        entry = struct.pack(endian + "HHIHH", 0x0112, 3, 1, 6, 0)
        tiff = magic + struct.pack(endian + "I", 8) + struct.pack(endian + "H", 1) + entry
        payload = b"Exif\x00\x00" + tiff + b"\x00\x00\x00\x00"
        app1 = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
        data = encode(IMAGE, "JPEG").tobytes()
        assert jpeg_orientation(data[:2] + app1 + data[2:]) == 6


def test_apply_orientation_is_identity_for_1_and_invalid() -> None:
    assert apply_orientation(IMAGE, 1) is IMAGE
    assert apply_orientation(IMAGE, 9) is IMAGE


@pytest.mark.parametrize("codec", [JpegCodec(), PillowCodec()])
def test_corrupt_and_truncated_jpeg_raise(codec: ImageCodec) -> None:
    data = encode(IMAGE, "JPEG")
    with pytest.raises(ValueError, match="corrupt|truncated|unrecognised"):
        codec.decode(data[: len(data) // 2], ImageType.RGB)
    garbage = np.concatenate([data[:3], RNG.integers(0, 256, 500, dtype=np.uint8)])
    with pytest.raises(ValueError, match="corrupt|truncated|unrecognised"):
        codec.decode(garbage, ImageType.RGB)


def test_roi_crops_the_decoded_image() -> None:
    data = encode(IMAGE, "PNG")
    np.testing.assert_array_equal(
        PillowCodec().decode(data, ImageType.RGB, (3, 4, 20, 30)), IMAGE[3:20, 4:30]
    )


class StripesCodec(ImageCodec):
    """A third-party codec: 'STRP' + height + width (one byte each) → horizontal stripes."""

    name = "stripes"

    def shape(self, data: np.ndarray) -> tuple[int, int, int]:
        return int(data[4]), int(data[5]), 1

    def decode(self, data: np.ndarray, output_type: ImageType, roi=None) -> np.ndarray:
        height, width, _ = self.shape(data)
        image = np.repeat(np.arange(height, dtype=np.uint8)[:, None, None], width, axis=1)
        return image if roi is None else image[roi[0] : roi[2], roi[1] : roi[3]]


class StripesPlugin:
    @hookimpl
    def feedline_register_codecs(self, registry: Registry) -> None:
        registry.add_codec("stripes", (b"STRP",), StripesCodec)


def test_third_party_codec_is_used_by_decoders(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)
    empty_plugin_system.register(StripesPlugin(), "stripes")
    samples = [np.frombuffer(b"STRP\x05\x07", np.uint8), np.frombuffer(b"STRP\x03\x02", np.uint8)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        data = fn.external_source(source=lambda: samples, batch=True)
        return fn.decoders.image(data), fn.peek_image_shape(data, image_type=ImageType.ANY_DATA)

    p = pipe()
    p.build()
    images, shapes = p.run()
    assert images.at(0).shape == (5, 7, 1)
    np.testing.assert_array_equal(images.at(1)[:, 0, 0], [0, 1, 2])
    np.testing.assert_array_equal(shapes.at(0), [5, 7, 1])


def test_unrecognised_format_names_the_codecs(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)
    samples = [np.frombuffer(b"definitely not an image", np.uint8)]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.decoders.image(fn.external_source(source=lambda: samples, batch=True))

    p = pipe()
    p.build()
    with pytest.raises(OperatorError, match=r"unrecognised image format .*jpeg.*png"):
        p.run()


def test_jpeg_without_simplejpeg_falls_back_to_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    from feedline.operators.cpu.image import codecs

    monkeypatch.setattr(codecs, "_simplejpeg", None)
    data = _with_exif(IMAGE, 6)
    codec = JpegCodec()
    with Image.open(io.BytesIO(data.tobytes())) as img:
        expected = np.asarray(ImageOps.exif_transpose(img).convert("RGB"))
    np.testing.assert_array_equal(codec.decode(data, ImageType.RGB), expected)
    assert codec.shape(data) == (53, 37, 3)


@functools.cache
def _jpeg_variants() -> dict[str, bytes]:
    """JPEGs whose frame headers differ: subsampling, progressive, grey, CMYK, EXIF, padding."""
    rgb = Image.fromarray(generated_image(np.random.default_rng(3), 41, 67))
    variants = {}
    for name, image, options in (
        ("420", rgb, {"subsampling": 2}),
        ("444", rgb, {"subsampling": 0}),
        ("progressive", rgb, {"progressive": True}),
        ("gray", rgb.convert("L"), {}),
        ("cmyk", rgb.convert("CMYK"), {}),
        ("exif", rgb, {"exif": Image.Exif().tobytes()}),
        ("icc", rgb, {"icc_profile": b"\x00" * 3000}),
    ):
        variants[name] = encode(image, "JPEG", **options).tobytes()
    plain = variants["444"]
    variants["fill bytes"] = plain[:2] + b"\xff\xff\xff" + plain[2:]
    return variants


@pytest.mark.parametrize("name", sorted(_jpeg_variants()))
def test_jpeg_header_read_in_python_matches_libjpeg(name: str) -> None:
    simplejpeg = pytest.importorskip("simplejpeg")
    data = _jpeg_variants()[name]
    height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
    ours = JpegCodec()._header(data)
    assert ours is not None and ours[:2] == (height, width)
    assert (ours[2] == "Gray") == (colorspace == "Gray")
    assert (ours[2] in ("CMYK", "YCCK")) == (colorspace in ("CMYK", "YCCK"))


def test_jpeg_header_read_in_python_matches_libjpeg_on_real_photos() -> None:
    simplejpeg = pytest.importorskip("simplejpeg")
    for path in sample_jpegs():
        data = path.read_bytes()
        height, width, _, _ = simplejpeg.decode_jpeg_header(data)
        assert JpegCodec()._header(data)[:2] == (height, width), path.name


def test_jpeg_without_a_frame_header_is_a_header_error() -> None:
    pytest.importorskip("simplejpeg")
    data = encode(IMAGE, "JPEG").tobytes()
    start = data.index(b"\xff\xc0")
    length = struct.unpack(">H", data[start + 2 : start + 4])[0]
    without_frame = data[:start] + data[start + 2 + length :]
    with pytest.raises(ValueError, match="corrupt JPEG header"):
        JpegCodec().shape(without_frame)
    empty = bytearray(data)
    empty[start + 5 : start + 7] = b"\x00\x00"  # height 0: defined by a DNL marker
    with pytest.raises(ValueError, match="corrupt JPEG header"):
        JpegCodec().shape(bytes(empty))
