"""The decode-fusion graph pass: what it rewrites, what it leaves, and identical outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from feedline import fn, pipeline_def, types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.image import codecs
from feedline.operators.cpu.image.windows import resize_plan
from feedline.operators.native import JPEG_LIBRARY
from tests.conftest import sample_jpegs
from tests.operators.cpu.image_ops_testing import (
    PIL_TOLERANCE,
    dali_round,
    encode,
    pil_decode,
    reference_resize,
    use_image_plugins,
)
from tests.operators.cpu.image_samples import generated_image

RNG = np.random.default_rng(29)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)


@pytest.fixture(scope="module")
def jpeg_files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("jpegs")
    files = []
    for index, (h, w) in enumerate([(120, 90), (75, 140), (200, 160), (64, 64), (90, 300)]):
        path = root / f"{index}.jpg"
        path.write_bytes(encode(generated_image(RNG, h, w), "JPEG", quality=90).tobytes())
        files.append(str(path))
    return files


@pytest.fixture(scope="module")
def rotated_jpeg(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A JPEG with EXIF orientation 6 (the fused decoders take their general path)."""
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path_factory.mktemp("rotated") / "rotated.jpg"
    path.write_bytes(encode(generated_image(RNG, 70, 50), "JPEG", exif=exif.tobytes()).tobytes())
    return str(path)


def run(
    files: list[str], follow, keep_decoded: bool, batch: int = 5, **decode_args
) -> tuple[list, list[str]]:
    """Run reader → decoder → ``follow``; also output the decoded images to block fusion."""

    @pipeline_def(batch_size=batch, num_threads=2, device_id=None, seed=42)
    def pipe():
        jpegs, _ = fn.readers.file(files=files)
        decoded = fn.decoders.image(jpegs, **decode_args)
        result = follow(decoded)
        return (result, decoded) if keep_decoded else result

    p = pipe()
    p.build()
    outputs = p.run()
    first = outputs[0]
    return [first.at(i) for i in range(len(first))], [op.schema.name for op in p._built_ops]


def rrc_then_cmn(images):
    images = fn.random_resized_crop(images, size=(48, 40))
    return fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), dtype=types.FLOAT)


def resize_then_cmn(images):
    images = fn.resize(images, resize_shorter=56)
    return fn.crop_mirror_normalize(images, crop=(48, 40), crop_pos_x=0.3, dtype=types.FLOAT)


def test_random_resized_crop_fusion_gives_identical_outputs(jpeg_files: list[str]) -> None:
    fused, ops = run(jpeg_files, rrc_then_cmn, keep_decoded=False)
    assert ops == ["readers.file", "random.coin_flip", "decoders._image_random_resized_crop"]
    plain, ops = run(jpeg_files, rrc_then_cmn, keep_decoded=True)
    assert "decoders.image" in ops and "random_resized_crop" in ops
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)


def test_resize_fusion_moves_the_crop_into_the_resize(jpeg_files: list[str]) -> None:
    fused, ops = run(jpeg_files, resize_then_cmn, keep_decoded=False)
    assert ops == ["readers.file", "decoders._image_resize"]
    plain, _ = run(jpeg_files, resize_then_cmn, keep_decoded=True)
    for path, a, b in zip(jpeg_files, fused, plain, strict=True):
        image = pil_decode(np.fromfile(path, dtype=np.uint8))
        size, ((y0, y1), (x0, x1)) = resize_plan("resize", image.shape[:2], {"resize_shorter": 56})
        top, left = dali_round(0.5 * (size[0] - 48)), dali_round(0.3 * (size[1] - 40))
        sy, sx = (y1 - y0) / size[0], (x1 - x0) / size[1]
        exact = reference_resize(
            image,
            48,
            40,
            (y0 + top * sy, y0 + (top + 48) * sy),
            (x0 + left * sx, x0 + (left + 40) * sx),
        ).transpose(2, 0, 1)
        assert a.shape == b.shape == (3, 48, 40)
        assert np.abs(a - exact).max() <= PIL_TOLERANCE
        assert np.abs(b - exact).max() <= PIL_TOLERANCE


def stretch(images):
    """Heights grow and widths shrink: each axis takes a different filter."""
    return fn.resize(
        images, resize_y=240, resize_x=24, min_filter=types.INTERP_NN, mag_filter=types.INTERP_CUBIC
    )


def stretch_then_cmn(images):
    return fn.crop_mirror_normalize(stretch(images), dtype=types.FLOAT)


@pytest.mark.parametrize("follow", [stretch, stretch_then_cmn])
def test_fused_decoder_picks_each_axis_filter_as_resize_does(jpeg_files: list[str], follow) -> None:
    fused, ops = run(jpeg_files, follow, keep_decoded=False)
    assert ops == ["readers.file", "decoders._image_resize"]
    plain, ops = run(jpeg_files, follow, keep_decoded=True)
    assert "resize" in ops
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)


def _uniform_mean(images):
    images = fn.random_resized_crop(images, size=(30, 20))
    mean = fn.random.uniform(range=(0.0, 128.0), shape=(3,))
    return fn.crop_mirror_normalize(images, mean=mean, std=(50.0, 60.0, 70.0), mirror=1)


def _padded_hwc(images):
    images = fn.resize(images, size=(33, 21))
    return fn.crop_mirror_normalize(
        images, output_layout="HWC", pad_output=True, fill_values=(-2.0,), scale=0.5, shift=3.0
    )


def _gray(images):
    return fn.crop_mirror_normalize(
        fn.random_resized_crop(images, size=(24, 24)), mean=(100.0,), std=(40.0,)
    )


def _half(images):
    return fn.crop_mirror_normalize(
        fn.resize(images, resize_shorter=30), mean=(1.0, 2.0, 3.0), dtype=types.FLOAT16
    )


def _bytes_whc(images):
    return fn.crop_mirror_normalize(
        fn.random_resized_crop(images, size=(20, 30)),
        mirror=fn.random.coin_flip(),
        dtype=types.UINT8,
        output_layout="WHC",
    )


@pytest.mark.parametrize("follow", [_uniform_mean, _padded_hwc, _gray, _half, _bytes_whc])
def test_normalize_is_folded_into_the_fused_decoder(
    jpeg_files: list[str], rotated_jpeg: str, follow
) -> None:
    files = [*jpeg_files, rotated_jpeg]
    decode = {"output_type": types.GRAY} if follow is _gray else {}
    fused, ops = run(files, follow, keep_decoded=False, batch=6, **decode)
    assert "crop_mirror_normalize" not in ops and "decoders.image" not in ops
    plain, ops = run(files, follow, keep_decoded=True, batch=6, **decode)
    assert "crop_mirror_normalize" in ops
    for a, b in zip(fused, plain, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_folded_normalize_runs_in_the_decoders_compiled_call(
    jpeg_files: list[str], rotated_jpeg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if JPEG_LIBRARY.try_load() is None:
        pytest.skip("feedline's region JPEG decoder cannot be built here")
    calls = []
    original = codecs.decode_jpeg_resampled

    def spy(data, *args):
        calls.append((len(data), args[-1] is not None))
        return original(data, *args)

    monkeypatch.setattr(codecs, "decode_jpeg_resampled", spy)
    run([*jpeg_files, rotated_jpeg], rrc_then_cmn, keep_decoded=False, batch=6)
    sizes = {Path(f).stat().st_size for f in jpeg_files}
    # Every upright file is decoded, resampled and normalised in the one call; the rotated one
    # takes the general path.
    assert {size for size, _ in calls} == sizes
    assert all(normalized for _, normalized in calls)


def test_normalize_reading_a_shared_output_is_not_folded(jpeg_files: list[str]) -> None:
    def shared(images):
        resized = fn.random_resized_crop(images, size=(20, 20))
        fn.crop_mirror_normalize(resized, preserve=True)
        return fn.crop_mirror_normalize(resized)

    _, ops = run(jpeg_files, shared, keep_decoded=False)
    assert ops.count("crop_mirror_normalize") == 2


def test_folded_normalize_checks_its_arguments(jpeg_files: list[str]) -> None:
    def bad_dtype(images):
        images = fn.random_resized_crop(images, size=(20, 20))
        return fn.crop_mirror_normalize(images, dtype=types.UINT16)

    def zero_std(images):
        return fn.crop_mirror_normalize(fn.resize(images, size=(9, 9)), std=(1.0, 0.0, 1.0))

    with pytest.raises(TypeError, match="crop_mirror_normalize: argument 'dtype' = UINT16"):
        run(jpeg_files, bad_dtype, keep_decoded=False)
    with pytest.raises(OperatorError, match=r"\d\.jpg.*'std' must not contain zeros"):
        run(jpeg_files, zero_std, keep_decoded=False)


def test_crop_fusion_becomes_image_crop(jpeg_files: list[str]) -> None:
    def crop(images):
        return fn.crop(images, crop=(30, 20), crop_pos_y=0.1)

    fused, ops = run(jpeg_files, crop, keep_decoded=False)
    assert ops == ["readers.file", "decoders.image_crop"]
    plain, _ = run(jpeg_files, crop, keep_decoded=True)
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)


def test_crop_with_padding_is_not_fused(jpeg_files: list[str]) -> None:
    def crop(images):
        return fn.crop(images, crop=(30, 20), out_of_bounds_policy="pad")

    _, ops = run(jpeg_files, crop, keep_decoded=False)
    assert ops == ["readers.file", "decoders.image", "crop"]


def test_resize_with_two_readers_is_not_fused(jpeg_files: list[str]) -> None:
    def two(images):
        fn.resize(images, size=(10, 10), preserve=True)
        return fn.resize(images, size=(20, 20))

    _, ops = run(jpeg_files, two, keep_decoded=False)
    assert ops.count("resize") == 2 and "decoders.image" in ops


def test_real_photos_fused_equals_unfused() -> None:
    files = [str(p) for p in sample_jpegs(8)]
    fused, _ = run(files, rrc_then_cmn, keep_decoded=False, batch=8)
    plain, _ = run(files, rrc_then_cmn, keep_decoded=True, batch=8)
    for a, b in zip(fused, plain, strict=True):
        np.testing.assert_array_equal(a, b)


def test_fused_decode_errors_still_name_the_file(jpeg_files: list[str], tmp_path: Path) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(Path(jpeg_files[0]).read_bytes()[:300])
    with pytest.raises(OperatorError, match=r"broken\.jpg.*(corrupt|truncated)"):
        run([jpeg_files[1], str(broken)], rrc_then_cmn, keep_decoded=False, batch=2)


def test_moved_crop_out_of_bounds_is_still_an_error(jpeg_files: list[str]) -> None:
    def too_big(images):
        images = fn.resize(images, size=(30, 30))
        return fn.crop_mirror_normalize(images, crop=(40, 10))

    with pytest.raises(OperatorError, match="outside the resized extent"):
        run(jpeg_files, too_big, keep_decoded=False)
