"""``filter`` and ``laplacian`` against direct NumPy correlations written from their definitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, types
from feedline.operators.cpu.filters.convolution import binomial_window, derivative_window
from tests.operators.cpu.image_samples import PerSample, run_op

#: DALI's border names → NumPy's pad modes.
PAD_MODES = {
    "reflect_101": "reflect",
    "reflect_1001": "symmetric",
    "wrap": "wrap",
    "clamp": "edge",
    "constant": "constant",
}


def correlate_reference(
    image: np.ndarray, taps: np.ndarray, anchor: tuple[int, int], border: str, fill: float = 0
) -> np.ndarray:
    """out[y, x] = sum_ij taps[i, j] * image[y - a + i, x - b + j], in float64, HW input."""
    rows, cols = taps.shape
    a, b = anchor
    pad = ((a, rows - 1 - a), (b, cols - 1 - b))
    extra = {"constant_values": fill} if border == "constant" else {}
    padded = np.pad(image.astype(np.float64), pad, mode=PAD_MODES[border], **extra)
    out = np.zeros(image.shape)
    for i in range(rows):
        for j in range(cols):
            out += taps[i, j] * padded[i : i + image.shape[0], j : j + image.shape[1]]
    return out


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(np.float32, st.tuples(st.integers(3, 9), st.integers(3, 9)),
               elements=st.floats(-50, 50, width=32)),
    hnp.arrays(np.float32, st.tuples(st.integers(1, 3), st.integers(1, 3)),
               elements=st.floats(-2, 2, width=32)),
    st.sampled_from(sorted(PAD_MODES)),
    st.data(),
)  # fmt: skip
def test_filter_is_a_correlation_with_the_chosen_border(
    image: np.ndarray, taps: np.ndarray, border: str, data: st.DataObject
) -> None:
    anchor = (data.draw(st.integers(0, taps.shape[0] - 1)),
              data.draw(st.integers(0, taps.shape[1] - 1)))  # fmt: skip
    fill = np.float32(data.draw(st.sampled_from([0.0, 7.5])))
    extra = [[np.array(fill, np.float32)]] if border == "constant" else []
    out, layout = run_op(
        "filter", [image], "HW", [taps], *extra, border=border, anchor=list(anchor)
    )
    expected = correlate_reference(image, taps, anchor, border, float(fill))
    assert layout == "HW"
    np.testing.assert_allclose(out[0], expected, rtol=1e-5, atol=1e-3)


def test_filter_rounds_halves_to_even_and_saturates() -> None:
    row = np.array([[1, 3, 5, 7, 200]], np.uint8)
    (out,), _ = run_op("filter", [row], "HW", [np.array([[0.5]], np.float32)])
    np.testing.assert_array_equal(out, [[0, 2, 2, 4, 100]])
    (out,), _ = run_op("filter", [row], "HW", [np.array([[2.0]], np.float32)])
    np.testing.assert_array_equal(out, [[2, 6, 10, 14, 255]])
    (out,), _ = run_op("filter", [row], "HW", [np.array([[-1.0]], np.float32)], dtype=types.FLOAT)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, -row.astype(np.float32))


def test_valid_mode_keeps_only_full_windows() -> None:
    rng = np.random.default_rng(1)
    image = rng.integers(0, 100, (7, 9)).astype(np.float32)
    taps = rng.normal(size=(3, 4)).astype(np.float32)
    (out,), _ = run_op("filter", [image], "HW", [taps], mode="valid", anchor=[2, 3])
    full = correlate_reference(image, taps, (0, 0), "reflect_101")
    assert out.shape == (5, 6)
    np.testing.assert_allclose(out, full[:5, :6], rtol=1e-5, atol=1e-3)


def test_layouts_channels_and_per_frame_filters() -> None:
    rng = np.random.default_rng(2)
    video = rng.integers(0, 256, (2, 6, 8, 3), dtype=np.uint8)
    taps = rng.uniform(0, 0.3, (2, 3, 3)).astype(np.float32)
    (out,), layout = run_op("filter", [video], "FHWC", [taps])
    assert layout == "FHWC" and out.shape == video.shape
    for f in range(2):
        for c in range(3):
            expected = correlate_reference(video[f, :, :, c], taps[f], (1, 1), "reflect_101")
            np.testing.assert_array_equal(out[f, :, :, c], np.clip(np.rint(expected), 0, 255))
    planar = np.ascontiguousarray(video[0].transpose(2, 0, 1))
    (chw,), _ = run_op("filter", [planar], "CHW", [taps[0]])
    np.testing.assert_array_equal(chw.transpose(1, 2, 0), out[0])
    (alias,), _ = run_op("experimental.filter", [planar], "CHW", [taps[0]])
    np.testing.assert_array_equal(alias, chw)


@pytest.mark.parametrize(
    ("image", "taps", "kwargs", "message"),
    [
        (np.zeros((5, 5), np.int8), np.ones((3, 3), np.float32), {}, "int8"),
        (np.zeros((5, 5), np.uint8), np.ones((3, 3), np.float64), {}, "filter type"),
        (np.zeros((5, 5), np.uint8), np.ones((3, 3), np.float32), {"anchor": [3, 0]},
         "within the filter"),
        (np.zeros((5, 5), np.uint8), np.ones((3, 3), np.float32), {"dtype": types.INT16},
         "same as input, FLOAT or skipped"),
        (np.zeros((5, 5), np.uint8), np.ones((6, 2), np.float32), {"mode": "valid"},
         "bigger than the sample"),
        (np.zeros((5, 5), np.uint8), np.ones((3, 3, 3), np.float32), {}, "dimensionality"),
    ],
)  # fmt: skip
def test_filter_errors_name_the_problem(
    image: np.ndarray, taps: np.ndarray, kwargs: dict, message: str
) -> None:
    with pytest.raises(OperatorError, match=message):
        run_op("filter", [image], "HW", [taps], **kwargs)


def test_per_sample_anchors_are_placed_and_checked_sample_by_sample() -> None:
    image = np.arange(49, dtype=np.uint8).reshape(7, 7)
    taps = np.zeros((3, 3), np.float32)
    taps[0, 0] = 1  # the output is the image shifted by the anchor
    anchors = PerSample([np.array([0, 0], np.int32), np.array([2, 1], np.int32)])
    outs, _ = run_op("filter", [image, image], "HW", [taps, taps], anchor=anchors,
                     border="constant")  # fmt: skip
    for out, (ay, ax) in zip(outs, [(0, 0), (2, 1)], strict=True):
        expected = correlate_reference(image, taps, (ay, ax), "constant")
        np.testing.assert_array_equal(out, expected)
    bad = PerSample([np.array([1, 1], np.int32), np.array([1, 3], np.int32)])
    for _ in range(2):  # the same message whether or not the valid anchor was seen before
        with pytest.raises(OperatorError, match=r"Got anchor \{1, 3\} .* sample of idx 1\."):
            run_op("filter", [image, image], "HW", [taps, taps], anchor=bad)
    with pytest.raises(OperatorError, match='"anchor" expected shape 2 but got 3 values'):
        run_op("filter", [image], "HW", [taps], anchor=[1, 1, 1])


def test_filter_needs_two_spatial_axes_and_a_matching_fill_type() -> None:
    taps = np.ones((3, 3), np.float32)
    with pytest.raises(OperatorError, match="Got 3 spatial dimensions"):
        run_op("filter", [np.zeros((4, 4, 4), np.uint8)], None, [taps])
    with pytest.raises(OperatorError, match="frames must be an outermost"):
        run_op("filter", [np.zeros((3, 2, 4, 4), np.uint8)], "CFHW", [taps])
    with pytest.raises(OperatorError, match="fill_value"):
        run_op("filter", [np.zeros((4, 4), np.uint8)], "HW", [taps],
               [np.array(1.0, np.float32)], border="constant")  # fmt: skip


def test_windows_are_binomial_and_second_difference() -> None:
    np.testing.assert_array_equal(binomial_window(1), [1])
    np.testing.assert_array_equal(binomial_window(5), [1, 4, 6, 4, 1])
    np.testing.assert_array_equal(derivative_window(3), [1, -2, 1])
    np.testing.assert_array_equal(derivative_window(5), [1, 0, -2, 0, 1])
    assert derivative_window(7).sum() == 0


def separable_reference(data: np.ndarray, windows: list[np.ndarray]) -> np.ndarray:
    """Correlate every axis of ``data`` with its window, mirrored borders (reflect-101)."""
    out = data.astype(np.float64)
    for axis, taps in enumerate(windows):
        r = len(taps) // 2
        pad = [(0, 0)] * out.ndim
        pad[axis] = (r, r)
        padded = np.pad(out, pad, mode="reflect")
        acc = np.zeros(out.shape)
        for k, weight in enumerate(taps):
            index = [slice(None)] * out.ndim
            index[axis] = slice(k, k + out.shape[axis])
            acc += weight * padded[tuple(index)]
        out = acc
    return out


@pytest.mark.parametrize("shape", [(11,), (7, 9), (5, 6, 7)])
@pytest.mark.parametrize(("window", "smoothing"), [(3, None), (5, 1), (5, 3)])
def test_laplacian_sums_the_second_derivatives(shape: tuple, window: int, smoothing) -> None:
    data = np.random.default_rng(3).uniform(-10, 10, shape).astype(np.float32)
    kwargs = {"window_size": window, "dtype": types.FLOAT}
    if smoothing is not None:
        kwargs["smoothing_size"] = smoothing
    (out,), _ = run_op("laplacian", [data], None, **kwargs)
    expected = np.zeros(shape)
    for j in range(len(shape)):
        windows = [
            derivative_window(window) if i == j else binomial_window(smoothing or window)
            for i in range(len(shape))
        ]
        expected += separable_reference(data, windows)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-2)


def test_laplacian_of_an_impulse_is_its_kernel_and_normalisation_scales_it() -> None:
    impulse = np.zeros((9, 9), np.float32)
    impulse[4, 4] = 1
    (out,), _ = run_op("laplacian", [impulse], "HW", window_size=5, dtype=types.FLOAT)
    d, s = derivative_window(5), binomial_window(5)
    kernel = np.outer(d, s) + np.outer(s, d)
    np.testing.assert_allclose(out[2:7, 2:7], kernel[::-1, ::-1])
    (norm,), _ = run_op("laplacian", [impulse], "HW", window_size=5, dtype=types.FLOAT,
                        normalized_kernel=True)  # fmt: skip
    np.testing.assert_allclose(norm, out * 2.0 ** (2 + 2 - 10))
    (scaled,), _ = run_op("laplacian", [impulse], "HW", window_size=5, dtype=types.FLOAT,
                          scale=[0.5, 0.0])  # fmt: skip
    np.testing.assert_allclose(scaled[2:7, 2:7], 0.5 * np.outer(d, s)[::-1, ::-1])


def test_laplacian_float_zeros_are_positive_and_windows_are_shared_unchanged() -> None:
    negative_zeros = np.full((6, 7), -0.0, np.float32)
    for _ in range(2):  # the second run reuses the cached windows
        (out,), _ = run_op("laplacian", [negative_zeros], "HW", window_size=5)
        assert out.dtype == np.float32 and not np.signbit(out).any()
    np.testing.assert_array_equal(binomial_window(5), [1, 4, 6, 4, 1])
    np.testing.assert_array_equal(derivative_window(5), [1, 0, -2, 0, 1])


def test_laplacian_layouts_and_integer_outputs() -> None:
    rng = np.random.default_rng(4)
    image = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    (hwc,), layout = run_op("laplacian", [image], "HWC")
    assert layout == "HWC" and hwc.dtype == np.uint8
    (as_float,), _ = run_op("laplacian", [image], "HWC", dtype=types.FLOAT)
    np.testing.assert_array_equal(hwc, np.clip(np.rint(as_float), 0, 255))
    (chw,), _ = run_op("laplacian", [np.ascontiguousarray(image.transpose(2, 0, 1))], "CHW",
                       dtype=types.FLOAT)  # fmt: skip
    np.testing.assert_array_equal(chw.transpose(1, 2, 0), as_float)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"window_size": 4}, "odd integer between 3 and 31, got 4 for sample: 0"),
        ({"window_size": 33}, "between 3 and 31"),
        ({"smoothing_size": 2}, "between 1 and 31"),
        ({"window_size": [3, 3, 3]}, "a list of 2 elements. 3 given"),
        ({"normalized_kernel": True, "scale": 2.0}, "cannot be specified when"),
        ({"dtype": types.INT16}, "same as input, FLOAT or skipped"),
    ],
)
def test_laplacian_argument_errors(kwargs: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op("laplacian", [np.zeros((5, 5), np.uint8)], "HW", **kwargs)


def test_laplacian_rejects_float64_and_too_many_axes() -> None:
    with pytest.raises(OperatorError, match="float64"):
        run_op("laplacian", [np.zeros((5, 5))], "HW")
    with pytest.raises(OperatorError, match="empty layout"):
        run_op("laplacian", [np.zeros((2, 3, 4, 5), np.float32)], None)


def test_laplacian_takes_per_sample_windows_and_scales() -> None:
    images = [np.random.default_rng(i).uniform(0, 9, (7, 8)).astype(np.float32) for i in range(2)]
    windows = [np.array([3, 5], np.int32), np.array([7], np.int32)]
    scales = [np.array([1.0, 0.5], np.float32), np.array([2.0], np.float32)]
    out, _ = run_op("laplacian", images, "HW", window_size=PerSample(windows),
                    scale=PerSample(scales), dtype=types.FLOAT)  # fmt: skip
    for image, result, window, scale in zip(images, out, windows, scales, strict=True):
        w = np.broadcast_to(window, (2,))
        s = np.broadcast_to(scale, (2,))
        expected = s[0] * separable_reference(image, [derivative_window(w[0]),
                                                      binomial_window(w[0])])  # fmt: skip
        expected += s[1] * separable_reference(image, [binomial_window(w[1]),
                                                       derivative_window(w[1])])  # fmt: skip
        np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-2)
