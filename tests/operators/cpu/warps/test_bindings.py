"""The compiled uint8 perspective warp: OpenCV's linear ``warpPerspective`` bit for bit, with
the arithmetic the installed OpenCV uses (measured), for 1 and 3 channels, both mapping
directions, every border, any matrix and fill; and the path ``warp_perspective`` takes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import types
from feedline.operators.cpu.warps import bindings, perspective
from feedline.operators.cpu.warps.bindings import fill_bytes, opencv_arithmetic
from tests.operators.cpu.image_samples import real_images, run_op

cv2 = pytest.importorskip("cv2")

native = pytest.mark.skipif(
    opencv_arithmetic() is None,
    reason="the compiled warp needs the CPU library built with AVX2 and FMA, and OpenCV 5",
)


BORDERS = [
    cv2.BORDER_CONSTANT,
    cv2.BORDER_REPLICATE,
    cv2.BORDER_REFLECT,
    cv2.BORDER_REFLECT_101,
    cv2.BORDER_WRAP,
]


def opencv_warp(image: np.ndarray, matrix: np.ndarray, size: tuple[int, int], inverse: bool,
                fill: tuple[float, ...], border: int = 0) -> np.ndarray:  # fmt: skip
    flags = cv2.INTER_LINEAR | (cv2.WARP_INVERSE_MAP if inverse else 0)
    out = cv2.warpPerspective(image, matrix, size[::-1], flags=flags, borderMode=border,
                              borderValue=fill)  # fmt: skip
    return out.reshape(size + image.shape[2:])


def compiled_warp(image: np.ndarray, matrix: np.ndarray, size: tuple[int, int], inverse: bool,
                  fill: tuple[float, ...], border: int = 0) -> np.ndarray:  # fmt: skip
    out = np.full(size + image.shape[2:], 77, np.uint8)
    assert bindings.warp_perspective_u8(image, matrix, inverse, border, fill, out)
    return out


@st.composite
def warps(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, tuple[int, int], bool, tuple, int]:
    """An image (HW, HW1 or HW3, from 1x1 up), a matrix (near the identity, strongly
    perspective, near-singular, singular, or an affine one), an output size, a direction, a
    fill (fractions, values out of range) and a border."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    height, width = draw(st.integers(1, 70)), draw(st.integers(1, 70))
    shape = draw(st.sampled_from([(height, width), (height, width, 1), (height, width, 3)]))
    image = rng.integers(0, 256, shape, dtype=np.uint8)
    kind = draw(st.sampled_from(["near", "perspective", "near_singular", "singular", "affine"]))
    spread = [[0.2, 0.2, 6.0], [0.2, 0.2, 6.0], [0.004, 0.004, 0.2]]
    if kind == "perspective":
        spread = [[0.6, 0.6, 20.0], [0.6, 0.6, 20.0], [0.03, 0.03, 0.5]]
    matrix = np.eye(3) + rng.normal(0.0, spread)
    if kind == "near_singular":
        matrix[2] = matrix[0] * rng.normal() + matrix[1] * rng.normal() + rng.normal(0, 1e-6, 3)
    elif kind == "singular":
        matrix[draw(st.integers(0, 2))] = 0.0
    elif kind == "affine":
        matrix[2] = [0.0, 0.0, 1.0]
    size = (draw(st.integers(1, 80)), draw(st.integers(1, 80)))
    fill = tuple(draw(st.sampled_from([0.0, 2.5, 3.5, 127.4, -4.0, 300.0])) for _ in range(4))
    # OpenCV reflects a far tap by a loop of reflections, one period per turn: the reference
    # would take minutes on the huge coordinates of (near-)singular or strong perspective maps
    near = kind in ("near", "affine")
    border = draw(st.sampled_from(BORDERS if near else BORDERS[:2] + BORDERS[-1:]))
    return image, matrix.astype(np.float32), size, draw(st.booleans()), fill, border


@native
@settings(max_examples=400, deadline=None)
@given(warps())
def test_the_compiled_warp_gives_opencvs_pixels(case: tuple) -> None:
    image, matrix, size, inverse, fill, border = case
    expected = opencv_warp(image, matrix, size, inverse, fill, border)
    out = np.full_like(expected, 77)
    if bindings.warp_perspective_u8(image, matrix, inverse, border, fill, out):
        np.testing.assert_array_equal(out, expected)
    else:  # a tap too far outside for the reflection loop: only with a border to reflect
        assert border != cv2.BORDER_CONSTANT


@native
@pytest.mark.parametrize("inverse", [True, False])
def test_photos_under_the_benchmarks_map_and_random_ones(inverse: bool) -> None:
    rng = np.random.default_rng(5)
    bench = np.array([1.05, 0.08, -6.0, 0.04, 0.97, 3.0, 1e-4, 2e-4, 1.0], np.float32)
    for photo in real_images(count=3, max_side=500):
        for matrix in [perspective.corner_to_center(bench.reshape(3, 3))] + [
            (np.eye(3) + rng.normal(0, [[0.1, 0.1, 9], [0.1, 0.1, 9], [3e-4, 3e-4, 0.05]]))
            for _ in range(4)
        ]:
            matrix = np.asarray(matrix, np.float32)
            for image in (photo, np.ascontiguousarray(photo[:, :, 1])):
                size = image.shape[:2]
                expected = opencv_warp(image, matrix, size, inverse, (9.0, 8.0, 7.0, 0.0))
                got = compiled_warp(image, matrix, size, inverse, (9.0, 8.0, 7.0, 0.0))
                np.testing.assert_array_equal(got, expected)


@native
def test_strided_rows_are_warped_and_other_layouts_are_left_to_opencv() -> None:
    rng = np.random.default_rng(6)
    big = rng.integers(0, 256, (60, 90, 3), dtype=np.uint8)
    matrix = np.array([[1.1, 0.1, -3], [0.05, 0.9, 2], [1e-3, 2e-3, 1]], np.float32)
    window = big[5:50, 7:80]  # rows of packed pixels, a longer stride
    for border in BORDERS:
        expected = opencv_warp(window, matrix, (40, 33), True, (0.0,) * 4, border)
        got = compiled_warp(window, matrix, (40, 33), True, (0.0,) * 4, border)
        np.testing.assert_array_equal(got, expected)
    out = np.empty((40, 33, 3), np.uint8)
    fill = (0.0,) * 4
    assert not bindings.warp_perspective_u8(big[::-1], matrix, True, 0, fill, out)
    assert not bindings.warp_perspective_u8(big[:, ::2], matrix, True, 0, fill, out)
    assert not bindings.warp_perspective_u8(big[..., :2], matrix, True, 0, fill, out[..., :2])
    four = np.empty((40, 33, 4), np.uint8)
    assert not bindings.warp_perspective_u8(np.dstack([big, big[..., :1]]), matrix, True, 0,
                                            fill, four)  # fmt: skip
    assert not bindings.warp_perspective_u8(big.astype(np.float32), matrix, True, 0, fill, out)
    assert not bindings.warp_perspective_u8(big, matrix, True, cv2.BORDER_TRANSPARENT, fill, out)


@native
def test_the_probe_tells_the_arithmetics_apart() -> None:
    outputs = []
    for arithmetic in bindings._ARITHMETICS:
        result = []
        for image, matrix, fill, size in bindings._probes():
            out = np.empty((*size, 3), np.uint8)
            mapping = bindings._source_map(matrix, True)
            assert bindings._run(image, mapping, 0, fill_bytes(fill), arithmetic, out) == 0
            result.append(out)
        outputs.append(np.concatenate([r.ravel() for r in result]))
    for i, first in enumerate(outputs):
        for second in outputs[i + 1 :]:
            assert not np.array_equal(first, second)
    assert opencv_arithmetic() in bindings._ARITHMETICS


def test_fill_values_convert_as_opencvs_saturate_cast() -> None:
    assert fill_bytes([2.5, 3.5, -0.5, 255.5]) == bytes([2, 4, 0, 255])
    assert fill_bytes([-7.0, 1e3, float("nan"), 1e10]) == bytes([0, 255, 0, 0])
    assert fill_bytes([12.0]) == bytes([12, 0, 0, 0])


@pytest.mark.parametrize("channels", [1, 3])
def test_the_operator_gives_the_same_pixels_with_and_without_the_kernel(
    channels: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(8)
    images = [img[..., :channels] for img in real_images(count=2, max_side=120)]
    images = [np.ascontiguousarray(img) for img in images]
    kwargs = {
        "matrix": [1.05, 0.08, -6.0, 0.04, 0.97, 3.0, 1e-4, 2e-4, 1.0],
        "fill_value": float(rng.integers(0, 256)),
        "interp_type": types.INTERP_LINEAR,
    }
    for inverse in (True, False):
        compiled, _ = run_op("experimental.warp_perspective", images, "HWC", inverse_map=inverse,
                             **kwargs)  # fmt: skip
        with monkeypatch.context() as patch:
            patch.setenv("FEEDLINE_NATIVE", "0")
            plain, _ = run_op("experimental.warp_perspective", images, "HWC",
                              inverse_map=inverse, **kwargs)  # fmt: skip
        for ours, theirs in zip(compiled, plain, strict=True):
            np.testing.assert_array_equal(ours, theirs)


@native
def test_the_operator_warps_rgb_photos_with_the_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = []

    def recorded(*args: object) -> bool:
        taken.append(bindings.warp_perspective_u8(*args))
        return taken[-1]

    monkeypatch.setattr(perspective, "warp_perspective_u8", recorded)
    images = real_images(count=2, max_side=120)
    run_op("experimental.warp_perspective", images, "HWC", matrix=[1, 0.1, 2, 0, 1, 3, 0, 0, 1])
    assert taken and all(taken)


@native
def test_an_opencv_no_candidate_matches_is_left_to_opencv(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = next(a for a in bindings._ARITHMETICS if a != opencv_arithmetic())
    monkeypatch.setattr(bindings, "_ARITHMETICS", (wrong,))
    opencv_arithmetic.cache_clear()
    try:
        assert opencv_arithmetic() is None
        image = real_images(count=1, max_side=120)[0]
        matrix = np.array([[1.05, 0.08, -6], [0.04, 0.97, 3], [1e-4, 2e-4, 1]], np.float32)
        out = np.empty_like(image)
        assert not bindings.warp_perspective_u8(image, matrix, True, 0, (0.0,) * 4, out)
        (warped,), _ = run_op("experimental.warp_perspective", [image], "HWC",
                              matrix=matrix.ravel().tolist(), pixel_origin="center")  # fmt: skip
        np.testing.assert_array_equal(warped, opencv_warp(image, matrix, image.shape[:2], True,
                                                          (0.0,) * 4))  # fmt: skip
    finally:
        opencv_arithmetic.cache_clear()
