"""The farbfeld codec: ``fn.decoders.image`` decodes farbfeld files through it."""

from __future__ import annotations

import numpy as np
import pytest
from feedline import types
from feedline.testing import run_operator

from feedline_example.farbfeld import encode

RNG = np.random.default_rng(1)
IMAGES = [RNG.integers(0, 65536, (5 + i, 7, 4), dtype=np.uint16) for i in range(3)]
FILES = [np.frombuffer(encode(image), np.uint8) for image in IMAGES]


def _decode(**args) -> list[np.ndarray]:
    ((samples, layout),) = run_operator("decoders.image", [FILES], args=args, iterations=1)[0]
    assert layout == "HWC"
    return samples


def test_decodes_16_bit_rgba() -> None:
    out = _decode(output_type=types.ANY_DATA, dtype=types.UINT16)
    for image, got in zip(IMAGES, out, strict=True):
        np.testing.assert_array_equal(got, image)


def test_decodes_to_8_bit_rgb() -> None:
    for image, got in zip(IMAGES, _decode(), strict=True):
        assert got.dtype == np.uint8 and got.shape == (*image.shape[:2], 3)
        np.testing.assert_allclose(got, image[..., :3] / 257, atol=1)


def test_truncated_files_are_reported() -> None:
    truncated = [f[:-10] for f in FILES]
    with pytest.raises(Exception, match="truncated"):
        run_operator("decoders.image", [truncated], iterations=1)
