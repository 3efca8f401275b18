"""``max_pixels``: each decoder operator's own image size limit, checked from the header for every
format, through the plain and crop decoders, ``peek_image_shape`` and the fused decoders."""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from feedline import fn, pipeline_def

#: Every header in these tests claims 5000 × 5000 = 25 megapixels.
CLAIMED = 5000


def _encode(fmt: str, size: tuple[int, int] = (16, 12)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (90, 30, 200)).save(buf, fmt)
    return buf.getvalue()


def _claiming_jpeg(side: int) -> bytes:
    """A small JPEG whose frame header claims ``side`` × ``side`` pixels."""
    data = bytearray(_encode("JPEG"))
    sof = data.index(b"\xff\xc0")
    data[sof + 5 : sof + 9] = side.to_bytes(2, "big") * 2
    return bytes(data)


def _claiming_png(side: int) -> bytes:
    """A small PNG whose IHDR claims ``side`` × ``side`` pixels (CRC fixed)."""
    data = bytearray(_encode("PNG"))
    ihdr = data.index(b"IHDR")
    data[ihdr + 4 : ihdr + 12] = side.to_bytes(4, "big") * 2
    data[ihdr + 17 : ihdr + 21] = zlib.crc32(bytes(data[ihdr : ihdr + 17])).to_bytes(4, "big")
    return bytes(data)


FAKES = {"jpg": _claiming_jpeg, "png": _claiming_png}
#: Real 16 × 12 images (192 pixels).
REALS = {"jpg": "JPEG", "png": "PNG"}

DECODERS: dict[str, Callable[..., Any]] = {
    "image": lambda files, **kw: fn.decoders.image(files, **kw),
    "image_crop": lambda files, **kw: fn.decoders.image_crop(files, crop=(4, 4), **kw),
    "image_random_crop": lambda files, **kw: fn.decoders.image_random_crop(files, **kw),
    "image_slice": lambda files, **kw: fn.decoders.image_slice(
        files, np.array([0.1, 0.1], np.float32), np.array([0.5, 0.5], np.float32), **kw
    ),
    "image+resize": lambda files, **kw: fn.resize(fn.decoders.image(files, **kw), size=(8, 8)),
    "image+random_resized_crop": lambda files, **kw: fn.random_resized_crop(
        fn.decoders.image(files, **kw), size=(8, 8)
    ),
    "image+crop": lambda files, **kw: fn.crop(fn.decoders.image(files, **kw), crop=(4, 4)),
}


def run(path: Path, graph: Callable[..., Any], **kwargs: Any) -> tuple[Any, list[str]]:
    """The first output of a one-file pipeline (or the exception it raised) and its operators."""

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=3, prefetch_queue_depth=1)
    def pipe_def() -> Any:
        files, _ = fn.readers.file(files=[str(path)])
        return graph(files, **kwargs)

    pipe = pipe_def()
    try:
        pipe.build()
        ops = [op.schema.name for op in pipe._built_ops]
        (out,) = pipe.run()
        return np.asarray(out.at(0)), ops
    except Exception as exc:
        return exc, []
    finally:
        pipe.close()


@pytest.mark.parametrize("decoder", list(DECODERS))
@pytest.mark.parametrize("kind", list(FAKES))
def test_a_header_over_the_operator_limit_is_refused(
    tmp_path: Path, kind: str, decoder: str
) -> None:
    path = tmp_path / f"claims.{kind}"
    path.write_bytes(FAKES[kind](CLAIMED))
    outcome, _ = run(path, DECODERS[decoder], max_pixels=10_000_000)
    assert isinstance(outcome, Exception), outcome
    message = str(outcome)
    assert str(path) in message
    assert "5000x5000" in message and "max_pixels=10000000" in message


@pytest.mark.parametrize("decoder", list(DECODERS))
@pytest.mark.parametrize("kind", list(REALS))
def test_each_operator_applies_its_own_limit(tmp_path: Path, kind: str, decoder: str) -> None:
    path = tmp_path / f"small.{kind}"
    path.write_bytes(_encode(REALS[kind]))
    refused, _ = run(path, DECODERS[decoder], max_pixels=191)
    assert isinstance(refused, Exception) and str(path) in str(refused)
    assert "16x12" in str(refused) and "max_pixels=191" in str(refused)
    for limit in ({"max_pixels": 192}, {}):
        accepted, _ = run(path, DECODERS[decoder], **limit)
        assert isinstance(accepted, np.ndarray), accepted


def test_the_limit_survives_decode_fusion(tmp_path: Path) -> None:
    path = tmp_path / "small.jpg"
    path.write_bytes(_encode("JPEG"))
    image, ops = run(path, DECODERS["image+resize"], max_pixels=192)
    assert isinstance(image, np.ndarray) and ops[-1] == "decoders._image_resize"
    refused, _ = run(path, DECODERS["image+resize"], max_pixels=191)
    assert isinstance(refused, Exception) and "max_pixels=191" in str(refused)


@pytest.mark.parametrize("kind", list(FAKES))
def test_peek_image_shape_accepts_by_default_and_honours_the_limit(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / f"claims.{kind}"
    path.write_bytes(FAKES[kind](CLAIMED))
    shape, _ = run(path, fn.peek_image_shape)
    assert isinstance(shape, np.ndarray) and shape.tolist() == [CLAIMED, CLAIMED, 3]
    refused, _ = run(path, fn.peek_image_shape, max_pixels=10_000_000)
    assert isinstance(refused, Exception) and str(path) in str(refused)


@pytest.mark.parametrize("limit", [0, -5])
def test_a_limit_that_is_not_positive_is_rejected(tmp_path: Path, limit: int) -> None:
    path = tmp_path / "small.png"
    path.write_bytes(_encode("PNG"))
    outcome, _ = run(path, DECODERS["image"], max_pixels=limit)
    assert isinstance(outcome, Exception)
    assert "max_pixels" in str(outcome) and str(limit) in str(outcome)
