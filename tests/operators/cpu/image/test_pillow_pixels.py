"""Pillow decoding into the output's own buffer: the pixels are those of a plain Pillow decode
and whole-image conversion, for every PNG colour type, bit depth and interlacing, every output
type, and strips of any height (so that the in-place conversion runs in both directions over
many strips)."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from feedline.core.types import ImageType
from feedline.operators.cpu.image import pillow_pixels
from feedline.operators.cpu.image.codecs import PillowCodec
from feedline.operators.cpu.image.pillow_pixels import EncodedFile

#: Adam7's passes: (first column, first row, column step, row step).
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2))
ADAM7 += ((0, 1, 1, 2),)
SAMPLES_PER_PIXEL = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body).to_bytes(4, "big")
    return len(body).to_bytes(4, "big") + kind + body + crc


def _scanlines(samples: np.ndarray, depth: int) -> bytes:
    """Rows of ``samples`` ``(rows, columns, samples per pixel)`` packed at ``depth`` bits, each
    behind filter type 0."""
    lines = []
    for row in samples.reshape(samples.shape[0], -1):
        if depth == 16:
            packed = row.astype(">u2").tobytes()
        elif depth < 8:
            bits = np.unpackbits(row.astype(np.uint8)[:, None], axis=1)[:, 8 - depth :]
            packed = np.packbits(bits.reshape(-1)).tobytes()
        else:
            packed = row.astype(np.uint8).tobytes()
        lines.append(b"\0" + packed)
    return b"".join(lines)


def png(
    samples: np.ndarray,
    color_type: int,
    depth: int,
    interlaced: bool = False,
    palette: bytes | None = None,
    transparency: bytes | None = None,
) -> bytes:
    """A PNG of ``samples`` ``(H, W, samples per pixel)`` written by hand, so that every colour
    type, depth and Adam7 interlacing can be made (Pillow writes only some)."""
    height, width = samples.shape[:2]
    samples = samples.reshape(height, width, SAMPLES_PER_PIXEL[color_type])
    if interlaced:
        passes = [samples[y::dy, x::dx] for x, y, dx, dy in ADAM7]
        raw = b"".join(_scanlines(p, depth) for p in passes if p.size)
    else:
        raw = _scanlines(samples, depth)
    header = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, int(interlaced))
    chunks = _chunk(b"IHDR", header)
    if palette is not None:
        chunks += _chunk(b"PLTE", palette)
    if transparency is not None:
        chunks += _chunk(b"tRNS", transparency)
    chunks += _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + chunks


def reference(data: bytes, output_type: ImageType) -> np.ndarray:
    """What the decoder must give: Pillow's own decode, converted as a whole image (the file's
    channels for ANY_DATA, palettes as RGB or RGBA, 16-bit grey kept at 16 bits)."""
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        if image.mode in ("I;16", "I;16B", "I;16L", "I"):
            if output_type == ImageType.YCbCr:
                raise ValueError("YCbCr output is not supported for 16-bit images")
            values = np.clip(np.asarray(image).astype(np.int64), 0, 65535).astype(np.uint16)
            channels = 3 if output_type in (ImageType.RGB, ImageType.BGR) else 1
            return np.repeat(values[:, :, None], channels, axis=2)
        if output_type == ImageType.ANY_DATA:
            kept = {"L": "L", "LA": "LA", "RGB": "RGB", "RGBA": "RGBA", "1": "L", "PA": "RGBA"}
            palette = "RGBA" if "transparency" in image.info else "RGB"
            target = kept.get(image.mode, palette if image.mode == "P" else "RGB")
        else:
            target = {ImageType.GRAY: "L", ImageType.YCbCr: "YCbCr"}.get(output_type, "RGB")
        pixels = np.asarray(image.convert(target))
    pixels = pixels.reshape(*pixels.shape[:2], -1)
    return pixels[:, :, ::-1] if output_type == ImageType.BGR else pixels


def _pngs(rng: np.random.Generator, height: int, width: int, interlaced: bool) -> dict:
    def draw(high: int, *shape: int) -> np.ndarray:
        return rng.integers(0, high, (height, width, *shape))

    palette = rng.integers(0, 256, 48).astype(np.uint8).tobytes()
    alphas = rng.integers(0, 256, 10).astype(np.uint8).tobytes()
    return {
        "grey 1-bit": png(draw(2), 0, 1, interlaced),
        "grey 4-bit": png(draw(16), 0, 4, interlaced),
        "grey 8-bit": png(draw(256), 0, 8, interlaced),
        "grey 8-bit tRNS": png(draw(4), 0, 8, interlaced, transparency=b"\0\2"),
        "grey 16-bit": png(draw(65536), 0, 16, interlaced),
        "grey+alpha 8-bit": png(draw(256, 2), 4, 8, interlaced),
        "grey+alpha 16-bit": png(draw(65536, 2), 4, 16, interlaced),
        "palette 4-bit": png(draw(16), 3, 4, interlaced, palette),
        "palette 8-bit": png(draw(16), 3, 8, interlaced, palette),
        "palette tRNS": png(draw(16), 3, 8, interlaced, palette, alphas),
        "palette one transparent": png(draw(16), 3, 8, interlaced, palette, b"\xff\xff\0"),
        "RGB 8-bit": png(draw(256, 3), 2, 8, interlaced),
        "RGB 8-bit tRNS": png(draw(2, 3) * 255, 2, 8, interlaced, transparency=bytes(6)),
        "RGB 16-bit": png(draw(65536, 3), 2, 16, interlaced),
        "RGBA 8-bit": png(draw(256, 4), 6, 8, interlaced),
        "RGBA 16-bit": png(draw(65536, 4), 6, 16, interlaced),
    }


#: The kinds Pillow decodes (16-bit colour files go to OpenCV instead: test_deep_colour.py).
PNG_KINDS = [
    kind
    for kind in _pngs(np.random.default_rng(0), 2, 2, False)
    if kind not in ("RGB 16-bit", "RGBA 16-bit")
]


@pytest.mark.filterwarnings("ignore:Palette images with Transparency")
@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(PNG_KINDS),
    output_type=st.sampled_from([t for t in ImageType]),
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    interlaced=st.booleans(),
    strip_bytes=st.sampled_from([1, 64, 500, 1 << 20]),
    seed=st.integers(0, 2**16),
)
def test_every_png_decodes_to_pillows_pixels(
    kind: str,
    output_type: ImageType,
    height: int,
    width: int,
    interlaced: bool,
    strip_bytes: int,
    seed: int,
) -> None:
    data = _pngs(np.random.default_rng(seed), height, width, interlaced)[kind]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pillow_pixels, "_STRIP_BYTES", strip_bytes)
        try:
            expected = reference(data, output_type)
        except ValueError:  # no YCbCr of 16-bit grey
            with pytest.raises(ValueError, match="YCbCr output is not supported for 16-bit"):
                PillowCodec().decode(np.frombuffer(data, np.uint8), output_type)
            return
        got = PillowCodec().decode(np.frombuffer(data, np.uint8), output_type)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert got.flags.c_contiguous


@pytest.mark.filterwarnings("ignore:Palette images with Transparency")
@pytest.mark.parametrize("kind", PNG_KINDS)
@pytest.mark.parametrize("output_type", list(ImageType))
def test_each_png_kind_and_output_type(kind: str, output_type: ImageType) -> None:
    """Every pair once, interlaced, in strips of a few rows each."""
    data = _pngs(np.random.default_rng(11), 23, 19, True)[kind]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pillow_pixels, "_STRIP_BYTES", 200)
        if kind.startswith("grey 16") and output_type == ImageType.YCbCr:
            with pytest.raises(ValueError, match="YCbCr"):
                PillowCodec().decode(np.frombuffer(data, np.uint8), output_type)
            return
        got = PillowCodec().decode(np.frombuffer(data, np.uint8), output_type)
    np.testing.assert_array_equal(got, reference(data, output_type))


@pytest.mark.parametrize(
    ("fmt", "mode"),
    [
        ("BMP", "RGB"),
        ("BMP", "P"),
        ("TIFF", "RGBA"),
        ("TIFF", "CMYK"),
        ("TIFF", "I;16"),
        ("TIFF", "F"),
        ("TIFF", "1"),
        ("GIF", "P"),
        ("PPM", "L"),
        ("WEBP", "RGBA"),
    ],
)
@pytest.mark.parametrize("output_type", [ImageType.ANY_DATA, ImageType.BGR, ImageType.GRAY])
def test_other_formats_decode_to_pillows_pixels(
    fmt: str, mode: str, output_type: ImageType
) -> None:
    rng = np.random.default_rng(3)
    image = Image.fromarray(rng.integers(0, 256, (31, 17, 3), dtype=np.uint8))
    image = image.convert("L").convert(mode) if mode in ("I;16", "F") else image.convert(mode)
    buffer = io.BytesIO()
    image.save(buffer, fmt, **({"lossless": True} if fmt == "WEBP" else {}))
    data = buffer.getvalue()
    got = PillowCodec().decode(np.frombuffer(data, np.uint8), output_type)
    np.testing.assert_array_equal(got, reference(data, output_type))


def test_the_output_owns_a_buffer_of_its_own_size() -> None:
    """RGB's padding byte is given back: the array's memory is exactly its pixels."""
    data = png(np.random.default_rng(2).integers(0, 256, (64, 80, 3)), 2, 8)
    got = PillowCodec().decode(np.frombuffer(data, np.uint8), ImageType.RGB)
    owner = got.base if got.base is not None else got
    assert owner.nbytes == got.nbytes == 64 * 80 * 3


@pytest.mark.parametrize("cut", [60, 200, 1000])
def test_a_truncated_png_is_a_clear_error(cut: int) -> None:
    data = png(np.random.default_rng(4).integers(0, 256, (50, 50, 3)), 2, 8)
    with pytest.raises(ValueError, match="corrupt or truncated PNG data|unrecognised or corrupt"):
        PillowCodec().decode(np.frombuffer(data[:cut], np.uint8), ImageType.RGB)


@settings(max_examples=50, deadline=None)
@given(
    data=st.binary(max_size=300),
    moves=st.lists(
        st.tuples(st.integers(-400, 400), st.sampled_from([0, 1, 2]), st.integers(0, 50))
    ),
)
def test_encoded_file_reads_and_seeks_like_bytesio(
    data: bytes, moves: list[tuple[int, int, int]]
) -> None:
    ours, theirs = EncodedFile(np.frombuffer(data, np.uint8)), io.BytesIO(data)
    for offset, whence, count in moves:
        try:
            expected = theirs.seek(offset, whence)
        except ValueError:
            with pytest.raises(ValueError):
                ours.seek(offset, whence)
            continue
        assert ours.seek(offset, whence) == expected
        assert ours.read(count) == theirs.read(count)
        assert ours.tell() == theirs.tell()
    assert ours.read() == theirs.read()


def test_a_mode_pillow_cannot_map_is_converted_from_pillows_own_pixels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Should a Pillow lay a mode out otherwise than feedline expects, the decode still works
    (from Pillow's own memory)."""
    from PIL import Image as PilImage

    def refuse(*args: object) -> None:
        raise ValueError("buffer is not large enough")

    monkeypatch.setattr(PilImage.core, "map_buffer", refuse)
    data = png(np.random.default_rng(6).integers(0, 256, (9, 7, 3)), 2, 8)
    got = PillowCodec().decode(np.frombuffer(data, np.uint8), ImageType.BGR)
    np.testing.assert_array_equal(got, reference(data, ImageType.BGR))
