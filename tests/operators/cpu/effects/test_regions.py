"""``erase`` against DALI's documented examples, ``grid_mask`` against its formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from feedline import OperatorError
from tests.operators.cpu.image_samples import PerSample, run_op

IMAGE = np.full((300, 300, 3), 255, np.uint8)


def erased(**kwargs: object) -> np.ndarray:
    (out,), _ = run_op("erase", [IMAGE], "HWC", **kwargs)
    return out


def box(out: np.ndarray, value: int = 0) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero((out == value).all(axis=2))
    return int(ys.min()), int(ys.max()) + 1, int(xs.min()), int(xs.max()) + 1


def test_documented_examples() -> None:
    # Example 1: anchor (10, 20), shape (190, 200), HW → rows 10-200, columns 20-220
    assert box(erased(anchor=(10, 20), shape=(190, 200), axis_names="HW")) == (10, 200, 20, 220)
    # Example 2: two regions
    out = erased(anchor=(10, 250, 20, 20), shape=(20, 30, 30, 30))
    assert (out[10:30, 250:280] == 0).all() and (out[20:50, 20:50] == 0).all()
    assert (out == 0).all(axis=2).sum() == 20 * 30 + 30 * 30
    # Example 3: normalized anchor and shape, fill 100
    out = erased(anchor=(0.15, 0.15), shape=(0.3, 0.3), normalized=True, fill_value=100)
    assert box(out, 100) == (45, 135, 45, 135)
    # Example 4: normalized anchor, absolute shape
    out = erased(anchor=(0.15, 0.15), shape=(20, 30), normalized_anchor=True)
    assert box(out) == (45, 65, 45, 75)
    # Example 5: centred anchor
    out = erased(anchor=(150, 150), shape=(20, 30), centered_anchor=True)
    assert box(out) == (140, 160, 135, 165)


def test_axes_channels_and_defaults() -> None:
    out = erased(anchor=(5,), shape=(10,), axes=(1,))  # whole height, columns 5-15
    assert box(out) == (0, 300, 5, 15)
    out = erased(anchor=(0, 0), shape=(2, 2), fill_value=(1, 2, 3))
    assert out[0, 0].tolist() == [1, 2, 3] and out[2, 2].tolist() == [255] * 3
    out = erased(shape=(10, 20))  # no anchor: from 0; no axes: every axis but C (H, W)
    assert box(out) == (0, 10, 0, 20)
    out = erased(anchor=(10.9, 20.2), shape=(4.5, 4.5))  # bounds truncated: int(10.9) = 10
    assert box(out) == (10, 15, 20, 24)
    np.testing.assert_array_equal(erased(), IMAGE)
    out = erased(anchor=(-10, -10), shape=(20, 20))  # clipped
    assert box(out) == (0, 10, 0, 10)
    (first, second), _ = run_op(
        "erase", [IMAGE, IMAGE], "HWC", anchor=PerSample([(0.0, 0.0), (10.0, 10.0)]), shape=(5, 5)
    )
    assert box(first) == (0, 5, 0, 5) and box(second) == (10, 15, 10, 15)


def test_fill_value_per_sample() -> None:
    """``fill_value`` is an argument input in DALI: one fill (scalar or per channel) per sample."""
    (first, second), _ = run_op(
        "erase",
        [IMAGE, IMAGE],
        "HWC",
        anchor=(0, 0),
        shape=(4, 4),
        fill_value=PerSample([np.float32([7]), np.float32([1, 2, 3])]),
    )
    assert box(first, 7) == (0, 4, 0, 4)
    assert second[3, 3].tolist() == [1, 2, 3] and second[4, 4].tolist() == [255] * 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"anchor": (1, 2, 3), "shape": (1, 2, 3)}, "one value per axis"),
        ({"anchor": (1, 2), "shape": (1, 2, 3, 4)}, "same number of regions"),
        ({"anchor": (1, 2), "shape": (1, 1), "fill_value": (1, 2)}, "2 fill values"),
        ({"anchor": (1, 2)}, "same number of regions"),
        ({"anchor": (1, 2), "axes": (0, 1), "axis_names": "HW"}, "mutually exclusive"),
        ({"anchor": (1,), "shape": (1,), "axes": (3,)}, "out of range"),
        ({"anchor": (1,), "shape": (1,), "axis_names": "D"}, "does not have"),
        ({"anchor": (1, 2), "normalized": True, "normalized_shape": False}, "mutually exclusive"),
    ],
)
def test_erase_errors(kwargs: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        erased(**kwargs)


def grid_reference(h: int, w: int, tile: int, ratio: float, angle: float, sx: float, sy: float):
    keep = np.ones((h, w), bool)
    for y in range(h):
        for x in range(w):
            fx = (x * math.cos(angle) - y * math.sin(angle) - sx) / tile
            fy = (x * math.sin(angle) + y * math.cos(angle) - sy) / tile
            keep[y, x] = fx - math.floor(fx) >= ratio or fy - math.floor(fy) >= ratio
    return keep


def test_grid_mask_without_rotation_zeroes_squares() -> None:
    image = np.full((20, 20, 3), 9, np.uint8)
    (out,), layout = run_op("grid_mask", [image], "HWC", tile=10, ratio=0.5)
    assert layout == "HWC"
    zero = (out == 0).all(axis=2)
    expected = np.zeros((20, 20), bool)
    for y0 in (0, 10):
        for x0 in (0, 10):
            expected[y0 : y0 + 5, x0 : x0 + 5] = True
    np.testing.assert_array_equal(zero, expected)


@pytest.mark.parametrize("params", [(7, 0.3, 0.5, 2.0, -1.0), (16, 0.6, -1.1, 0.0, 3.5)])
def test_grid_mask_matches_the_formula(params: tuple) -> None:
    tile, ratio, angle, sx, sy = params
    image = np.arange(30 * 25, dtype=np.float32).reshape(30, 25) + 1
    (out,), _ = run_op(
        "grid_mask", [image], "HW", tile=tile, ratio=ratio, angle=angle, shift_x=sx, shift_y=sy
    )
    keep = grid_reference(30, 25, tile, ratio, angle, sx, sy)
    assert (out != 0).sum() == pytest.approx(keep.sum(), abs=3)  # float32 rounding at edges
    assert ((out != 0) == keep).mean() > 0.99


def test_grid_mask_errors() -> None:
    with pytest.raises((OperatorError, ValueError), match="'tile' = 0"):
        run_op("grid_mask", [np.zeros((4, 4, 3), np.uint8)], "HWC", tile=0)
    with pytest.raises((OperatorError, ValueError), match="'ratio' = 1.5"):
        run_op("grid_mask", [np.zeros((4, 4, 3), np.uint8)], "HWC", ratio=1.5)
