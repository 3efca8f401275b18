"""The compiled ``equalize`` kernel: OpenCV's per-channel ``equalizeHist`` bit for bit, on any
channel count, layout and strides, and the path ``equalize`` takes when the library loads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.native import native_enabled
from feedline.operators.cpu.histogram import equalization
from feedline.operators.cpu.histogram.bindings import equalize_u8
from feedline.operators.native.libraries import CPU_LIBRARY
from tests.operators.cpu.image_samples import real_images, run_op

cv2 = pytest.importorskip("cv2")

pytestmark = pytest.mark.skipif(
    CPU_LIBRARY.try_load() is None, reason="the compiled CPU library cannot be built here"
)

CHANNELS = (1, 2, 3, 4, 5, 64)


def opencv_equalized(planes: np.ndarray) -> np.ndarray:
    """DALI's recipe on a ``(planes, H, W, C)`` array: OpenCV's ``equalizeHist`` of each
    channel alone (what splitting, equalizing and merging computes)."""
    out = np.empty_like(planes)
    for plane, target in zip(planes, out, strict=True):
        for c in range(plane.shape[2]):
            target[:, :, c] = cv2.equalizeHist(np.ascontiguousarray(plane[:, :, c]))
    return out


@st.composite
def images(draw: st.DrawFn, max_side: int = 24) -> np.ndarray:
    """``(planes, H, W, C)`` uint8 arrays: thin and square sizes, noise, constants, a few
    distinct values, narrow ranges."""
    planes = draw(st.integers(1, 3))
    height = draw(st.integers(1, max_side))
    width = draw(st.integers(1, max_side))
    channels = draw(st.sampled_from(CHANNELS))
    shape = (planes, height, width, channels)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["noise", "constant", "few", "narrow"]))
    if kind == "noise":
        return rng.integers(0, 256, shape, dtype=np.uint8)
    if kind == "constant":
        return np.full(shape, draw(st.integers(0, 255)), np.uint8)
    if kind == "few":
        values = rng.integers(0, 256, draw(st.integers(1, 3))).astype(np.uint8)
        return rng.choice(values, shape)
    low = draw(st.integers(0, 250))
    return rng.integers(low, low + draw(st.integers(1, 5)), shape, dtype=np.uint8)


@settings(max_examples=200, deadline=None)
@given(images())
def test_kernel_matches_opencv_per_channel(planes: np.ndarray) -> None:
    out = np.full_like(planes, 77)
    assert equalize_u8(planes, out)
    np.testing.assert_array_equal(out, opencv_equalized(planes))


@pytest.mark.parametrize("shape", [(1, 1, 1, 3), (1, 1, 300, 1), (2, 300, 1, 4), (1, 7, 9, 512)])
def test_kernel_on_single_pixels_lines_and_512_channels(shape: tuple[int, ...]) -> None:
    planes = np.random.default_rng(sum(shape)).integers(0, 256, shape, dtype=np.uint8)
    out = np.empty_like(planes)
    assert equalize_u8(planes, out)
    np.testing.assert_array_equal(out, opencv_equalized(planes))


def test_kernel_on_photos_and_an_empty_array() -> None:
    for photo in real_images(count=3, max_side=400):
        out = np.empty_like(photo[None])
        assert equalize_u8(photo[None], out)
        np.testing.assert_array_equal(out, opencv_equalized(photo[None]))
    empty = np.zeros((1, 0, 5, 3), np.uint8)
    assert equalize_u8(empty, np.empty_like(empty))


def test_kernel_declines_what_it_cannot_do() -> None:
    planes = np.zeros((1, 4, 4, 513), np.uint8)
    assert not equalize_u8(planes, np.empty_like(planes))
    assert not equalize_u8(planes[..., :3].astype(np.uint16), np.empty((1, 4, 4, 3), np.uint16))
    strided_out = np.empty((1, 4, 8, 3), np.uint8)[:, :, ::2]
    assert not equalize_u8(planes[..., :3], strided_out)


@settings(max_examples=60, deadline=None)
@given(images(max_side=16), st.sampled_from(["rows", "reversed rows", "columns", "channels"]))
def test_kernel_reads_strided_views(base: np.ndarray, view: str) -> None:
    padded = np.pad(base, ((0, 1), (2, 3), (1, 2), (0, 1)))
    planes = {
        "rows": padded[:-1, 2:-3, 1:-2, :-1],
        "reversed rows": padded[-2::-1, -4:1:-1, 1:-2, :-1],
        "columns": np.pad(base, ((0, 0), (0, 0), (0, base.shape[2]), (0, 0)))[:, :, ::2],
        "channels": padded[:-1, 2:-3, 1:-2, ::-1][..., 1:],
    }[view]
    target = np.zeros((*planes.shape[:2], planes.shape[2] + 3, planes.shape[3]), np.uint8)
    out = target[:, :, 2:-1]
    assert equalize_u8(planes, out)
    np.testing.assert_array_equal(out, opencv_equalized(planes))
    assert not target[:, :, :2].any() and not target[:, :, -1:].any()


@pytest.mark.parametrize("layout", ["HWC", "CHW", "FHWC", "HW"])
def test_operator_layouts_match_opencv(layout: str) -> None:
    rng = np.random.default_rng(3)
    video = rng.integers(0, 90, (2, 9, 11, 5), dtype=np.uint8)
    expected = opencv_equalized(video)
    sample, want = {
        "HWC": (video[0], expected[0]),
        "CHW": (
            video[0].transpose(2, 0, 1),
            opencv_equalized(video[0].transpose(2, 0, 1)[..., None])[..., 0],
        ),
        "FHWC": (video, expected),
        "HW": (video[0, :, :, 0], opencv_equalized(video[:1, :, :, :1])[0, :, :, 0]),
    }[layout]
    (out,), out_layout = run_op("equalize", [sample], layout)
    assert out_layout == layout
    np.testing.assert_array_equal(out, want)


def test_equalize_takes_the_compiled_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_opencv(op: str) -> None:
        raise AssertionError(f"{op} called OpenCV although the compiled library loads")

    monkeypatch.setattr(equalization, "import_cv2", no_opencv)
    image = real_images(count=1)[0]
    (out,), _ = run_op("equalize", [image], "HWC")
    np.testing.assert_array_equal(out, opencv_equalized(image[None])[0])


def test_fallback_without_the_library_gives_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    images = [
        *real_images(count=2),
        np.full((5, 4, 3), 9, np.uint8),
        rng.integers(0, 256, (6, 5, 300), dtype=np.uint8),
    ]
    compiled = [equalization.equalize(image[None])[0] for image in images]
    monkeypatch.setenv("FEEDLINE_NATIVE", "0")
    native_enabled.cache_clear()
    try:
        assert not equalize_u8(images[0][None], np.empty_like(images[0][None]))
        fallback = [equalization.equalize(image[None])[0] for image in images]
    finally:
        native_enabled.cache_clear()
    for got, expected in zip(compiled, fallback, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_same_output_for_any_number_of_threads() -> None:
    noise = np.random.default_rng(1).integers(0, 256, (31, 17, 3), np.uint8)
    batch = [*real_images(count=3), noise]
    outputs = [run_op("equalize", batch, "HWC", num_threads=n)[0] for n in (1, 2, 3)]
    for other in outputs[1:]:
        for got, expected in zip(other, outputs[0], strict=True):
            np.testing.assert_array_equal(got, expected)
