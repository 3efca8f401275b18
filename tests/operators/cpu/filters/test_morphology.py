"""Median blur, erosion and dilation against sliding-window NumPy references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError
from tests.operators.cpu.image_samples import run_op


def windows(image: np.ndarray, height: int, width: int, top: int, left: int, mode: str, **pad):
    """Every (height x width) window of an HW image whose anchor is at (top, left)."""
    padded = np.pad(image, ((top, height - 1 - top), (left, width - 1 - left)), mode=mode, **pad)
    return np.lib.stride_tricks.sliding_window_view(padded, (height, width))


@settings(max_examples=30, deadline=None)
@given(
    hnp.arrays(np.uint8, st.tuples(st.integers(1, 9), st.integers(1, 9))),
    st.sampled_from([(3, 3), (5, 5), (3, 5), (1, 3)]),
)
def test_median_is_the_window_median_with_replicated_edges(image: np.ndarray, window) -> None:
    height, width = window
    (out,), _ = run_op("experimental.median_blur", [image], "HW", window_size=list(window))
    expected = np.median(windows(image, height, width, height // 2, width // 2, "edge"),
                         axis=(-2, -1))  # fmt: skip
    np.testing.assert_array_equal(out, expected.astype(np.uint8))


def test_median_layouts_and_types() -> None:
    rng = np.random.default_rng(5)
    image = rng.uniform(0, 1, (8, 7, 3)).astype(np.float32)
    (hwc,), layout = run_op("experimental.median_blur", [image], "HWC", window_size=5)
    assert layout == "HWC" and hwc.dtype == np.float32
    planar = np.ascontiguousarray(image.transpose(2, 0, 1))
    (chw,), _ = run_op("experimental.median_blur", [planar], "CHW", window_size=5)
    np.testing.assert_array_equal(chw.transpose(1, 2, 0), hwc)
    for c in range(3):
        expected = np.median(windows(image[:, :, c], 5, 5, 2, 2, "edge"), axis=(-2, -1))
        np.testing.assert_array_equal(hwc[:, :, c], expected)
    with pytest.raises(OperatorError, match="odd"):
        run_op("experimental.median_blur", [image], "HWC", window_size=4)
    with pytest.raises(OperatorError, match="int32"):
        run_op("experimental.median_blur", [image.astype(np.int32)], "HWC")


@settings(max_examples=30, deadline=None)
@given(
    hnp.arrays(np.uint8, st.tuples(st.integers(1, 9), st.integers(1, 9))),
    st.sampled_from([(3, 3), (5, 3), (2, 4)]),
    st.sampled_from(["erode", "dilate"]),
)
def test_morphology_is_the_window_minimum_or_maximum(image: np.ndarray, mask, operation) -> None:
    width, height = mask
    (out,), _ = run_op(f"experimental.{operation}", [image], "HW", mask_size=list(mask))
    # The default constant border never wins the minimum or maximum.
    fill = 255 if operation == "erode" else 0
    view = windows(image, height, width, height // 2, width // 2, "constant",
                   constant_values=fill)  # fmt: skip
    reduce = np.min if operation == "erode" else np.max
    np.testing.assert_array_equal(out, reduce(view, axis=(-2, -1)))


def test_anchor_iterations_borders_and_layouts() -> None:
    rng = np.random.default_rng(6)
    image = rng.integers(0, 256, (9, 10), dtype=np.uint8)
    (shifted,), _ = run_op("experimental.dilate", [image], "HW", mask_size=[3, 1], anchor=[0, 0])
    view = windows(image, 1, 3, 0, 0, "constant", constant_values=0)
    np.testing.assert_array_equal(shifted, view.max(axis=(-2, -1)))
    (twice,), _ = run_op("experimental.erode", [image], "HW", iterations=2)
    (once,), _ = run_op("experimental.erode", [image], "HW")
    (again,), _ = run_op("experimental.erode", [once], "HW")
    np.testing.assert_array_equal(twice, again)
    (wrapped,), _ = run_op("experimental.erode", [image], "HW", border_mode="wrap")
    np.testing.assert_array_equal(wrapped, windows(image, 3, 3, 1, 1, "wrap").min(axis=(-2, -1)))
    video = rng.integers(0, 256, (2, 5, 6, 3), dtype=np.uint8)
    (frames,), layout = run_op("experimental.dilate", [video], "FHWC")
    assert layout == "FHWC"
    (first,), _ = run_op("experimental.dilate", [video[0]], "HWC")
    np.testing.assert_array_equal(frames[0], first)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"iterations": 0}, "iterations"), ({"anchor": [3, 0]}, "anchor"),
     ({"mask_size": [0, 3]}, "positive"), ({"mask_size": [1, 2, 3]}, "1 or 2 values")],
)  # fmt: skip
def test_morphology_argument_errors(kwargs: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op("experimental.erode", [np.zeros((4, 4), np.uint8)], "HW", **kwargs)
