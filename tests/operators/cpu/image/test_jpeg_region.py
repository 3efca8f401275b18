"""Region-of-interest JPEG decoding (``kernels/feedline_jpeg.c``): the pixels of a full decode."""

from __future__ import annotations

import io

import numpy as np
import pytest
import simplejpeg
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from feedline import CorruptDataWarning
from feedline.core.types import ImageType, InterpType
from feedline.operators.cpu.image.bindings import (
    Normalization,
    decode_jpeg_region,
    decode_jpeg_resampled,
    normalize_u8,
)
from feedline.operators.cpu.image.codecs import JpegCodec
from feedline.operators.cpu.image.resample import FILTER_IDS, resample_native
from feedline.operators.native import JPEG_LIBRARY
from tests.conftest import sample_jpegs
from tests.core.native.native_testing import require_library
from tests.operators.cpu.image_samples import generated_image

require_library(JPEG_LIBRARY, "feedline's region JPEG decoder")

RNG = np.random.default_rng(31)


def jpeg(image: np.ndarray, **options) -> bytes:
    out = io.BytesIO()
    Image.fromarray(image).save(out, "JPEG", quality=92, **options)
    return out.getvalue()


SAMPLES = {
    "420": jpeg(generated_image(RNG, 77, 131), subsampling=2),
    "422": jpeg(generated_image(RNG, 64, 90), subsampling=1),
    "444": jpeg(generated_image(RNG, 50, 41), subsampling=0),
    "progressive": jpeg(generated_image(RNG, 83, 70), progressive=True),
    "gray": jpeg(generated_image(RNG, 45, 66)[:, :, 0]),
}


def full_decode(data: bytes, colorspace: str) -> np.ndarray:
    """The whole image, decoded by simplejpeg (libjpeg-turbo, as the region decoder)."""
    image = simplejpeg.decode_jpeg(data, colorspace)
    return image[:, :, None] if image.ndim == 2 else image


@st.composite
def regions(draw: st.DrawFn, height: int, width: int) -> tuple[int, int, int, int]:
    y0 = draw(st.integers(0, height - 1))
    x0 = draw(st.integers(0, width - 1))
    return y0, x0, draw(st.integers(y0 + 1, height)), draw(st.integers(x0 + 1, width))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(SAMPLES)), st.sampled_from(["RGB", "GRAY"]), st.data())
def test_region_equals_the_same_window_of_a_full_decode(name, colorspace, data) -> None:
    encoded = SAMPLES[name]
    full = full_decode(encoded, colorspace)
    roi = data.draw(regions(*full.shape[:2]))
    got = decode_jpeg_region(encoded, roi, colorspace)
    y0, x0, y1, x1 = roi
    expected = full[y0:y1, x0:x1]
    assert got is not None and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("width", [130, 17, 2])
def test_narrow_bands_at_every_column(width: int) -> None:
    """Narrow regions, where the decoder's band edges and upsampling special cases bite."""
    image = np.random.default_rng(width).integers(0, 256, (20, width, 3), dtype=np.uint8)
    encoded = jpeg(image, subsampling=2)
    full = full_decode(encoded, "RGB")
    for x in range(width):
        for w in (1, 2, 3):
            if x + w <= width:
                got = decode_jpeg_region(encoded, (1, x, 3, x + w), "RGB")
                np.testing.assert_array_equal(got, full[1:3, x : x + w], err_msg=f"x={x} w={w}")


def test_real_photos_regions_equal_full_decodes() -> None:
    rng = np.random.default_rng(2)
    for path in sample_jpegs(20):
        encoded = path.read_bytes()
        full = full_decode(encoded, "RGB")
        height, width = full.shape[:2]
        for _ in range(5):
            y0, x0 = int(rng.integers(0, height - 1)), int(rng.integers(0, width - 1))
            y1, x1 = int(rng.integers(y0 + 1, height + 1)), int(rng.integers(x0 + 1, width + 1))
            got = decode_jpeg_region(encoded, (y0, x0, y1, x1), "RGB")
            np.testing.assert_array_equal(got, full[y0:y1, x0:x1], err_msg=f"{path.name}")


def test_codec_decodes_regions_in_every_output_type() -> None:
    codec = JpegCodec()
    encoded = SAMPLES["420"]
    for output_type in (ImageType.RGB, ImageType.GRAY):
        whole = codec.decode(encoded, output_type)
        part = codec.decode(encoded, output_type, (5, 7, 60, 100))
        np.testing.assert_array_equal(part, whole[5:60, 7:100])


def test_truncated_data_decodes_as_libjpeg_recovers_it_with_a_warning() -> None:
    encoded = SAMPLES["420"]
    cut = encoded[: len(encoded) // 2]
    with pytest.warns(CorruptDataWarning, match=r"(?i)premature end"):
        region = decode_jpeg_region(cut, (0, 0, 70, 100), "RGB")
    with pytest.warns(CorruptDataWarning, match=r"(?i)premature end"):
        whole = JpegCodec().decode(cut, ImageType.RGB)
    np.testing.assert_array_equal(region, whole[:70, :100])
    with pytest.warns(CorruptDataWarning):
        JpegCodec().decode(cut, ImageType.RGB, (60, 0, 70, 100))


def test_corrupt_headers_and_bad_regions_are_errors() -> None:
    encoded = SAMPLES["420"]
    with pytest.raises(ValueError, match=r"(?i)not a JPEG|SOI"):
        decode_jpeg_region(b"\x89PNG not a jpeg at all" * 4, (0, 0, 1, 1), "RGB")
    with pytest.raises(ValueError, match=r"outside the 77x131 image"):
        decode_jpeg_region(encoded, (0, 0, 78, 10), "RGB")
    with pytest.raises(ValueError, match=r"(?i)corrupt"):
        JpegCodec().decode(encoded[:180], ImageType.RGB, (60, 0, 70, 100))


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["420", "422", "444", "progressive", "gray"]),
    st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)),
    st.tuples(st.integers(1, 70), st.integers(1, 70)),
    st.sampled_from([InterpType.INTERP_LINEAR, InterpType.INTERP_CUBIC, InterpType.INTERP_NN]),
    st.booleans(),
)
def test_decode_resampled_equals_full_decode_then_resample(
    name, corners, out_size, interp, antialias
) -> None:
    encoded = SAMPLES[name]
    full = full_decode(encoded, "RGB")
    height, width = full.shape[:2]
    a, b, c, d = corners
    source = ((a * height, max(b * height, a * height + 0.5)), (c * width, d * width + 0.25))
    expected = resample_native(full, out_size, source, [interp, interp], antialias)
    got = np.empty((*out_size, 3), np.uint8)
    ids = (FILTER_IDS[interp], FILTER_IDS[interp])
    assert decode_jpeg_resampled(encoded, (height, width), got, source, ids, antialias)
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["420", "444", "progressive", "gray"]),
    st.tuples(st.integers(1, 60), st.integers(1, 60)),
    st.booleans(),
    st.booleans(),
    st.sampled_from([3, 4]),
    st.lists(st.floats(-3, 3, width=32), min_size=6, max_size=6),
)
def test_decode_resampled_normalized_equals_resample_then_normalize(
    name, out_size, mirror, planar, channels, numbers
) -> None:
    encoded = SAMPLES[name]
    height, width = full_decode(encoded, "RGB").shape[:2]
    source = ((0.5, height - 1.0), (1.0, width - 0.25))
    ids = (FILTER_IDS[InterpType.INTERP_LINEAR],) * 2
    resampled = np.empty((*out_size, 3), np.uint8)
    assert decode_jpeg_resampled(encoded, (height, width), resampled, source, ids, True)
    gain, offset = np.float32(numbers[:3]), np.float32(numbers[3:])
    shape = (channels, *out_size) if planar else (*out_size, channels)
    expected = np.empty(shape, np.float32)
    assert normalize_u8(resampled, expected, gain, offset, mirror, planar, -7.5)
    got = np.full(shape, np.nan, np.float32)
    normalization = Normalization(gain, offset, mirror, planar, -7.5)
    assert decode_jpeg_resampled(encoded, (height, width), got, source, ids, True, normalization)
    np.testing.assert_array_equal(got, expected)


def test_decode_resampled_normalized_rejects_unsuitable_outputs() -> None:
    encoded = SAMPLES["444"]
    normalization = Normalization(np.ones(3, np.float32), np.zeros(3, np.float32), False, True, 0)
    ids = (FILTER_IDS[InterpType.INTERP_LINEAR],) * 2
    source = ((0.0, 50.0), (0.0, 41.0))
    for out in (
        np.empty((3, 8, 8), np.float64),
        np.empty((2, 8, 8), np.float32),
        np.empty((3, 8, 16), np.float32)[:, :, ::2],
    ):
        assert not decode_jpeg_resampled(encoded, (50, 41), out, source, ids, True, normalization)
    with pytest.raises(ValueError, match="JPEG datastream contains no image"):
        decode_jpeg_resampled(
            encoded[:40],
            (50, 41),
            np.empty((3, 8, 8), np.float32),
            source,
            ids,
            True,
            normalization,
        )
