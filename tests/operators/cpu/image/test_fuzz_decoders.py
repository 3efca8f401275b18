"""Fuzzing the image decoders and the readers with damaged and hostile files.

A seeded corpus (well over 1,000 files, generated here: truncations, bit flips, zero-length,
huge dimensions, wrong extensions, CMYK, progressive and grey JPEGs, 16-bit and palette PNGs,
animated GIF and WebP, BMP, TIFF) goes through ``decoders.image`` and the crop decoders in real
pipelines; hypothesis adds random damage on top. Every file either decodes to a sane image or
raises an error that names the file — no crash, no hang, and memory stays bounded (a header that
claims 60000 × 60000 pixels is refused before anything is allocated).
"""

from __future__ import annotations

import functools
import io
import json
import resource
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from feedline import CorruptDataWarning, fn, pipeline_def

#: Recoverable damage is decoded and warned about (tests below check the warning itself).
pytestmark = pytest.mark.filterwarnings("ignore::feedline.CorruptDataWarning")

SEED = 20261125
#: Peak RSS growth allowed over the whole corpus (a 60000² RGB image alone would be 10 GiB).
MEMORY_BUDGET_MIB = 1024


def _encode(image: Image.Image, fmt: str, **params: Any) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt, **params)
    return buf.getvalue()


def _photo(rng: np.random.Generator, h: int = 48, w: int = 64) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([(x * 4 + y * c) % 256 for c in (1, 2, 3)], axis=-1)
    return np.clip(base + rng.normal(0, 10, base.shape), 0, 255).astype(np.uint8)


def _huge_jpeg(height: int, width: int) -> bytes:
    """A valid small JPEG whose frame header is rewritten to claim ``height`` × ``width``."""
    data = bytearray(_encode(Image.new("RGB", (16, 16), (90, 30, 200)), "JPEG"))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)


def _huge_png(height: int, width: int) -> bytes:
    """A PNG whose IHDR claims ``height`` × ``width`` (CRC fixed, so only the size is wrong)."""
    import zlib

    data = bytearray(_encode(Image.new("RGB", (8, 8)), "PNG"))
    ihdr = data.index(b"IHDR")
    data[ihdr + 4 : ihdr + 12] = width.to_bytes(4, "big") + height.to_bytes(4, "big")
    data[ihdr + 17 : ihdr + 21] = zlib.crc32(bytes(data[ihdr : ihdr + 17])).to_bytes(4, "big")
    return bytes(data)


@functools.cache
def base_images() -> dict[str, bytes]:
    """One valid file of every kind the corpus damages (name → bytes; the suffix is the kind)."""
    rng = np.random.default_rng(SEED)
    rgb = Image.fromarray(_photo(rng))
    frames = [Image.fromarray(_photo(rng)) for _ in range(3)]
    return {
        "baseline.jpg": _encode(rgb, "JPEG", quality=90),
        "progressive.jpg": _encode(rgb, "JPEG", progressive=True),
        "grey.jpg": _encode(rgb.convert("L"), "JPEG"),
        "cmyk.jpg": _encode(rgb.convert("CMYK"), "JPEG"),
        "exif.jpg": _encode(rgb, "JPEG", exif=_rotated_exif()),
        "rgb.png": _encode(rgb, "PNG"),
        "rgba.png": _encode(rgb.convert("RGBA"), "PNG"),
        "palette.png": _encode(rgb.convert("P"), "PNG"),
        "sixteen.png": _encode(Image.fromarray(_photo(rng)[..., 0].astype(np.uint16) * 257), "PNG"),
        "animated.gif": _encode(frames[0], "GIF", save_all=True, append_images=frames[1:]),
        "animated.webp": _encode(frames[0], "WEBP", save_all=True, append_images=frames[1:]),
        "rgb.bmp": _encode(rgb, "BMP"),
        "rgb.tiff": _encode(rgb, "TIFF"),
    }


def _rotated_exif() -> bytes:
    exif = Image.Exif()
    exif[0x0112] = 6
    return exif.tobytes()


def corpus() -> dict[str, bytes]:
    """The seeded corpus: every base file, whole, truncated at many lengths, bit-flipped many
    times, renamed to another extension; plus empty, garbage and huge-dimension files."""
    rng = np.random.default_rng(SEED)
    files: dict[str, bytes] = {"empty.jpg": b"", "garbage.jpg": rng.bytes(300)}
    for size in ((60000, 60000), (1, 65535), (65535, 65535)):
        files[f"huge_{size[0]}x{size[1]}.jpg"] = _huge_jpeg(*size)
    files["huge_100000x100000.png"] = _huge_png(100_000, 100_000)
    for name, data in base_images().items():
        stem, suffix = name.rsplit(".", 1)
        files[name] = data
        files[f"{stem}_as.{'png' if suffix != 'png' else 'jpg'}"] = data
        for cut in sorted({int(c) for c in rng.integers(0, len(data), 30)}):
            files[f"{stem}_cut{cut}.{suffix}"] = data[:cut]
        for i in range(50):
            flipped = bytearray(data)
            for pos in rng.integers(0, len(data), int(rng.integers(1, 4))):
                flipped[pos] ^= 1 << int(rng.integers(0, 8))
            files[f"{stem}_flip{i}.{suffix}"] = bytes(flipped)
    return files


DecoderGraph = Callable[[Any], Any]
DECODERS: dict[str, DecoderGraph] = {
    "image": lambda jpegs: fn.decoders.image(jpegs),
    "image+random_resized_crop": lambda jpegs: fn.random_resized_crop(
        fn.decoders.image(jpegs), size=(24, 24)
    ),
    "image_crop": lambda jpegs: fn.decoders.image_crop(jpegs, crop=(8, 8)),
    "image_random_crop": lambda jpegs: fn.decoders.image_random_crop(jpegs),
    "image_slice": lambda jpegs: fn.decoders.image_slice(
        jpegs, np.array([0.1, 0.1], np.float32), np.array([0.5, 0.5], np.float32)
    ),
}


def decode_one(path: Path, decoder: str) -> np.ndarray | Exception:
    """Decode one file in its own pipeline: the image, or the exception it raised."""

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1, prefetch_queue_depth=1)
    def graph() -> Any:
        jpegs, _ = fn.readers.file(files=[str(path)])
        return DECODERS[decoder](jpegs)

    pipe = graph()
    try:
        pipe.build()
        (out,) = pipe.run()
        return np.asarray(out.at(0))
    except Exception as exc:
        return exc
    finally:
        pipe.close()


def check_outcome(path: Path, outcome: np.ndarray | Exception) -> None:
    """A sane image, or an error whose message names the file."""
    if isinstance(outcome, Exception):
        assert str(path) in str(outcome), f"error does not name the file: {outcome!r}"
        return
    assert outcome.dtype == np.uint8 and outcome.ndim == 3 and outcome.shape[2] == 3
    assert 0 < outcome.shape[0] * outcome.shape[1] <= 70_000


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fuzz")
    for name, data in corpus().items():
        (folder / name).write_bytes(data)
    return folder


def test_corpus_is_large_and_covers_every_kind(corpus_dir: Path) -> None:
    names = [p.name for p in corpus_dir.iterdir()]
    assert len(names) >= 1000
    for kind in base_images():
        assert kind in names


@pytest.mark.slow
def test_every_corpus_file_decodes_or_names_itself(corpus_dir: Path) -> None:
    start = _peak_rss_mib()
    outcomes: dict[str, str] = {}
    paths = sorted(corpus_dir.iterdir())
    for i, path in enumerate(paths):
        decoder = list(DECODERS)[i % len(DECODERS)]
        outcome = decode_one(path, decoder)
        check_outcome(path, outcome)
        outcomes[path.name] = "ok" if isinstance(outcome, np.ndarray) else type(outcome).__name__
    grown = _peak_rss_mib() - start
    assert grown < MEMORY_BUDGET_MIB, f"peak RSS grew by {grown:.0f} MiB"
    # The valid files all decode, whichever decoder read them.
    assert all(outcomes[name] == "ok" for name in base_images()), json.dumps(outcomes)


@pytest.mark.parametrize("decoder", list(DECODERS))
@pytest.mark.parametrize("name", ["huge_60000x60000.jpg", "huge_100000x100000.png"])
def test_huge_dimensions_are_refused_with_the_size(
    corpus_dir: Path, decoder: str, name: str
) -> None:
    start = _peak_rss_mib()
    outcome = decode_one(corpus_dir / name, decoder)
    assert isinstance(outcome, Exception)
    message = str(outcome)
    assert str(corpus_dir / name) in message
    assert "pixels" in message
    assert _peak_rss_mib() - start < 200


@pytest.mark.parametrize("decoder", list(DECODERS))
def test_damage_is_judged_the_same_whatever_follows_the_decoder(
    corpus_dir: Path, decoder: str
) -> None:
    """A damaged file decodes under every decoder, or under none."""
    flipped = sorted(corpus_dir.glob("baseline_flip*.jpg"))
    whole = [isinstance(decode_one(p, "image"), np.ndarray) for p in flipped]
    other = [isinstance(decode_one(p, decoder), np.ndarray) for p in flipped]
    assert other == whole


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kind=st.sampled_from(sorted(base_images())),
    edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), max_size=8),
    cut=st.floats(0, 1),
    decoder=st.sampled_from(list(DECODERS)),
)
def test_random_damage(
    tmp_path: Path, kind: str, edits: list[tuple[float, int]], cut: float, decoder: str
) -> None:
    data = bytearray(base_images()[kind])
    for where, value in edits:
        data[int(where * len(data))] = value
    path = tmp_path / f"random_{kind}"
    path.write_bytes(bytes(data[: max(1, int(cut * len(data)))]))
    check_outcome(path, decode_one(path, decoder))


@pytest.mark.filterwarnings("default::feedline.CorruptDataWarning")
def test_recoverable_damage_is_a_warning_that_names_the_file(corpus_dir: Path) -> None:
    cut = corpus_dir / "truncated_baseline.jpg"
    data = base_images()["baseline.jpg"]
    cut.write_bytes(data[: len(data) * 2 // 3])
    for decoder in DECODERS:
        with pytest.warns(CorruptDataWarning, match=str(cut)):
            outcome = decode_one(cut, decoder)
        assert isinstance(outcome, np.ndarray), (decoder, outcome)


def test_the_lowest_failing_sample_is_reported_every_time(tmp_path: Path) -> None:
    good = base_images()["baseline.jpg"]
    names = ["0_good.jpg", "1_bad.jpg", "2_good.jpg", "3_bad.jpg", "4_bad.jpg", "5_good.jpg"]
    for name in names:
        (tmp_path / name).write_bytes(good if "good" in name else b"\xff\xd8\xff garbage")

    @pipeline_def(batch_size=6, num_threads=3, device_id=None, seed=1, prefetch_queue_depth=1)
    def graph() -> Any:
        jpegs, _ = fn.readers.file(files=[str(tmp_path / n) for n in names])
        return fn.decoders.image(jpegs)

    for _ in range(10):
        pipe = graph()
        with pytest.raises(Exception, match="1_bad.jpg") as info:
            pipe.build()
            pipe.run()
        assert "3_bad" not in str(info.value) and "4_bad" not in str(info.value)
        pipe.close()
