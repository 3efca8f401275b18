"""The compiled uint8 ``filter`` kernel: OpenCV's ``filter2D`` bit for bit (the arithmetic the
installed OpenCV uses, measured), every border, anchor and channel count, and the path
``filter`` takes when it is available."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.native import native_enabled
from feedline.operators.cpu.filters import bindings, convolution
from feedline.operators.cpu.filters.bindings import border_indices, filter_u8, opencv_arithmetic
from tests.operators.cpu.image_samples import real_images, run_op

cv2 = pytest.importorskip("cv2")

pytestmark = pytest.mark.skipif(
    opencv_arithmetic() is None,
    reason="the compiled filter needs the CPU library built with AVX2 and FMA",
)

BORDERS = ["reflect_101", "reflect_1001", "clamp", "constant", "wrap"]
CV_BORDERS = {
    "reflect_101": cv2.BORDER_REFLECT_101,
    "reflect_1001": cv2.BORDER_REFLECT,
    "clamp": cv2.BORDER_REPLICATE,
    "constant": cv2.BORDER_CONSTANT,
    "wrap": cv2.BORDER_WRAP,
}


def opencv_correlation(
    plane: np.ndarray, taps: np.ndarray, anchor: tuple[int, int], border: str, fill: float
) -> np.ndarray:
    """What ``correlate`` computes without the compiled kernel (its OpenCV calls)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(convolution, "filter_u8", lambda *_: False)
        return convolution.correlate(plane, taps, anchor, border, fill, np.dtype(np.uint8))


@pytest.mark.parametrize("border", BORDERS)
def test_border_indices_follow_opencv(border: str) -> None:
    for length in range(1, 9):
        for taps in range(1, 12):
            for anchor in range(taps):
                got = border_indices(length, taps, anchor, border)
                positions = range(-anchor, length + taps - 1 - anchor)
                expected = [
                    p if 0 <= p < length else cv2.borderInterpolate(p, length, CV_BORDERS[border])
                    for p in positions
                ]
                np.testing.assert_array_equal(got, expected)


def test_the_probe_tells_the_arithmetics_apart() -> None:
    probe, taps = bindings._probe()
    results = []
    for fused, tail_like_body in bindings._ARITHMETICS:
        out = np.empty_like(probe)
        tail_from = probe.shape[1] if tail_like_body else probe.shape[1] // 4 * 4
        assert bindings._run(probe, taps, (1, 1), "reflect_101", 0, fused, tail_from, out) == 0
        results.append(out)
    for i, first in enumerate(results):
        for second in results[i + 1 :]:
            assert not np.array_equal(first, second)
    assert opencv_arithmetic() in bindings._ARITHMETICS


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, tuple[int, int], str, float]:
    """A uint8 ``(H, W, C)`` plane, taps (tenths, whose sums often fall on a half; or normal;
    with zeros), an anchor, a border and a fill."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    height, width = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    channels = draw(st.sampled_from([1, 2, 3, 4, 5, 7]))
    plane = rng.integers(0, 256, (height, width, channels), dtype=np.uint8)
    taps_h, taps_w = draw(st.integers(1, 11)), draw(st.integers(1, 11))
    kind = draw(st.sampled_from(["tenths", "normal", "sparse", "box"]))
    if kind == "tenths":
        taps = rng.integers(-3, 4, (taps_h, taps_w)).astype(np.float32) / np.float32(10)
    elif kind == "normal":
        taps = rng.normal(0, 0.5, (taps_h, taps_w)).astype(np.float32)
    elif kind == "sparse":
        taps = rng.uniform(0, 1, (taps_h, taps_w)) * (rng.uniform(size=(taps_h, taps_w)) > 0.6)
        taps = taps.astype(np.float32)
    else:
        taps = np.full((taps_h, taps_w), 1 / (taps_h * taps_w), np.float32)
    anchor = (draw(st.integers(0, taps_h - 1)), draw(st.integers(0, taps_w - 1)))
    border = draw(st.sampled_from(BORDERS))
    fill = float(draw(st.sampled_from([0, 0, 37]))) if border == "constant" else 0.0
    return plane, taps, anchor, border, fill


@settings(max_examples=300, deadline=None)
@given(cases())
def test_kernel_matches_the_opencv_path(case: tuple) -> None:
    plane, taps, anchor, border, fill = case
    out = np.full_like(plane, 3)
    assert filter_u8(plane, taps, anchor, border, fill, out)
    np.testing.assert_array_equal(out, opencv_correlation(plane, taps, anchor, border, fill))


def test_kernel_on_photos_and_extreme_sums() -> None:
    box = np.full((3, 3), 1 / 9, np.float32)
    for photo in real_images(count=3, max_side=700):
        out = np.empty_like(photo)
        assert filter_u8(photo, box, (1, 1), "reflect_101", 0, out)
        expected = cv2.filter2D(photo, -1, box, borderType=cv2.BORDER_REFLECT_101)
        np.testing.assert_array_equal(out, expected)
    plane = np.random.default_rng(5).integers(0, 256, (9, 13, 3), dtype=np.uint8)
    huge = np.array([[1e9, -1e9, 3e7], [np.inf, 0, 1], [-2.5, 0.5, 1e38]], np.float32)
    for taps in (huge, huge[:1], np.zeros((2, 2), np.float32), np.array([[np.nan]], np.float32)):
        out = np.empty_like(plane)
        assert filter_u8(plane, taps, (0, 0), "clamp", 0, out)
        np.testing.assert_array_equal(out, opencv_correlation(plane, taps, (0, 0), "clamp", 0))


def test_kernel_declines_what_it_cannot_do() -> None:
    plane = np.zeros((20, 20, 3), np.uint8)
    out = np.empty_like(plane)
    assert not filter_u8(plane, np.ones((13, 10), np.float32), (0, 0), "clamp", 0, out)
    assert not filter_u8(plane.astype(np.int16), np.ones((3, 3), np.float32), (1, 1), "clamp", 0,
                         out.astype(np.int16))  # fmt: skip
    assert not filter_u8(plane[:, ::2], np.ones((3, 3), np.float32), (1, 1), "clamp", 0,
                         out[:, ::2].copy())  # fmt: skip


def test_filter_takes_the_compiled_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_opencv(op: str) -> None:
        raise AssertionError(f"{op} called OpenCV although the compiled kernel runs")

    image = real_images(count=1)[0]
    taps = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
    expected = opencv_correlation(image, taps, (1, 1), "reflect_101", 0)
    monkeypatch.setattr(convolution, "import_cv2", no_opencv)
    (out,), _ = run_op("experimental.filter", [image], "HWC", [taps])
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("mode", ["same", "valid"])
def test_operator_agrees_without_the_library(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    video = rng.integers(0, 256, (3, 17, 23, 3), dtype=np.uint8)
    taps = (rng.integers(-3, 4, (3, 5)) / 10).astype(np.float32)
    batch = [video, video[:, :, :, :1].copy()]
    compiled, _ = run_op("filter", batch, "FHWC", [taps, taps], mode=mode, border="wrap")
    monkeypatch.setenv("FEEDLINE_NATIVE", "0")
    native_enabled.cache_clear()
    try:
        fallback, _ = run_op("filter", batch, "FHWC", [taps, taps], mode=mode, border="wrap")
    finally:
        native_enabled.cache_clear()
    for got, expected in zip(compiled, fallback, strict=True):
        np.testing.assert_array_equal(got, expected)
