"""``water`` and ``sphere`` against their source-coordinate formulas, sampled in NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from feedline import OperatorError, types
from tests.operators.cpu.image_samples import PerSample, generated_image, run_op


def nearest(image: np.ndarray, sx: np.ndarray, sy: np.ndarray, fill: float) -> np.ndarray:
    """Pixel floor(sx), floor(sy) of an HWC image (corner origin); fill outside."""
    xi, yi = np.floor(sx).astype(int), np.floor(sy).astype(int)
    h, w = image.shape[:2]
    inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
    out = image[np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)].copy()
    out[~inside] = fill
    return out


def water_sources(h: int, w: int, ax=10.0, ay=10.0, fx=2 * math.pi / 128, fy=2 * math.pi / 128,
                  px=0.0, py=0.0):  # fmt: skip
    f = np.float32
    y, x = np.mgrid[0:h, 0:w].astype(f)
    return (x + f(ax) * np.sin(f(fx) * y + f(px)), y + f(ay) * np.cos(f(fy) * x + f(py)))


def test_water_moves_pixels_along_the_waves() -> None:
    image = generated_image(np.random.default_rng(14), 30, 40)
    (out,), layout = run_op("water", [image], "HWC")
    assert layout == "HWC"
    np.testing.assert_array_equal(out, nearest(image, *water_sources(30, 40), 0))
    args = {"ampl_x": 2.5, "ampl_y": 4.0, "freq_x": 0.3, "freq_y": 0.1, "phase_x": 1.0,
            "phase_y": -0.5, "fill_value": 9.0}  # fmt: skip
    (custom,), _ = run_op("water", [image], "HWC", **args)
    sources = water_sources(30, 40, 2.5, 4.0, 0.3, 0.1, 1.0, -0.5)
    np.testing.assert_array_equal(custom, nearest(image, *sources, 9))


def test_linear_sampling_interpolates_between_pixel_centres() -> None:
    ramp = np.tile(np.arange(0, 200, 10, dtype=np.float32)[None, :, None], (6, 1, 1))
    (out,), _ = run_op("water", [ramp], "HWC", ampl_x=0.25, ampl_y=0.0, freq_x=0.0,
                       phase_x=math.pi / 2, interp_type=types.INTERP_LINEAR)  # fmt: skip
    # Sources at (x + 0.25, y): a quarter pixel left of column x's centre and half a pixel above
    # row y's, so the first row mixes in the fill (0) and the others keep the ramp, shifted.
    np.testing.assert_allclose(out[1:, 1:-1, 0], ramp[1:, 1:-1, 0] - 2.5, atol=1e-4)
    np.testing.assert_allclose(out[0, 1:-1, 0], (ramp[0, 1:-1, 0] - 2.5) / 2, atol=1e-4)


def test_mask_zero_leaves_samples_unchanged() -> None:
    images = [generated_image(np.random.default_rng(i), 12, 14) for i in range(2)]
    out, _ = run_op("sphere", images, "HWC", mask=PerSample([np.int32(0), np.int32(1)]))
    np.testing.assert_array_equal(out[0], images[0])
    assert not np.array_equal(out[1], images[1])


def test_sphere_pulls_pixels_from_the_scaled_radius() -> None:
    image = generated_image(np.random.default_rng(15), 20, 26)
    (out,), _ = run_op("sphere", [image], "HWC", fill_value=3.0)
    f = np.float32
    mid_x, mid_y = f(13), f(10)
    y, x = np.mgrid[0:20, 0:26].astype(f)
    dx, dy = x + f(0.5) - mid_x, y + f(0.5) - mid_y
    radius = np.sqrt(dx * dx + dy * dy) / f(13)
    np.testing.assert_array_equal(out, nearest(image, mid_x + radius * dx, mid_y + radius * dy, 3))


@pytest.mark.parametrize("op", ["water", "sphere"])
@pytest.mark.parametrize(
    ("image", "layout", "kwargs", "message"),
    [
        (np.zeros((4, 4, 3), np.int16), "HWC", {}, "int16"),
        (np.zeros((4, 4), np.uint8), "HW", {}, "layout"),
        (np.zeros((4, 4, 3), np.uint8), "HWC", {"interp_type": types.INTERP_CUBIC},
         "INTERP_NN and INTERP_LINEAR"),
    ],
)  # fmt: skip
def test_displacement_errors(op: str, image, layout: str, kwargs: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op(op, [image], layout, **kwargs)
