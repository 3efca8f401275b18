"""The compiled 8-bit sRGB <-> CIE Lab conversions: OpenCV's ``COLOR_RGB2Lab`` and
``COLOR_Lab2RGB`` bit for bit on every possible pixel, and the fused ``clahe`` kernel that
converts, equalizes the lightness and converts back in one call."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.operators.cpu.histogram.bindings import (
    clahe_lab_u8,
    lab_matches_opencv,
    lab_to_rgb,
    rgb_to_lab,
)
from feedline.operators.native.libraries import CPU_LIBRARY
from tests.operators.cpu.image_samples import real_images

cv2 = pytest.importorskip("cv2")

pytestmark = pytest.mark.skipif(
    CPU_LIBRARY.try_load() is None, reason="the compiled CPU library cannot be built here"
)


@pytest.fixture(scope="module")
def every_triple() -> np.ndarray:
    """All 2^24 byte triples, as a 4096 x 4096 three-channel image."""
    values = np.arange(256, dtype=np.uint8)
    grid = np.stack(np.meshgrid(values, values, values, indexing="ij"), axis=-1)
    return grid.reshape(4096, 4096, 3)


def test_the_conversions_match_the_installed_opencv() -> None:
    assert lab_matches_opencv()


def test_rgb_to_lab_on_every_colour(every_triple: np.ndarray) -> None:
    expected = cv2.cvtColor(every_triple, cv2.COLOR_RGB2Lab)
    got = rgb_to_lab(every_triple)
    assert np.count_nonzero((got != expected).any(axis=-1)) == 0


def test_lab_to_rgb_on_every_triple(every_triple: np.ndarray) -> None:
    expected = cv2.cvtColor(every_triple, cv2.COLOR_Lab2RGB)
    got = lab_to_rgb(every_triple)
    assert np.count_nonzero((got != expected).any(axis=-1)) == 0


@pytest.mark.parametrize("count", [1, 7, 8, 9, 23, 100])
def test_row_tails_of_every_length(count: int) -> None:
    pixels = np.random.default_rng(count).integers(0, 256, (1, count, 3), dtype=np.uint8)
    np.testing.assert_array_equal(rgb_to_lab(pixels), cv2.cvtColor(pixels, cv2.COLOR_RGB2Lab))
    np.testing.assert_array_equal(lab_to_rgb(pixels), cv2.cvtColor(pixels, cv2.COLOR_Lab2RGB))


def opencv_luma_clahe(image: np.ndarray, clip_limit: float, tiles: tuple[int, int]) -> np.ndarray:
    """DALI's CPU recipe: to Lab, OpenCV's CLAHE of L, back to RGB."""
    lab = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2Lab)
    lab[:, :, 0] = cv2.createCLAHE(clip_limit, tiles).apply(np.ascontiguousarray(lab[:, :, 0]))
    return cv2.cvtColor(lab, cv2.COLOR_Lab2RGB)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 60),
    st.integers(1, 60),
    st.sampled_from([0.01, 1.0, 2.0, 3.3, 40.0]).map(lambda v: float(np.float32(v))),
    st.tuples(st.integers(1, 10), st.integers(1, 10)),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_fused_clahe_matches_opencv(
    height: int,
    width: int,
    clip_limit: float,
    tiles: tuple[int, int],
    seed: int,
    smooth: bool,
) -> None:
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    if smooth:  # a narrow range of colours, as in photos
        image = (image // 16 + rng.integers(0, 200, 3)).astype(np.uint8)
    out = np.full_like(image, 3)
    assert clahe_lab_u8(image, out, clip_limit, *tiles)
    np.testing.assert_array_equal(out, opencv_luma_clahe(image, clip_limit, tiles))


@pytest.mark.parametrize("tiles", [(8, 8), (3, 7)])
def test_fused_clahe_on_photos_in_place_and_on_views(tiles: tuple[int, int]) -> None:
    for photo in real_images(count=3, max_side=331):
        expected = opencv_luma_clahe(photo, 2.0, tiles)
        work = photo.copy()
        assert clahe_lab_u8(work, work, 2.0, *tiles)
        np.testing.assert_array_equal(work, expected)
        flipped = photo[::-1, ::-1]
        out = np.empty_like(photo)
        assert clahe_lab_u8(flipped, out, 2.0, *tiles)
        np.testing.assert_array_equal(out, opencv_luma_clahe(flipped, 2.0, tiles))


def test_fused_clahe_declines_what_it_cannot_do() -> None:
    image = np.zeros((4, 4, 3), np.uint8)
    assert not clahe_lab_u8(image[:, :, :1], image[:, :, :1], 2.0, 2, 2)
    assert not clahe_lab_u8(image, np.empty((4, 8, 3), np.uint8)[:, ::2], 2.0, 2, 2)
    assert not clahe_lab_u8(image, image, 1e12, 2, 2)
