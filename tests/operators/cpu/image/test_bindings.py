"""The compiled CPU kernels against the NumPy implementations they replace.

Resampling must match ``resample_reference`` (same taps, same float32 order: equal up to a last-bit
difference in a weight, i.e. 1 level on a rare pixel) and normalisation must match the NumPy
``crop_mirror_normalize`` path bit for bit, on random shapes, channel counts, windows and flips.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.native import native_enabled
from feedline.core.types import InterpType
from feedline.operators.cpu.image import bindings
from feedline.operators.cpu.image.cmn import crop_mirror_normalize
from feedline.operators.cpu.image.resample import (
    axis_weights,
    resample,
    resample_native,
    resample_reference,
)
from feedline.operators.native import CPU_LIBRARY
from tests.core.native.native_testing import require_library

require_library(CPU_LIBRARY, "the compiled CPU kernels")

FILTERS = [
    InterpType.INTERP_NN,
    InterpType.INTERP_LINEAR,
    InterpType.INTERP_TRIANGULAR,
    InterpType.INTERP_CUBIC,
    InterpType.INTERP_LANCZOS3,
    InterpType.INTERP_GAUSSIAN,
]
FILTER_IDS = {InterpType.INTERP_NN: 0, InterpType.INTERP_LINEAR: 1, InterpType.INTERP_TRIANGULAR: 1}
FILTER_IDS |= {InterpType.INTERP_CUBIC: 2, InterpType.INTERP_LANCZOS3: 3}
FILTER_IDS |= {InterpType.INTERP_GAUSSIAN: 4}


@st.composite
def axes(draw: st.DrawFn) -> tuple[int, int, float, float]:
    """``(in_size, out_size, start, end)``: windows inside, across and outside the edges, either
    direction (start > end mirrors)."""
    in_size = draw(st.integers(1, 80))
    out_size = draw(st.integers(1, 90))
    start = draw(st.floats(-6, in_size + 6, allow_nan=False))
    end = draw(st.floats(-6, in_size + 6, allow_nan=False).filter(lambda e: abs(e - start) > 1e-3))
    return in_size, out_size, start, end


@settings(max_examples=300, deadline=None)
@given(axes(), st.sampled_from(FILTERS), st.booleans())
def test_axis_weights_match_numpy(axis, interp, antialias) -> None:
    in_size, out_size, start, end = axis
    first, weights = axis_weights(in_size, out_size, start, end, interp, antialias)
    got = bindings.axis_weights_native(in_size, out_size, start, end, FILTER_IDS[interp], antialias)
    assert got is not None
    got_first, got_weights = got
    np.testing.assert_array_equal(got_first, first)
    np.testing.assert_allclose(got_weights, weights, rtol=0, atol=2e-7)
    # Every tap lies in the image and each row's weights sum to 1.
    assert (got_first >= 0).all() and (got_first + got_weights.shape[1] <= in_size).all()
    np.testing.assert_allclose(got_weights.sum(axis=1), 1.0, atol=1e-5)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 48),
    st.integers(1, 48),
    st.sampled_from([None, 1, 2, 3, 4, 5]),
    axes(),
    axes(),
    st.sampled_from(FILTERS),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_resample_matches_the_numpy_reference(
    height, width, channels, rows, cols, interp, antialias, seed
) -> None:
    rng = np.random.default_rng(seed)
    shape = (height, width) if channels is None else (height, width, channels)
    image = rng.integers(0, 256, shape, dtype=np.uint8)
    out_size = (rows[1], cols[1])
    source = (
        (rows[2] * height / rows[0], rows[3] * height / rows[0]),
        (cols[2] * width / cols[0], cols[3] * width / cols[0]),
    )
    got = resample_native(image, out_size, source, [interp, interp], antialias)
    expected = resample_reference(image, out_size, source, [interp, interp], antialias, np.uint8)
    assert got is not None and got.shape == expected.shape and got.dtype == np.uint8
    assert np.abs(got.astype(int) - expected).max(initial=0) <= 1
    assert np.mean(got != expected) <= 0.01


def test_resample_of_a_real_photo_sized_image_is_exact() -> None:
    image = np.random.default_rng(5).integers(0, 256, (374, 441, 3), dtype=np.uint8)
    linear = [InterpType.INTERP_LINEAR] * 2
    whole = ((0.0, 374.0), (0.0, 441.0))
    # Windows, a mirror, and a thumbnail whose antialiased filters have far more than 8 taps.
    for size, source in (
        ((224, 224), ((10.0, 300.0), (20.0, 330.0))),
        ((224, 224), ((0.0, 374.0), (441.0, 0.0))),
        ((17, 23), whole),
    ):
        got = resample(image, size, source)
        expected = resample_reference(image, size, source, linear, True, np.uint8)
        np.testing.assert_array_equal(got, expected)


def test_resample_writes_the_compiled_result_into_out() -> None:
    image = np.random.default_rng(6).integers(0, 256, (60, 70, 3), dtype=np.uint8)
    source = ((4.0, 55.0), (70.0, 2.0))
    out = np.zeros((20, 30, 3), np.uint8)
    assert resample(image, (20, 30), source, out=out) is out
    linear = [InterpType.INTERP_LINEAR] * 2
    np.testing.assert_array_equal(
        out, resample_reference(image, (20, 30), source, linear, True, np.uint8)
    )


def test_rgbx_to_rgb_and_strided_views() -> None:
    rng = np.random.default_rng(9)
    rgbx = rng.integers(0, 256, (60, 70, 4), dtype=np.uint8)
    linear = [InterpType.INTERP_LINEAR] * 2
    source = ((5.5, 50.0), (3.0, 66.0))
    expected = resample_reference(rgbx[:, :, :3], (20, 30), source, linear, True, np.uint8)
    rgb = np.empty((20, 30, 3), np.uint8)
    assert resample_native(rgbx, (20, 30), source, linear, True, out=rgb) is rgb
    np.testing.assert_array_equal(rgb, expected)
    # A window of a larger image (strided rows) and a channel-planar view (copied first).
    big = np.zeros((80, 90, 3), np.uint8)
    big[7:67, 9:79] = rgbx[:, :, :3]
    got = resample_native(big[7:67, 9:79], (20, 30), source, linear, True)
    np.testing.assert_array_equal(got, expected)
    planar = np.ascontiguousarray(rgbx[:, :, :3].transpose(2, 0, 1)).transpose(1, 2, 0)
    np.testing.assert_array_equal(resample_native(planar, (20, 30), source, linear, True), expected)
    # The output may be a strided window of a larger buffer.
    canvas = np.zeros((25, 40, 3), np.uint8)
    assert resample_native(rgbx, (20, 30), source, linear, True, out=canvas[2:22, 5:35]) is not None
    np.testing.assert_array_equal(canvas[2:22, 5:35], expected)
    assert not canvas[:2].any() and not canvas[:, :5].any()


def test_more_output_than_input_channels_is_refused() -> None:
    image = np.zeros((10, 10, 3), np.uint8)
    out = np.zeros((5, 5, 4), np.uint8)
    weights = np.ones((5, 1), np.float32)
    first = np.zeros(5, np.int32)
    assert not bindings.resample_u8(image, out, first, weights, first, weights)


CMN_ARGS = {"crop": None, "crop_h": None, "crop_w": None, "crop_d": None}
CMN_ARGS |= {"crop_pos_x": 0.5, "crop_pos_y": 0.5, "crop_pos_z": 0.5, "rounding": "round"}
CMN_ARGS |= {"out_of_bounds_policy": "error", "fill_values": [0.0]}


@settings(max_examples=120, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 40),
    st.integers(1, 5),
    st.booleans(),
    st.sampled_from(["HWC", "CHW"]),
    st.booleans(),
    st.floats(-3, 3, allow_nan=False),
    st.integers(0, 2**32 - 1),
)
def test_normalize_matches_numpy_bit_for_bit(
    height, width, channels, mirror, out_layout, pad, fill, seed
) -> None:
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (height + 4, width + 3, channels), dtype=np.uint8)
    window = image[2 : 2 + height, 1 : 1 + width]  # strided rows
    args = {
        **CMN_ARGS,
        "mirror": mirror,
        "mean": list(rng.uniform(0, 255, channels)),
        "std": list(rng.uniform(1, 80, channels)),
        "scale": float(rng.uniform(0.5, 2)),
        "shift": float(rng.uniform(-5, 5)),
        "output_layout": out_layout,
        "pad_output": pad,
        "fill_values": [fill],
    }
    got, layout = crop_mirror_normalize(window, "HWC", args, np.dtype(np.float32))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FEEDLINE_NATIVE", "0")
        native_enabled.cache_clear()
        try:
            expected, expected_layout = crop_mirror_normalize(window, "HWC", args, np.float32)
        finally:
            native_enabled.cache_clear()
    assert layout == expected_layout == out_layout
    np.testing.assert_array_equal(got, expected)
