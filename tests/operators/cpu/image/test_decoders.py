"""Decoder operators in pipelines: pixels against Pillow, windows, shapes and error messages."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

from feedline import fn, pipeline_def, types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem
from tests.conftest import sample_jpegs
from tests.operators.cpu.image_ops_testing import (
    coordinate_image,
    dali_round,
    decode_coordinates,
    encode,
    pil_decode,
    use_image_plugins,
)
from tests.operators.cpu.image_samples import generated_image, run_op

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)


def decode_op(op: str, samples: list[np.ndarray], *extra, **kwargs) -> list[np.ndarray]:
    out, layout = run_op(op, samples, None, *extra, **kwargs)
    if op != "peek_image_shape":
        assert layout == "HWC"
    return out


def photo_bytes(count: int) -> list[np.ndarray]:
    files = sample_jpegs(count)
    return [np.fromfile(path, dtype=np.uint8) for path in files]


def test_real_photos_bit_identical_to_pillow() -> None:
    samples = photo_bytes(4)
    gray = generated_image(RNG, 48, 64, channels=1)[:, :, 0]
    samples.append(encode(gray, "JPEG"))
    for data, got in zip(samples, decode_op("decoders.image", samples), strict=True):
        np.testing.assert_array_equal(got, pil_decode(data, "RGB"))


def test_output_types_and_dtypes() -> None:
    image = generated_image(RNG, 20, 30)
    data = [encode(image, "PNG")]
    (bgr,) = decode_op("decoders.image", data, output_type=types.BGR)
    np.testing.assert_array_equal(bgr, image[:, :, ::-1])
    (gray,) = decode_op("decoders.image", data, output_type=types.GRAY)
    np.testing.assert_array_equal(gray[:, :, 0], np.asarray(Image.fromarray(image).convert("L")))
    (as_float,) = decode_op("decoders.image", data, dtype=types.FLOAT)
    assert as_float.dtype == np.float32
    np.testing.assert_allclose(as_float, image / 255.0, rtol=1e-6)
    (as_u16,) = decode_op("decoders.image", data, dtype=types.UINT16)
    np.testing.assert_array_equal(as_u16, image.astype(np.uint16) * 257)


def test_image_crop_matches_reference_window() -> None:
    image = generated_image(RNG, 41, 57)
    data = [encode(image, "PNG")] * 3
    positions = [(0.0, 0.0), (0.5, 0.5), (1.0, 0.3)]
    for px, py in positions:
        (got,) = decode_op(
            "decoders.image_crop", data[:1], crop=(10, 13), crop_pos_x=px, crop_pos_y=py
        )
        y0, x0 = dali_round(py * (41 - 10)), dali_round(px * (57 - 13))
        np.testing.assert_array_equal(got, image[y0 : y0 + 10, x0 : x0 + 13])


def test_image_crop_outside_the_image_is_an_error() -> None:
    data = [encode(generated_image(RNG, 20, 20), "PNG")]
    with pytest.raises(
        OperatorError,
        match=r"cropping window \[-5..25, 5..15\] is not valid for image dimensions \[20 x 20\]",
    ):
        decode_op("decoders.image_crop", data, crop=(30, 10))


def test_image_random_crop_windows_follow_the_distribution() -> None:
    image = coordinate_image(60, 80)
    data = [encode(image, "PNG")] * 24
    outs = decode_op("decoders.image_random_crop", data, random_area=(0.2, 0.6))
    sizes = set()
    for got in outs:
        h, w = got.shape[:2]
        y0, x0 = decode_coordinates(got[0, 0])
        np.testing.assert_array_equal(got, image[y0 : y0 + h, x0 : x0 + w])
        area = h * w / (60 * 80)
        assert 0.2 - 0.05 <= area <= 0.6 + 0.05
        assert 3 / 4 - 0.1 <= w / h <= 4 / 3 + 0.1
        sizes.add((h, w))
    assert len(sizes) > 5
    again = decode_op("decoders.image_random_crop", data, random_area=(0.2, 0.6), num_threads=1)
    for first, second in zip(outs, again, strict=True):
        np.testing.assert_array_equal(first, second)


def test_image_random_crop_fallback_is_a_centred_window_with_an_allowed_ratio() -> None:
    image = coordinate_image(20, 100)
    (got,) = decode_op(
        "decoders.image_random_crop",
        [encode(image, "PNG")],
        random_area=(1.0, 1.0),
        random_aspect_ratio=(1.0, 2.0),
    )
    assert got.shape[:2] == (20, 40)
    assert decode_coordinates(got[0, 0]) == (0, 30)


def test_image_slice_relative_and_absolute() -> None:
    image = generated_image(RNG, 40, 50)
    data = [encode(image, "PNG")]
    anchor, shape = [np.array([0.1, 0.25], np.float32)], [np.array([0.5, 0.5], np.float32)]
    (got,) = decode_op("decoders.image_slice", data, anchor, shape)
    np.testing.assert_array_equal(got, image[10:30, 5:30])
    anchor, shape = [np.array([3, 4], np.int32)], [np.array([10, 20], np.int32)]
    (got,) = decode_op("decoders.image_slice", data, anchor, shape)
    np.testing.assert_array_equal(got, image[4:24, 3:13])


def test_image_slice_of_jpegs_decodes_the_window_of_the_full_decode() -> None:
    photos = photo_bytes(3)
    full = decode_op("decoders.image", photos)
    anchors = [np.array([3, 5], np.int32)] * len(photos)
    shapes = [np.array([40, 30], np.int32)] * len(photos)
    got = decode_op("decoders.image_slice", photos, anchors, shapes)
    for image, window in zip(full, got, strict=True):
        np.testing.assert_array_equal(window, image[5:35, 3:43])
    padded = decode_op(
        "decoders.image_slice",
        photos,
        [np.array([-4, 0], np.int32)] * len(photos),
        shapes,
        out_of_bounds_policy="pad",
    )
    for image, window in zip(full, padded, strict=True):
        assert not window[:, :4].any()
        np.testing.assert_array_equal(window[:, 4:], image[0:30, 0:36])


def test_peek_image_shape_reads_headers() -> None:
    photos = photo_bytes(2)
    shapes = decode_op("peek_image_shape", photos)
    for data, shape in zip(photos, shapes, strict=True):
        with Image.open(io.BytesIO(data.tobytes())) as img:
            assert shape.tolist() == [img.height, img.width, 3]
        assert shape.dtype == np.int64
    exif = Image.Exif()
    exif[0x0112] = 6
    rotated = encode(generated_image(RNG, 10, 30), "JPEG", exif=exif.tobytes())
    (shape,) = decode_op("peek_image_shape", [rotated], dtype=types.INT32, image_type=types.GRAY)
    assert shape.tolist() == [30, 10, 1] and shape.dtype == np.int32


def test_corrupt_file_error_names_the_file(tmp_path) -> None:
    good = tmp_path / "good.jpg"
    good.write_bytes(encode(generated_image(RNG, 16, 16)).tobytes())
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(good.read_bytes()[:200])

    @pipeline_def(batch_size=2, num_threads=2, device_id=None)
    def pipe():
        jpegs, _ = fn.readers.file(files=[str(good), str(bad)])
        return fn.decoders.image(jpegs)

    p = pipe()
    p.build()
    with pytest.raises(OperatorError, match=r"broken\.jpg.*(corrupt|truncated)") as raised:
        p.run()
    assert "decoders.image: Failed to decode the sample" in str(raised.value)
    assert isinstance(raised.value, RuntimeError)  # what DALI raises


@pytest.mark.parametrize(
    ("sample", "message"),
    [
        (np.zeros(10, np.float32), "must be uint8"),
        (np.zeros((4, 4), np.uint8), "must be 1-D"),
        (np.zeros(0, np.uint8), "empty input"),
    ],
)
def test_bad_encoded_input(sample: np.ndarray, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        decode_op("decoders.image", [sample])


def test_unsupported_dtype_is_rejected_at_build() -> None:
    data = [encode(generated_image(RNG, 8, 8))]
    with pytest.raises(TypeError, match="dtype INT64 is not supported"):
        decode_op("decoders.image", data, dtype=types.INT64)


def test_crop_window_is_sized_from_the_oriented_image() -> None:
    exif = Image.Exif()
    exif[0x0112] = 8
    image = generated_image(RNG, 12, 30)
    data = encode(image, "PNG", exif=exif.tobytes())
    (got,) = decode_op("decoders.image_crop", [data], crop=(30, 12))
    np.testing.assert_array_equal(got, np.rot90(image))
    assert math.prod(got.shape[:2]) == 360
