"""``experimental.remap``: output(x, y) = input(mapx(x, y), mapy(x, y))."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError, types
from tests.operators.cpu.image_samples import generated_image, run_op


def centre_maps(height: int, width: int, dx: float = 0, dy: float = 0):
    """Maps that point at the centres of the pixels shifted by (dx, dy), corner origin."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    return x + np.float32(0.5 + dx), y + np.float32(0.5 + dy)


@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC])
def test_maps_at_pixel_centres_move_whole_pixels(interp: types.InterpType) -> None:
    image = generated_image(np.random.default_rng(12), 9, 11)
    mapx, mapy = centre_maps(9, 11, dx=2, dy=-1)
    (out,), layout = run_op("experimental.remap", [image], "HWC", [mapx], [mapy], interp=interp)
    assert layout == "HWC" and out.dtype == np.uint8
    np.testing.assert_array_equal(out[1:, :9], image[:-1, 2:])
    assert not out[0].any() and not out[:, 9:].any()  # sources outside give 0


def test_pixel_origin_center_and_smaller_maps() -> None:
    image = generated_image(np.random.default_rng(13), 8, 8, channels=1)
    y, x = np.mgrid[0:4, 0:5].astype(np.float32)
    (out,), _ = run_op("experimental.remap", [image], "HWC", [x * 1.5], [y * 2],
                       pixel_origin="center", interp=types.INTERP_NN)  # fmt: skip
    assert out.shape == (4, 5, 1)
    rows, cols = (y * 2).astype(int), np.rint(x * 1.5).astype(int)
    np.testing.assert_array_equal(out[:, :, 0], image[rows, cols, 0])


def test_linear_interpolates_between_centres() -> None:
    image = np.array([[[0], [100]]], np.float32)
    mapx = np.array([[1.0, 1.25]], np.float32)  # halfway and a quarter past the first centre
    mapy = np.full((1, 2), 0.5, np.float32)
    (out,), _ = run_op("experimental.remap", [image], "HWC", [mapx], [mapy])
    np.testing.assert_allclose(out[0, :, 0], [50.0, 75.0])


def test_sequences_take_one_map_per_frame() -> None:
    video = np.stack([generated_image(np.random.default_rng(i), 6, 7) for i in range(2)])
    maps = [centre_maps(6, 7, dx=1), centre_maps(6, 7)]
    mapx = np.stack([m[0] for m in maps])
    mapy = np.stack([m[1] for m in maps])
    (out,), layout = run_op("experimental.remap", [video], "FHWC", [mapx], [mapy])
    assert layout == "FHWC"
    np.testing.assert_array_equal(out[0, :, :6], video[0, :, 1:])
    np.testing.assert_array_equal(out[1], video[1])


@pytest.mark.parametrize(
    ("image", "mapx", "mapy", "kwargs", "message"),
    [
        (np.zeros((4, 4, 2), np.uint8), np.zeros((4, 4), np.float32),
         np.zeros((4, 4), np.float32), {}, "1- or 3-channel"),
        (np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.float64),
         np.zeros((4, 4), np.float32), {}, "mapx type"),
        (np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.float32),
         np.zeros((4, 5), np.float32), {}, "differ in shape"),
        (np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.float32),
         np.zeros((4, 4), np.float32), {"interp": types.INTERP_LANCZOS3}, "interp"),
    ],
)  # fmt: skip
def test_remap_errors(image, mapx, mapy, kwargs, message) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op("experimental.remap", [image], "HWC", [mapx], [mapy], **kwargs)
