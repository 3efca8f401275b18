"""``debayer``: mosaics made from known colour images come back as those colours."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError
from tests.operators.cpu.image_samples import run_op

#: blue_position → which colour each sensor of the 2x2 tile at (1, 1) sees (OpenCV's naming
#: refers to the tile that starts at the second row and column).
TILES = {(0, 0): "BGGR", (0, 1): "GBRG", (1, 0): "GRBG", (1, 1): "RGGB"}


def mosaic(rgb: np.ndarray, blue_position: tuple[int, int]) -> np.ndarray:
    """Sample ``rgb`` through a Bayer filter whose 2x2 tile at (1, 1) is ``TILES[...]``."""
    tile = TILES[blue_position]
    out = np.empty(rgb.shape[:2], rgb.dtype)
    for dy in range(2):
        for dx in range(2):
            colour = "RGB".index(tile[2 * dy + dx])
            rows, cols = slice((1 + dy) % 2, None, 2), slice((1 + dx) % 2, None, 2)
            out[rows, cols] = rgb[rows, cols, colour]
    return out


@pytest.mark.parametrize("blue_position", sorted(TILES))
@pytest.mark.parametrize("algorithm", ["bilinear_ocv", "edgeaware_ocv", "vng_ocv"])
def test_a_flat_colour_is_reconstructed(blue_position: tuple, algorithm: str) -> None:
    rgb = np.empty((10, 12, 3), np.uint8)
    rgb[:] = (200, 90, 30)
    (out,), layout = run_op("debayer", [mosaic(rgb, blue_position)], "HW",
                            blue_position=list(blue_position), algorithm=algorithm)  # fmt: skip
    assert layout == "HWC" and out.shape == (10, 12, 3)
    np.testing.assert_array_equal(out[2:-2, 2:-2], rgb[2:-2, 2:-2])


def test_gray_sequences_uint16_and_default_algorithm() -> None:
    rgb = np.empty((6, 8, 3), np.uint16)
    rgb[:] = (1000, 3000, 500)
    frames = np.stack([mosaic(rgb, (1, 1)), mosaic(rgb // 2, (1, 1))])
    (out,), layout = run_op("experimental.debayer", [frames], "FHW", blue_position=[1, 1])
    assert layout == "FHWC" and out.dtype == np.uint16
    np.testing.assert_array_equal(out[1, 2:-2, 2:-2], rgb[2:-2, 2:-2] // 2)
    (gray,), _ = run_op("debayer", [frames[0]], "HW", blue_position=[1, 1], algorithm="gray_ocv")
    assert gray.shape == (6, 8, 1)
    assert abs(int(gray[3, 3, 0]) - int(0.299 * 1000 + 0.587 * 3000 + 0.114 * 500)) <= 2


@pytest.mark.parametrize(
    ("image", "kwargs", "message"),
    [
        (np.zeros((7, 8), np.uint8), {}, "even"),
        (np.zeros((8, 8, 3), np.uint8), {}, "single channel"),
        (np.zeros((8, 8), np.uint16), {"algorithm": "vng_ocv"}, "UINT8"),
        (np.zeros((8, 8), np.uint8), {"algorithm": "default_npp"}, "not supported on CPU"),
        (np.zeros((8, 8), np.uint8), {"blue_position": [2, 0]}, "2x2 tile"),
        (np.zeros((8, 8), np.uint8), {"blue_position": [0]}, "two values"),
        (np.zeros((8, 8), np.float32), {}, "float32"),
    ],
)
def test_debayer_errors(image: np.ndarray, kwargs: dict, message: str) -> None:
    args = {"blue_position": [0, 0], **kwargs}
    layout = "HWC" if image.ndim == 3 else "HW"
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op("debayer", [image], layout, **args)
