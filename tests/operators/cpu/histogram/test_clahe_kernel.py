"""The compiled CLAHE kernel: OpenCV's ``createCLAHE(...).apply`` bit for bit on any image
size (tile grids that do and do not divide it, images smaller than the grid), clip limit,
channel and layout, and the path the ``clahe`` operator takes with and without it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.native import native_enabled
from feedline.operators.cpu.histogram import equalization
from feedline.operators.cpu.histogram.bindings import clahe_matches_opencv, clahe_u8
from feedline.operators.native.libraries import CPU_LIBRARY
from tests.operators.cpu.image_samples import real_images, run_op

cv2 = pytest.importorskip("cv2")

pytestmark = pytest.mark.skipif(
    CPU_LIBRARY.try_load() is None, reason="the compiled CPU library cannot be built here"
)

#: Clip limits as the operator passes them (float32 values), from "clip nearly everything" to
#: "clip nothing".
CLIP_LIMITS = (0.01, 0.5, 1.0, 2.0, 3.3, 40.0, 1000.0)


def opencv_clahe(image: np.ndarray, clip_limit: float, tiles: tuple[int, int]) -> np.ndarray:
    """What OpenCV's CLAHE gives for each channel of an ``(H, W, C)`` image, channel by
    channel."""
    engine = cv2.createCLAHE(clip_limit, tiles)
    out = np.empty_like(image)
    for c in range(image.shape[2]):
        out[:, :, c] = engine.apply(np.ascontiguousarray(image[:, :, c]))
    return out


@st.composite
def images(draw: st.DrawFn, max_side: int = 70) -> np.ndarray:
    """``(H, W, C)`` uint8 images with 1 to 4 channels: noise, gradients, few values, narrow
    ranges and constants."""
    shape = (draw(st.integers(1, max_side)), draw(st.integers(1, max_side)))
    channels = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["noise", "gradient", "few", "narrow", "constant"]))
    if kind == "noise":
        return rng.integers(0, 256, (*shape, channels), dtype=np.uint8)
    if kind == "gradient":
        ramp = np.add.outer(np.arange(shape[0]), np.arange(shape[1])) * draw(st.integers(1, 9))
        return np.repeat((ramp % 256).astype(np.uint8)[:, :, None], channels, axis=2)
    if kind == "few":
        values = rng.integers(0, 256, draw(st.integers(1, 3))).astype(np.uint8)
        return rng.choice(values, (*shape, channels))
    if kind == "narrow":
        low = draw(st.integers(0, 250))
        return rng.integers(low, low + 6, (*shape, channels), dtype=np.uint8)
    return np.full((*shape, channels), draw(st.integers(0, 255)), np.uint8)


clip_limits = st.sampled_from(CLIP_LIMITS).map(lambda value: float(np.float32(value)))
grids = st.tuples(st.integers(1, 12), st.integers(1, 12))


def test_the_kernel_matches_the_installed_opencv() -> None:
    assert clahe_matches_opencv()


@settings(max_examples=300, deadline=None)
@given(images(), clip_limits, grids)
def test_every_channel_matches_opencv(
    image: np.ndarray, clip_limit: float, tiles: tuple[int, int]
) -> None:
    out = np.full_like(image, 7)
    assert clahe_u8(image, out, -1, clip_limit, *tiles)
    np.testing.assert_array_equal(out, opencv_clahe(image, clip_limit, tiles))


@settings(max_examples=100, deadline=None)
@given(images(), clip_limits, grids, st.data())
def test_one_channel_in_place_leaves_the_others(
    image: np.ndarray, clip_limit: float, tiles: tuple[int, int], data: st.DataObject
) -> None:
    channel = data.draw(st.integers(0, image.shape[2] - 1))
    work = image.copy()
    assert clahe_u8(work, work, channel, clip_limit, *tiles)
    expected = image.copy()
    expected[:, :, channel] = opencv_clahe(image[:, :, channel : channel + 1], clip_limit, tiles)[
        :, :, 0
    ]
    np.testing.assert_array_equal(work, expected)


@settings(max_examples=60, deadline=None)
@given(images(max_side=30), st.sampled_from(["columns", "reversed", "channels", "padded out"]))
def test_strided_views(base: np.ndarray, view: str) -> None:
    padded = np.pad(base, ((1, 2), (3, 1), (0, 1)))
    image = {
        "columns": np.repeat(base, 2, axis=1)[:, ::2],
        "reversed": padded[-3:0:-1, -2:2:-1, :-1],
        "channels": padded[1:-2, 3:-1, ::-1][:, :, : base.shape[2]],
        "padded out": base,
    }[view]
    target = np.zeros((image.shape[0], image.shape[1] + 3, image.shape[2]), np.uint8)
    out = target[:, 2:-1]
    assert clahe_u8(image, out, -1, 2.0, 3, 4)
    np.testing.assert_array_equal(out, opencv_clahe(np.ascontiguousarray(image), 2.0, (3, 4)))
    assert not target[:, :2].any() and not target[:, -1:].any()


@pytest.mark.parametrize("tiles", [(8, 8), (4, 6), (16, 16), (1, 1)])
def test_photos_of_odd_sizes(tiles: tuple[int, int]) -> None:
    for photo in real_images(count=3, max_side=397):
        lab = cv2.cvtColor(photo, cv2.COLOR_RGB2Lab)
        out = np.empty_like(lab)
        assert clahe_u8(lab, out, -1, 2.0, *tiles)
        np.testing.assert_array_equal(out, opencv_clahe(lab, 2.0, tiles))


def test_declines_what_it_cannot_do() -> None:
    image = np.zeros((4, 4, 3), np.uint8)
    assert not clahe_u8(image.astype(np.uint16), image.astype(np.uint16), -1, 2.0, 2, 2)
    assert not clahe_u8(image, np.empty((4, 8, 3), np.uint8)[:, ::2], -1, 2.0, 2, 2)
    assert not clahe_u8(image, image, -1, 1e12, 2, 2)  # OpenCV's int clip limit overflows


@pytest.mark.parametrize("luma_only", [True, False])
@pytest.mark.parametrize("channels", [1, 3])
def test_operator_matches_dalis_recipe(luma_only: bool, channels: int) -> None:
    images = [photo[:, :, :channels] for photo in real_images(count=3, max_side=203)]
    outputs, _ = run_op(
        "clahe", images, "HWC", tiles_x=5, tiles_y=7, clip_limit=3.0, luma_only=luma_only
    )
    for image, got in zip(images, outputs, strict=True):
        image = np.ascontiguousarray(image)
        if channels == 3 and luma_only:
            lab = cv2.cvtColor(image, cv2.COLOR_RGB2Lab)
            lab[:, :, :1] = opencv_clahe(lab[:, :, :1], 3.0, (5, 7))
            expected = cv2.cvtColor(lab, cv2.COLOR_Lab2RGB)
        else:
            expected = opencv_clahe(image, 3.0, (5, 7))
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("luma_only", [True, False])
def test_fallback_without_the_library_gives_the_same(
    monkeypatch: pytest.MonkeyPatch, luma_only: bool
) -> None:
    rng = np.random.default_rng(5)
    images = [
        *real_images(count=2, max_side=150),
        rng.integers(0, 256, (13, 29, 3), dtype=np.uint8),
        rng.integers(0, 256, (3, 2, 1), dtype=np.uint8),
    ]
    compiled = [equalization.clahe(image, 2.0, 6, 5, luma_only) for image in images]
    monkeypatch.setenv("FEEDLINE_NATIVE", "0")
    native_enabled.cache_clear()
    try:
        assert not clahe_u8(images[0], np.empty_like(images[0]), -1, 2.0, 6, 5)
        fallback = [equalization.clahe(image, 2.0, 6, 5, luma_only) for image in images]
    finally:
        native_enabled.cache_clear()
    for got, expected in zip(compiled, fallback, strict=True):
        np.testing.assert_array_equal(got, expected)
