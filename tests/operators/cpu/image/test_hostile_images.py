"""Hostile images: decompression bombs under ``max_pixels`` are refused before anything large is
allocated (measured as the peak resident memory of a fresh process), ``max_decoded_bytes`` limits
every decoder, real photos still decode, and decode errors name the user's decoder."""

from __future__ import annotations

import io
import json
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from feedline import fn, pipeline_def
from feedline.operators.cpu.image.limits import (
    check_jpeg_entropy,
    entropy_floor_bits,
    jpeg_layout,
)
from tests.conftest import SHARED_DATA, sample_jpegs

MB = 1 << 20


def forged_jpeg(height: int, width: int, progressive: bool = False) -> bytes:
    """A tiny real JPEG whose frame header is rewritten to declare ``height`` × ``width``."""
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (10, 200, 30)).save(buf, "JPEG", progressive=progressive)
    data = bytearray(buf.getvalue())
    sof = data.index(b"\xff\xc2" if progressive else b"\xff\xc0")
    data[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def zero_png(side: int) -> bytes:
    """A valid 8-bit RGB PNG of ``side`` × ``side`` black pixels, compressed row by row (so that
    the test never holds the decoded image): about 0.49 MB for 13000²."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body).to_bytes(4, "big")
        return len(body).to_bytes(4, "big") + kind + body + crc

    packer = zlib.compressobj(9)
    row = bytes(1 + 3 * side)
    idat = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def photo_jpeg(height: int, width: int) -> bytes:
    """A photo-like JPEG: a gradient with noise (quality 90)."""
    rng = np.random.default_rng(7)
    ramp = np.linspace(0, 200, width, dtype=np.float32)[None, :, None]
    noise = rng.integers(0, 56, (height, width, 3), dtype=np.uint8)
    pixels = (noise + ramp).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "JPEG", quality=90)
    return buf.getvalue()


_CHILD = """
import json, sys
from feedline import fn, pipeline_def, types
files, batch, graph = sys.argv[1].split(","), int(sys.argv[2]), sys.argv[3]
kwargs = json.loads(sys.argv[4])
if "output_type" in kwargs:
    kwargs["output_type"] = types.ImageType[kwargs["output_type"]]

@pipeline_def(batch_size=batch, num_threads=2, device_id=None, seed=1, prefetch_queue_depth=1)
def pipe():
    data, _ = fn.readers.file(files=files)
    if graph == "image":
        return fn.decoders.image(data, **kwargs)
    if graph == "resize":
        return fn.resize(fn.decoders.image(data, **kwargs), size=(64, 64))
    if graph == "rrc":
        return fn.random_resized_crop(fn.decoders.image(data, **kwargs), size=(64, 64))
    if graph == "crop":
        return fn.decoders.image_crop(data, crop=(32, 32), **kwargs)
    return fn.decoders.image_random_crop(data, **kwargs)

p = pipe()
error, shape = None, None
try:
    p.build()
    (out,) = p.run()
    shape = list(out.as_array().shape) if batch > 1 else list(out.shape()[0])
except Exception as exc:
    error = str(exc)
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent through fork and exec, so
# a test process that has grown would be counted as the child's peak.
with open("/proc/self/status") as status:
    rss = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) * 1024
print(json.dumps({"error": error, "shape": shape, "peak_rss": rss}))
"""


def run_fresh(files: list[Path], batch: int, graph: str = "image", **kwargs: Any) -> dict:
    """Run a decoding pipeline over ``files`` in a fresh Python process; its result and peak
    resident memory in bytes."""
    names = ",".join(map(str, files))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, names, str(batch), graph, json.dumps(kwargs)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    assert lines, (
        f"the child process printed nothing (exit status {done.returncode}): {done.stderr}"
    )
    result = json.loads(lines[-1])
    result["returncode"] = done.returncode
    return result


@pytest.mark.parametrize("graph", ["image", "resize", "rrc", "crop", "random_crop"])
def test_tiny_jpegs_declaring_huge_images_are_refused_within_300_mb(
    tmp_path: Path, graph: str
) -> None:
    """13000² (507 MB decoded) is above the default ``max_decoded_bytes``; 9000² (243 MB) is
    below it and refused because 633 bytes cannot hold it."""
    files = {}
    for side in (13000, 9000):
        files[side] = tmp_path / f"bomb{side}.jpg"
        files[side].write_bytes(forged_jpeg(side, side))
        assert len(files[side].read_bytes()) < 1000
    for batch, cause in (
        ([files[13000], files[9000]], "max_decoded_bytes|decompression bomb"),
        ([files[9000], files[9000]], "decompression bomb"),
    ):
        result = run_fresh(batch, 2, graph)
        assert result["error"] is not None and re.search(cause, result["error"]), result
        assert re.search(r"bomb(13000|9000)\.jpg", result["error"])
        assert re.search(r" (13000|9000)x(13000|9000)", result["error"])
        assert result["peak_rss"] < 300 * MB, result


def test_png_bomb_is_refused_by_the_default_decoded_bytes_limit(tmp_path: Path) -> None:
    path = tmp_path / "zeros13000.png"
    path.write_bytes(zero_png(13000))
    assert path.stat().st_size < 600_000
    result = run_fresh([path], 1)
    assert result["error"] is not None, result
    for part in ("zeros13000.png", "13000x13000x3", "max_decoded_bytes"):
        assert part in result["error"]
    assert result["peak_rss"] < 900 * MB, result


_GROWTH_CHILD = """
import json, sys
from feedline import fn, pipeline_def, types
warm, big, graph, output_type = sys.argv[1:5]

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key)) * 1024

@pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1, prefetch_queue_depth=1)
def pipe():
    data, _ = fn.readers.file(files=[warm, big])
    images = fn.decoders.image(data, output_type=types.ImageType[output_type])
    return fn.resize(images, size=(64, 64)) if graph == "resize" else images

p = pipe()
p.build()
p.run()
before = status("VmRSS")
(out,) = p.run()
print(json.dumps({"shape": list(out.shape()[0]), "growth": status("VmHWM") - before}))
"""


def peak_growth(warm: Path, big: Path, graph: str, output_type: str) -> dict:
    """In a fresh process that has decoded ``warm`` once (imports and pools settled), how far
    decoding ``big`` raises the peak resident memory above the memory in use before it, in
    bytes (VmHWM, the process's own peak, as in :data:`_CHILD`)."""
    args = [str(warm), str(big), graph, output_type]
    done = subprocess.run(
        [sys.executable, "-c", _GROWTH_CHILD, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("fmt", "mode", "output_type", "channels"),
    [
        ("png", "RGB", "RGB", 3),
        ("png", "RGBA", "ANY_DATA", 4),
        ("png", "L", "GRAY", 1),
        ("png", "P", "RGB", 3),
        ("webp", "RGB", "RGB", 3),
        ("webp", "RGBA", "ANY_DATA", 4),
    ],
)
@pytest.mark.parametrize("graph", ["image", "resize"])
def test_an_image_holds_at_most_one_and_a_half_times_its_decoded_size(
    tmp_path: Path, fmt: str, mode: str, output_type: str, channels: int, graph: str
) -> None:
    """A 3000² PNG or WebP (9 to 36 MB decoded): Pillow decodes PNG into the output's own
    buffer, so the peak is the larger of Pillow's pixels (4 bytes each for RGB) and the output,
    not both; libwebp decodes a lossy WebP into the output (with alpha, 2.25× through Pillow's
    5.4×). The decoder fused with ``resize`` decodes the same way. At batch 1 the plain
    decoder's output batch is its one sample with a batch axis, not a stacked copy of it."""
    warm, big = tmp_path / f"warm.{fmt}", tmp_path / f"big.{fmt}"
    Image.new(mode, (32, 32)).save(warm)
    ramp = np.linspace(0, 255, 3000, dtype=np.uint8)
    pixels = np.broadcast_to(ramp[None, :, None], (3000, 3000, 3))
    image = Image.fromarray(np.ascontiguousarray(pixels)).convert(mode)
    if mode == "RGBA":  # an alpha that is not all opaque, which WebP would drop
        image.putalpha(Image.fromarray(np.ascontiguousarray(pixels[:, ::-1, 0])))
    options = {"compress_level": 1} if fmt == "png" else {"quality": 80}
    image.save(big, **options)
    decoded = 3000 * 3000 * channels
    result = peak_growth(warm, big, graph, output_type)
    assert result["shape"] == ([64, 64, channels] if graph == "resize" else [3000, 3000, channels])
    # libwebp decodes an alpha plane (and a lossless image) through 4 bytes a pixel of its own.
    factor = 2.5 if fmt == "webp" and mode == "RGBA" else 1.5
    assert result["growth"] < factor * decoded, (result, decoded)


@pytest.mark.parametrize(
    ("graph", "shape"), [("resize", [64, 64, 3]), ("image", [13000] * 2 + [3])]
)
def test_the_13000_square_png_decodes_within_900_mb_when_its_limit_is_raised(
    tmp_path: Path, graph: str, shape: list[int]
) -> None:
    """507 MB of pixels: Pillow's 676 MB (4 bytes a pixel), converted in place, is the peak,
    whether resized or returned whole (at batch 1 the output batch is no second copy)."""
    path = tmp_path / "zeros13000.png"
    path.write_bytes(zero_png(13000))
    result = run_fresh([path], 1, graph, max_decoded_bytes=1 << 30)
    assert result["error"] is None and result["shape"] == shape, result
    assert result["peak_rss"] < 900 * MB, result


def test_a_real_12_megapixel_photo_still_decodes(tmp_path: Path) -> None:
    path = tmp_path / "photo.jpg"
    path.write_bytes(photo_jpeg(3000, 4000))
    check_jpeg_entropy(path.read_bytes())
    assert run_fresh([path], 1)["shape"] == [3000, 4000, 3]
    assert run_fresh([path], 1, "resize")["shape"] == [64, 64, 3]


def _real_jpegs() -> list[Path]:
    found = list(sample_jpegs())
    if SHARED_DATA.exists():
        found += sorted(SHARED_DATA.rglob("*.jpg"))
    return found


def test_no_real_jpeg_is_refused() -> None:
    files = _real_jpegs()
    assert files
    for path in files:
        data = path.read_bytes()
        check_jpeg_entropy(data)
        layout = jpeg_layout(data)
        assert layout is not None and 0 < entropy_floor_bits(layout) / 8 < len(data), path


@pytest.mark.parametrize("progressive", [False, True])
@pytest.mark.parametrize("side", [16, 64, 333, 1024])
def test_real_jpegs_of_any_size_and_process_pass(side: int, progressive: bool) -> None:
    """Flat images give the smallest honest files: they still hold their floor."""
    for value in (0, 128, 255):
        buf = io.BytesIO()
        Image.new("RGB", (side, side), (value,) * 3).save(
            buf, "JPEG", quality=5, progressive=progressive, optimize=True
        )
        check_jpeg_entropy(buf.getvalue())


@pytest.mark.parametrize("progressive", [False, True])
def test_forged_size_is_refused_from_the_header(progressive: bool) -> None:
    with pytest.raises(ValueError, match=r"declares 9000x9000 .* decompression bomb"):
        check_jpeg_entropy(forged_jpeg(9000, 9000, progressive))


def _one(path: Path, graph: Any) -> Any:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=3, prefetch_queue_depth=1)
    def pipe() -> Any:
        data, _ = fn.readers.file(files=[str(path)])
        return graph(data)

    p = pipe()
    p.build()
    (out,) = p.run()
    return np.asarray(out.at(0))


GRAPHS = {
    "image": lambda d, **kw: fn.decoders.image(d, **kw),
    "image_crop": lambda d, **kw: fn.decoders.image_crop(d, crop=(4, 4), **kw),
    "image_random_crop": lambda d, **kw: fn.decoders.image_random_crop(d, **kw),
    "image+resize": lambda d, **kw: fn.resize(fn.decoders.image(d, **kw), size=(8, 8)),
    "image+rrc": lambda d, **kw: fn.random_resized_crop(fn.decoders.image(d, **kw), size=(8, 8)),
    "peek_image_shape": lambda d, **kw: fn.peek_image_shape(d, **kw),
}


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
@pytest.mark.parametrize("name", list(GRAPHS))
def test_max_decoded_bytes_is_each_operators_own(tmp_path: Path, fmt: str, name: str) -> None:
    path = tmp_path / f"small.{fmt.lower()}"
    Image.new("RGB", (100, 50), (1, 2, 3)).save(path, fmt)
    graph = GRAPHS[name]
    assert _one(path, lambda d: graph(d, max_decoded_bytes=15_000)).size > 0
    with pytest.raises(Exception, match=r"small\..*100x50x3 .*max_decoded_bytes=14999"):
        _one(path, lambda d: graph(d, max_decoded_bytes=14_999))


def test_max_decoded_bytes_must_be_positive(tmp_path: Path) -> None:
    path = tmp_path / "small.png"
    Image.new("RGB", (4, 4)).save(path)
    with pytest.raises(Exception, match="max_decoded_bytes must be a positive number"):
        _one(path, lambda d: fn.decoders.image(d, max_decoded_bytes=0))


@pytest.mark.parametrize("name", [n for n in GRAPHS if n != "peek_image_shape"])
def test_decode_errors_name_the_users_decoder(tmp_path: Path, name: str) -> None:
    path = tmp_path / "empty.jpg"
    path.write_bytes(b"")
    with pytest.raises(Exception) as info:
        _one(path, GRAPHS[name])
    message = str(info.value)
    assert "empty.jpg" in message
    cause = message.split("): ", 1)[1].removeprefix("ValueError: ")
    assert cause.startswith("decoders.image"), message
    assert "resize:" not in message and "random_resized_crop:" not in message


def _with_pipeline_limit(path: Path, limit: int, graph: Any) -> Any:
    @pipeline_def(
        batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1, max_decoded_bytes=limit
    )
    def pipe() -> Any:
        data, _ = fn.readers.file(files=[str(path)])
        return graph(data)

    p = pipe()
    assert p.max_decoded_bytes == limit
    p.build()
    (out,) = p.run()
    return np.asarray(out.at(0))


@pytest.mark.parametrize("name", ["image", "image+resize", "image_crop"])
def test_the_pipeline_sets_the_default_max_decoded_bytes(tmp_path: Path, name: str) -> None:
    path = tmp_path / "small.png"
    Image.new("RGB", (100, 50)).save(path)
    graph = GRAPHS[name]
    assert _with_pipeline_limit(path, 15_000, graph).size > 0
    with pytest.raises(Exception, match=r"small\.png.*100x50x3 .*max_decoded_bytes=14999"):
        _with_pipeline_limit(path, 14_999, graph)
    own = _with_pipeline_limit(path, 14_999, lambda d: graph(d, max_decoded_bytes=15_000))
    assert own.size > 0


def test_the_pipelines_max_decoded_bytes_is_checked() -> None:
    from feedline import Pipeline

    with pytest.raises(ValueError, match="max_decoded_bytes must be at least 1"):
        Pipeline(batch_size=1, max_decoded_bytes=0)


_SMALL_JPEG = forged_jpeg(16, 16)


@settings(max_examples=200, deadline=None)
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(_SMALL_JPEG) - 1), st.integers(0, 255)), max_size=8
    ),
    cut=st.integers(2, len(_SMALL_JPEG)),
)
def test_the_header_walk_survives_any_damage(edits: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(_SMALL_JPEG[:cut])
    for at, value in edits:
        if at < len(data):
            data[at] = value
    try:
        check_jpeg_entropy(bytes(data))
    except ValueError as exc:
        assert "decompression bomb" in str(exc)
