"""Decode fusion of DALI's fused decoder spellings: ``decoders.image_random_crop``/``image_crop``/
``image_slice`` → ``resize``."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from feedline import fn, pipeline_def, types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem
from tests.conftest import sample_jpegs
from tests.operators.cpu.image_ops_testing import encode, use_image_plugins
from tests.operators.cpu.image_samples import generated_image

RNG = np.random.default_rng(31)
FUSED = "decoders._image_random_crop_resize"


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """JPEGs of several shapes, one rotated by EXIF (the general path) and a PNG (no JPEG
    codec)."""
    root = tmp_path_factory.mktemp("spellings")
    paths = []
    for index, (h, w) in enumerate([(120, 90), (75, 140), (200, 160), (64, 64), (90, 300)]):
        path = root / f"{index}.jpg"
        path.write_bytes(encode(generated_image(RNG, h, w), "JPEG", quality=90).tobytes())
        paths.append(str(path))
    exif = Image.Exif()
    exif[0x0112] = 6
    rotated = root / "rotated.jpg"
    image = generated_image(RNG, 70, 50)
    rotated.write_bytes(encode(image, "JPEG", exif=exif.tobytes()).tobytes())
    png = root / "image.png"
    png.write_bytes(encode(generated_image(RNG, 80, 110), "PNG").tobytes())
    return [*paths, str(rotated), str(png)]


def random_window(jpegs):
    return fn.decoders.image_random_crop(jpegs, random_area=(0.1, 1.0))


def fixed_window(jpegs):
    return fn.decoders.image_crop(
        jpegs, crop=(40, 45), crop_pos_x=fn.random.uniform(range=(0, 1)), crop_pos_y=0.2
    )


def relative_slice(jpegs):
    anchor = fn.random.uniform(range=(0.0, 0.3), shape=2)
    return fn.decoders.image_slice(jpegs, anchor, [0.7, 0.6])


def absolute_slice(jpegs):
    return fn.decoders.image_slice(
        jpegs, start=fn.random.uniform(range=(0, 20), shape=2), shape=(30, 25)
    )


def trimmed_slice(jpegs):
    return fn.decoders.image_slice(
        jpegs, rel_start=(0.5, 0.25), rel_end=(1.5, 0.9), out_of_bounds_policy="trim_to_shape"
    )


def run(
    paths: list[str], follow, keep_window: bool, seed: int, decode=random_window
) -> tuple[list, list[str]]:
    """reader → ``decode`` → ``follow``; also output the window to block fusion."""

    @pipeline_def(batch_size=len(paths), num_threads=2, device_id=None, seed=seed)
    def pipe():
        jpegs, _ = fn.readers.file(files=paths, random_shuffle=True)
        window = decode(jpegs)
        result = follow(window)
        return (result, window) if keep_window else result

    p = pipe()
    p.build()
    outputs = [p.run()[0] for _ in range(2)]
    return [out.at(i) for out in outputs for i in range(len(out))], [
        op.schema.name for op in p._built_ops
    ]


def resize_then_cmn(images):
    images = fn.resize(images, size=(48, 40))
    return fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), dtype=types.FLOAT)


def resize_shorter(images):
    return fn.resize(images, resize_shorter=33, interp_type=types.INTERP_CUBIC)


def resize_then_cropping_cmn(images):
    return fn.crop_mirror_normalize(fn.resize(images, size=(48, 40)), crop=(30, 30))


@pytest.mark.parametrize("seed", [1, 7, 42, 1234])
@pytest.mark.parametrize(
    ("follow", "fused_ops"),
    [
        (resize_then_cmn, ["readers.file", "random.coin_flip", FUSED]),
        (resize_shorter, ["readers.file", FUSED]),
        (resize_then_cropping_cmn, ["readers.file", FUSED, "crop_mirror_normalize"]),
    ],
)
def test_random_crop_then_resize_is_fused_with_identical_pixels(
    files: list[str], follow, fused_ops: list[str], seed: int
) -> None:
    fused, ops = run(files, follow, keep_window=False, seed=seed)
    assert ops == fused_ops
    plain, ops = run(files, follow, keep_window=True, seed=seed)
    assert "decoders.image_random_crop" in ops and "resize" in ops
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", [2, 9, 77])
def test_image_crop_then_resize_is_fused_with_identical_pixels(files: list[str], seed: int) -> None:
    fused, ops = run(files, resize_then_cmn, False, seed, fixed_window)
    assert ops == [
        "readers.file",
        "random.uniform",
        "random.coin_flip",
        "decoders._image_crop_resize",
    ]
    plain, ops = run(files, resize_then_cmn, True, seed, fixed_window)
    assert "decoders.image_crop" in ops and "resize" in ops
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", [3, 8])
@pytest.mark.parametrize("window", [relative_slice, absolute_slice, trimmed_slice])
@pytest.mark.parametrize(
    ("follow", "last"),
    [(resize_then_cmn, []), (resize_then_cropping_cmn, ["crop_mirror_normalize"])],
)
def test_image_slice_then_resize_is_fused_with_identical_pixels(
    files: list[str], window, follow, last: list[str], seed: int
) -> None:
    fused, ops = run(files, follow, False, seed, window)
    assert ops[-1 - len(last) :] == ["decoders._image_slice_resize", *last]
    assert "decoders.image_slice" not in ops and "resize" not in ops
    plain, ops = run(files, follow, True, seed, window)
    assert "decoders.image_slice" in ops and "resize" in ops
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)


def test_padding_image_slice_is_not_fused_and_pads(files: list[str]) -> None:
    def padded(jpegs):
        return fn.decoders.image_slice(
            jpegs, rel_start=(0.5, -0.5), rel_shape=(1.0, 1.0), out_of_bounds_policy="pad"
        )

    out, ops = run(files, resize_shorter, False, 4, padded)
    assert "decoders.image_slice" in ops and "resize" in ops
    assert all(image.shape[2] == 3 for image in out)


def test_channel_slicing_image_slice_is_not_fused(files: list[str]) -> None:
    def channels(jpegs):
        return fn.decoders.image_slice(jpegs, start=(1,), end=(3,), axis_names="C")

    out, ops = run(files, resize_shorter, False, 4, channels)
    assert "decoders.image_slice" in ops and "resize" in ops
    assert all(image.shape[2] == 2 for image in out)


def test_fused_image_slice_outside_the_image_is_still_an_error(files: list[str]) -> None:
    def too_big(jpegs):
        return fn.decoders.image_slice(jpegs, start=(0, 0), shape=(10, 500))

    with pytest.raises(OperatorError, match="The cropping window .* is not valid for image"):
        run(files, resize_then_cmn, False, 1, too_big)


def test_fused_image_crop_outside_the_image_is_still_an_error(files: list[str]) -> None:
    def too_big(jpegs):
        return fn.decoders.image_crop(jpegs, crop=(500, 10))

    with pytest.raises(OperatorError, match="The cropping window .* is not valid for image"):
        run(files, resize_then_cmn, False, 1, too_big)


def test_real_photos_random_crop_fused_equals_unfused() -> None:
    paths = [str(p) for p in sample_jpegs(8)]
    fused, _ = run(paths, resize_then_cmn, keep_window=False, seed=3)
    plain, _ = run(paths, resize_then_cmn, keep_window=True, seed=3)
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)


def test_random_crop_with_two_readers_is_not_fused(files: list[str]) -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        window = fn.decoders.image_random_crop(jpegs)
        return fn.resize(window, size=(20, 20)), fn.resize(window, size=(10, 10))

    p = pipe()
    p.build()
    ops = [op.schema.name for op in p._built_ops]
    assert FUSED not in ops and "decoders.image_random_crop" in ops


def test_non_uint8_resize_is_not_fused(files: list[str]) -> None:
    _, ops = run(
        files, lambda w: fn.resize(w, size=(20, 20), dtype=types.FLOAT), keep_window=False, seed=1
    )
    assert FUSED not in ops and "decoders.image_random_crop" in ops


def test_fused_random_crop_decodes_in_one_compiled_call(
    files: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JPEGs of the fused spelling take the compiled decode-resample-normalise path."""
    from feedline.operators.cpu.image import codecs
    from feedline.operators.native import JPEG_LIBRARY

    if JPEG_LIBRARY.try_load() is None:
        pytest.skip("the region JPEG decoder is not built here")
    calls = []
    original = codecs.JpegCodec.decode_resampled

    def counting(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        calls.append(result)
        return result

    monkeypatch.setattr(codecs.JpegCodec, "decode_resampled", counting)
    run(files[:5], resize_then_cmn, keep_window=False, seed=5)
    assert len(calls) >= 10 and all(calls)  # prefetching may have started the next batch


@pytest.mark.parametrize(
    ("window", "follow"),
    [
        (random_window, resize_then_cmn),
        (random_window, resize_shorter),
        (fixed_window, resize_then_cmn),
        (relative_slice, resize_then_cropping_cmn),
    ],
)
def test_fused_spellings_without_the_region_decoder_keep_the_pixels(
    files: list[str], window, follow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the compiled region decoder is missing (no libjpeg headers), the fused operators
    decode the whole file and resample its window: still the unfused graph's pixels."""
    from feedline.operators.cpu.image import codecs

    paths = [*files, *(str(p) for p in sample_jpegs(4))]
    monkeypatch.setattr(codecs.JpegCodec, "decode_resampled", lambda *args, **kwargs: False)
    fused, ops = run(paths, follow, False, 6, window)
    assert any(name.startswith("decoders._image_") for name in ops)
    plain, _ = run(paths, follow, True, 6, window)
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)
