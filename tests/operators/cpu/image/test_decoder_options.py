"""DALI's decoder options: ``use_fast_idct`` (libjpeg-turbo's fast IDCT), ``adjust_orientation``,
the knobs of DALI's GPU decoder (accepted, no effect on the CPU), the arguments DALI deprecated,
and DALI's message for a window outside the image."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import simplejpeg
from PIL import Image

from feedline import fn, pipeline_def, types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.core.types import ImageType
from feedline.operators.cpu.image import codecs
from feedline.operators.cpu.image.codecs import JpegCodec
from tests.operators.cpu.image_ops_testing import dali_round, encode, use_image_plugins
from tests.operators.cpu.image_samples import generated_image

RNG = np.random.default_rng(5)
ROTATE_90 = 6  # EXIF: the stored image must be turned 90 degrees clockwise to stand upright


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)


def jpeg_bytes(height: int, width: int, orientation: int | None = None, **options) -> bytes:
    """A JPEG of a generated image (4:2:0 chroma), with an EXIF orientation if given."""
    if orientation is not None:
        exif = Image.Exif()
        exif[0x0112] = orientation
        options["exif"] = exif.tobytes()
    return encode(generated_image(RNG, height, width), "JPEG", quality=85, **options).tobytes()


def write(tmp_path: Path, blobs: list[bytes], suffix: str = ".jpg") -> list[str]:
    paths = []
    for index, blob in enumerate(blobs):
        path = tmp_path / f"{index}{suffix}"
        path.write_bytes(blob)
        paths.append(str(path))
    return paths


def run(files: list[str], graph) -> list[list[np.ndarray]]:
    """Run ``graph(encoded)`` once over ``files``; every output as a list of samples."""

    @pipeline_def(batch_size=len(files), num_threads=2, device_id=None, seed=3)
    def pipe():
        encoded, _ = fn.readers.file(files=files)
        return graph(encoded)

    built = pipe()
    built.build()
    return [[np.array(sample) for sample in out] for out in built.run()]


@pytest.fixture
def jpegs(tmp_path: Path) -> list[str]:
    sizes = [(64, 80), (97, 61), (33, 130)]
    return write(tmp_path, [jpeg_bytes(h, w) for h, w in sizes])


def test_fast_idct_gives_libjpeg_turbos_fast_idct_pixels(jpegs: list[str]) -> None:
    (fast,) = run(jpegs, lambda e: fn.decoders.image(e, use_fast_idct=True))
    (exact,) = run(jpegs, lambda e: fn.decoders.image(e))
    for path, got, accurate in zip(jpegs, fast, exact, strict=True):
        data = Path(path).read_bytes()
        np.testing.assert_array_equal(got, simplejpeg.decode_jpeg(data, "RGB", fastdct=True))
        assert not np.array_equal(got, accurate)
        assert np.abs(got.astype(int) - accurate).mean() < 3


@pytest.mark.parametrize("output_type", [types.RGB, types.GRAY])
def test_fast_idct_windows_are_windows_of_the_fast_decode(
    jpegs: list[str], output_type: types.DALIImageType
) -> None:
    colorspace = "RGB" if output_type == types.RGB else "GRAY"

    def crops(encoded):
        kwargs = {"output_type": output_type, "use_fast_idct": True}
        return (
            fn.decoders.image_crop(encoded, crop=(20, 30), crop_pos_x=0.8, **kwargs),
            fn.decoders.image_slice(encoded, start=(3, 5), end=(40, 30), **kwargs),
        )

    cropped, sliced = run(jpegs, crops)
    for path, crop, part in zip(jpegs, cropped, sliced, strict=True):
        full = simplejpeg.decode_jpeg(Path(path).read_bytes(), colorspace, fastdct=True)
        full = full.reshape(*full.shape[:2], -1)
        height, width = full.shape[:2]
        y0, x0 = dali_round(0.5 * (height - 20)), dali_round(0.8 * (width - 30))
        np.testing.assert_array_equal(crop, full[y0 : y0 + 20, x0 : x0 + 30])
        np.testing.assert_array_equal(part, full[5:30, 3:40])


def test_fast_idct_reaches_the_fused_decode_and_resize(jpegs: list[str]) -> None:
    (fused,) = run(jpegs, lambda e: fn.resize(fn.decoders.image(e, use_fast_idct=True), size=24))
    decoded = [simplejpeg.decode_jpeg(Path(p).read_bytes(), "RGB", fastdct=True) for p in jpegs]

    @pipeline_def(batch_size=len(decoded), num_threads=1, device_id=None)
    def reference():
        return fn.resize(fn.external_source(source=lambda: decoded, layout="HWC"), size=24)

    pipe = reference()
    pipe.build()
    (expected,) = pipe.run()
    for got, want in zip(fused, expected, strict=True):
        np.testing.assert_array_equal(got, np.array(want))


def test_adjust_orientation_false_keeps_the_stored_pixels(tmp_path: Path) -> None:
    blob = jpeg_bytes(40, 70, orientation=ROTATE_90)
    png = generated_image(RNG, 30, 50)
    exif = Image.Exif()
    exif[0x0112] = ROTATE_90
    png_blob = encode(png, "PNG", exif=exif.tobytes()).tobytes()
    files = write(tmp_path, [blob]) + write(tmp_path, [png_blob], ".png")
    stored = simplejpeg.decode_jpeg(blob, "RGB")

    def decode(encoded):
        return (
            fn.decoders.image(encoded, adjust_orientation=False),
            fn.decoders.image(encoded),
            fn.peek_image_shape(encoded, adjust_orientation=False),
            fn.peek_image_shape(encoded),
            fn.decoders.image_crop(encoded, crop=(10, 20), adjust_orientation=False),
        )

    raw, upright, raw_shape, upright_shape, raw_crop = run(files, decode)
    np.testing.assert_array_equal(raw[0], stored)
    np.testing.assert_array_equal(upright[0], np.rot90(stored, -1))
    np.testing.assert_array_equal(raw[1], png)
    np.testing.assert_array_equal(upright[1], np.rot90(png, -1))
    assert raw_shape[0].tolist() == [40, 70, 3]
    assert upright_shape[0].tolist() == [70, 40, 3]
    np.testing.assert_array_equal(raw_crop[0], stored[15:25, 25:45])


def test_adjust_orientation_false_reaches_the_fused_decode_and_resize(tmp_path: Path) -> None:
    blob = jpeg_bytes(40, 70, orientation=ROTATE_90)
    files = write(tmp_path, [blob])
    (fused,) = run(
        files, lambda e: fn.resize(fn.decoders.image(e, adjust_orientation=False), size=(20, 35))
    )
    assert fused[0].shape == (20, 35, 3)


GPU_KNOBS = {
    "jpeg_fancy_upsampling": True,
    "hw_decoder_load": 0.2,
    "affine": False,
    "device_memory_padding": 1,
    "device_memory_padding_jpeg2k": 2,
    "host_memory_padding": 3,
    "host_memory_padding_jpeg2k": 4,
    "hybrid_huffman_threshold": 5,
    "preallocate_height_hint": 6,
    "preallocate_width_hint": 7,
}


def test_gpu_decoder_knobs_are_accepted_and_change_nothing_on_the_cpu(jpegs: list[str]) -> None:
    cache = {"cache_size": 8, "cache_threshold": 9, "cache_type": "largest", "cache_debug": True}

    def decode(encoded):
        return (
            fn.decoders.image(encoded, **GPU_KNOBS, **cache, cache_batch_copy=False),
            fn.decoders.image(encoded),
            fn.decoders.image_crop(encoded, crop=(10, 10), **GPU_KNOBS),
            fn.decoders.image_crop(encoded, crop=(10, 10)),
        )

    knobs, plain, knobs_crop, plain_crop = run(jpegs, decode)
    for a, b in zip(knobs + knobs_crop, plain + plain_crop, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["memory_stats", "split_stages", "use_chunk_allocator"])
def test_deprecated_decoder_arguments_warn_and_are_ignored(jpegs: list[str], name: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (got,) = run(jpegs, lambda e: fn.decoders.image(e, **{name: True}))
    assert any(
        issubclass(w.category, DeprecationWarning) and name in str(w.message) for w in caught
    )
    (plain,) = run(jpegs, lambda e: fn.decoders.image(e))
    for a, b in zip(got, plain, strict=True):
        np.testing.assert_array_equal(a, b)


def test_cache_arguments_belong_to_decoders_image_only(jpegs: list[str]) -> None:
    with pytest.raises(TypeError, match="cache_size"):
        run(jpegs, lambda e: fn.decoders.image_crop(e, crop=(5, 5), cache_size=1))


@pytest.mark.parametrize(
    ("graph", "window"),
    [
        (lambda e: fn.decoders.image_crop(e, crop_w=200, crop_h=10), r"\[27..37, -60..140\]"),
        (lambda e: fn.decoders.image_slice(e, end=[100], axes=[1]), r"\[0..64, 0..100\]"),
        (lambda e: fn.decoders.image_slice(e, start=[-4], end=[9], axes=[1]), r"\[0..64, -4..9\]"),
    ],
)
def test_windows_outside_the_image_fail_with_dalis_message(tmp_path: Path, graph, window) -> None:
    files = write(tmp_path, [jpeg_bytes(64, 80)])
    message = f"The cropping window {window} is not valid for image dimensions \\[64 x 80\\]"
    with pytest.raises(OperatorError, match=message) as caught:
        run(files, graph)
    assert isinstance(caught.value, RuntimeError)


def test_trimmed_slices_are_not_errors(tmp_path: Path) -> None:
    files = write(tmp_path, [jpeg_bytes(64, 80)])
    (out,) = run(
        files,
        lambda e: fn.decoders.image_slice(
            e, start=[-4], end=[90], axes=[1], out_of_bounds_policy="trim_to_shape"
        ),
    )
    assert out[0].shape == (64, 80, 3)


@pytest.mark.parametrize("output_type", [ImageType.RGB, ImageType.BGR, ImageType.GRAY])
def test_files_turbojpeg_refuses_are_decoded_by_libjpeg(
    monkeypatch: pytest.MonkeyPatch, output_type: ImageType
) -> None:
    # TurboJPEG's API refuses chroma subsamplings it has no name for (e.g. 4x2 luma blocks),
    # which libjpeg decodes: the codec must fall back to it, fast IDCT included.
    blob = jpeg_bytes(48, 72)
    data = np.frombuffer(blob, np.uint8)
    colorspace = {ImageType.RGB: "RGB", ImageType.BGR: "BGR", ImageType.GRAY: "GRAY"}
    expected = simplejpeg.decode_jpeg(blob, colorspace[output_type], fastdct=True)
    codec = JpegCodec()
    codec.fast_idct = True

    def refuse(*args, **kwargs):
        raise ValueError("tjDecompressHeader3(): Could not determine subsampling level of JPEG")

    monkeypatch.setattr(codecs._simplejpeg, "decode_jpeg", refuse)
    got = codec.decode(data, output_type)
    np.testing.assert_array_equal(got, expected.reshape(48, 72, -1))


def test_other_simplejpeg_errors_still_mean_corrupt_data(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise ValueError("Huffman table 0x00 was not defined")

    monkeypatch.setattr(codecs._simplejpeg, "decode_jpeg", refuse)
    with pytest.raises(ValueError, match="corrupt or truncated JPEG data: Huffman"):
        JpegCodec().decode(np.frombuffer(jpeg_bytes(16, 16), np.uint8), ImageType.RGB)


def test_resize_with_save_attrs_after_a_decoder_is_not_fused(jpegs: list[str]) -> None:
    resized, extents = run(
        jpegs, lambda e: tuple(fn.resize(fn.decoders.image(e), size=(10, 12), save_attrs=True))
    )
    assert [list(x) for x in extents] == [[64, 80], [97, 61], [33, 130]]
    assert all(image.shape == (10, 12, 3) for image in resized)
