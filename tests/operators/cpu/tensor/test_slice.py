"""``slice``: argument forms, rounding and out-of-bounds policies against ``np.pad`` references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, types
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.image_samples import PerSample, real_images, run_op, use_transforms


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


NP_PAD_MODES = {
    "pad": "constant",
    "constant": "constant",
    "edge": "edge",
    "clamp": "edge",
    "reflect": "symmetric",
    "reflect_1001": "symmetric",
    "reflect_101": "reflect",
    "wrap": "wrap",
}


def window_reference(
    data: np.ndarray, window: dict[int, tuple[int, int]], policy: str, fill: float = 0.0
) -> np.ndarray:
    """Pad generously with ``np.pad`` in the policy's mode, then cut the window out."""
    margin = max([abs(v) for pair in window.values() for v in pair] + list(data.shape)) * 3
    widths = [(margin, margin) if axis in window else (0, 0) for axis in range(data.ndim)]
    mode = NP_PAD_MODES[policy]
    kwargs = {"constant_values": fill} if mode == "constant" else {}
    padded = np.pad(data, widths, mode=mode, **kwargs)
    index = [slice(None)] * data.ndim
    for axis, (start, end) in window.items():
        index[axis] = slice(start + margin, end + margin)
    return padded[tuple(index)]


def test_real_image_crop_named_and_positional() -> None:
    images = real_images("file_tree", 2)
    out, layout = run_op("slice", images, start=(10, 5), shape=(40, 30))
    assert layout == "HWC"
    for image, got in zip(images, out, strict=True):
        np.testing.assert_array_equal(got, image[5:35, 10:50])  # (x, y) order by default
    anchors = [np.array([0.25, 0.5], np.float32)] * 2
    shapes = [np.array([0.5, 0.25], np.float32)] * 2
    out, _ = run_op("slice", images, "HWC", anchors, shapes)
    for image, got in zip(images, out, strict=True):
        h, w = image.shape[:2]
        x0, y0 = math.floor(0.25 * w + 0.5), math.floor(0.5 * h + 0.5)
        x1, y1 = math.floor(0.75 * w + 0.5), math.floor(0.75 * h + 0.5)
        np.testing.assert_array_equal(got, image[y0:y1, x0:x1])


# (extent, rel_start, rel_shape) -> (start, size) observed with DALI 2.4 CPU (7x9 image)
DALI_RELATIVE = [
    ((7, 9), (0.25, 0.25), (0.5, 0.5), (2, 2), (3, 5)),
    ((7, 9), (0.15, 0.15), (0.5, 0.5), (1, 1), (4, 5)),
    ((7, 9), (0.05, 0.05), (0.55, 0.55), (0, 0), (4, 5)),
    ((7, 9), (0.16, 0.16), (0.34, 0.34), (1, 1), (3, 4)),
]


@pytest.mark.parametrize(("hw", "rel_start", "rel_shape", "start", "size"), DALI_RELATIVE)
def test_relative_rounding_matches_dali(hw, rel_start, rel_shape, start, size) -> None:
    data = np.arange(hw[0] * hw[1] * 2, dtype=np.int32).reshape(*hw, 2)
    (out,), _ = run_op("slice", [data], rel_start=rel_start, rel_shape=rel_shape)
    y0, x0 = start
    np.testing.assert_array_equal(out, data[y0 : y0 + size[0], x0 : x0 + size[1]])


def test_argument_forms() -> None:
    data = np.arange(7 * 9 * 2, dtype=np.int32).reshape(7, 9, 2)
    cases = [
        ({"start": (1, 2), "end": (3, 4)}, data[2:4, 1:3]),
        ({"start": (1, 2)}, data[2:, 1:]),
        ({"shape": (3, 4)}, data[:4, :3]),
        ({"start": (1,), "shape": (3,)}, data[1:4, 1:4]),
        ({"start": (1,), "shape": (3,), "axes": (0,)}, data[1:4]),
        ({"start": (1,), "shape": (3,), "axis_names": "H"}, data[1:4]),
        ({"start": (1, 2), "shape": (3, 4), "axes": (0, 1)}, data[1:4, 2:6]),
        ({"rel_start": (0.3, 0.3), "rel_end": (0.8, 0.8)}, data[2:6, 3:7]),
        ({"start": (1, 2), "shape": (0, 4)}, data[2:6, 1:1]),
    ]
    for kwargs, expected in cases:
        (out,), _ = run_op("slice", [data], **kwargs)
        np.testing.assert_array_equal(out, expected, err_msg=str(kwargs))
    (out,), _ = run_op("slice", [data], None, start=(1, 2), shape=(3, 4))
    np.testing.assert_array_equal(out, data[2:6, 1:4])  # no layout: axes (1, 0)


@settings(max_examples=80, deadline=None)
@given(
    policy=st.sampled_from(sorted(NP_PAD_MODES)),
    seed=st.integers(0, 2**16),
)
def test_out_of_bounds_policies_match_np_pad(policy: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    h, w = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    data = rng.integers(0, 200, (h, w, 3)).astype(np.uint8)
    x0, y0 = int(rng.integers(-12, 12)), int(rng.integers(-12, 12))
    sw, sh = int(rng.integers(0, 20)), int(rng.integers(0, 20))
    if policy == "reflect_101" and (h == 1 or w == 1):
        return  # np.pad's reflect of a single element is undefined; covered below
    (out,), _ = run_op(
        "slice",
        [data],
        start=(x0, y0),
        shape=(sw, sh),
        out_of_bounds_policy=policy,
        fill_values=(5.0,),
    )
    expected = window_reference(data, {0: (y0, y0 + sh), 1: (x0, x0 + sw)}, policy, 5.0)
    np.testing.assert_array_equal(out, expected)


def test_reflect_101_of_one_pixel_repeats_it() -> None:
    data = np.array([[[7]]], np.uint8)
    (out,), _ = run_op(
        "slice", [data], start=(-2, -1), shape=(5, 3), out_of_bounds_policy="reflect_101"
    )
    assert out.shape == (3, 5, 1) and (out == 7).all()


def test_trim_per_channel_fill_and_dtype() -> None:
    data = np.arange(7 * 9 * 2, dtype=np.uint8).reshape(7, 9, 2)
    (out,), _ = run_op(
        "slice", [data], start=(-2, -1), shape=(30, 4), out_of_bounds_policy="trim_to_shape"
    )
    np.testing.assert_array_equal(out, data[0:3, 0:9])
    (out,), _ = run_op(
        "slice",
        [data],
        start=(-1, -2),
        shape=(3, 4),
        out_of_bounds_policy="pad",
        fill_values=(5, 6),
    )
    np.testing.assert_array_equal(out[:2, :, 0], 5)
    np.testing.assert_array_equal(out[:2, :, 1], 6)
    np.testing.assert_array_equal(out[2:, 1:], data[0:2, 0:2])
    (out,), _ = run_op(
        "slice",
        [data],
        start=(-1, 0),
        shape=(3, 4),
        dtype=types.FLOAT,
        out_of_bounds_policy="pad",
        fill_values=(-1.5,),
    )
    assert out.dtype == np.float32
    assert (out[:, 0] == -1.5).all()
    np.testing.assert_array_equal(out[:, 1:], data[0:4, 0:2])


def test_per_sample_windows() -> None:
    data = [np.arange(50, dtype=np.int16).reshape(5, 10)] * 2
    out, _ = run_op(
        "slice", data, "HW", start=PerSample([(1, 0), (3, 2)]), shape=PerSample([(2, 2), (4, 1)])
    )
    np.testing.assert_array_equal(out[0], data[0][0:2, 1:3])
    np.testing.assert_array_equal(out[1], data[1][2:3, 3:7])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"start": (-1, -1), "shape": (3, 4)}, "out of bounds with current policy"),
        ({"start": (1, 1), "rel_start": (0.1, 0.1)}, "either 'start' or 'rel_start'"),
        ({"start": (1, 1), "end": (3, 3), "shape": (1, 1)}, "mutually exclusive"),
        ({"start": (1, 2, 3)}, "needs 2 values"),
        ({"start": (3, 3), "end": (1, 1)}, "ends"),
        ({"axes": (5,), "start": (1,)}, "out of range"),
        ({"axis_names": "D", "start": (1,)}, "'D'"),
        ({"start": (0, 0), "dtype": types.INT16}, "INT16 is not supported"),
        ({"start": (-1, 0), "out_of_bounds_policy": "pad", "fill_values": (1, 2, 3)}, "3 fill"),
    ],
)
def test_errors(kwargs: dict, message: str) -> None:
    data = np.zeros((5, 6, 2), np.uint8)
    with pytest.raises(OperatorError, match=message):
        run_op("slice", [data], **kwargs)


def test_positional_and_named_conflict() -> None:
    data = [np.zeros((5, 6, 2), np.uint8)]
    anchor = [np.array([0, 0], np.int32)]
    shape = [np.array([2, 2], np.int32)]
    with pytest.raises(OperatorError, match="cannot be combined"):
        run_op("slice", data, "HWC", anchor, shape, start=(1, 1))
    with pytest.raises(ValueError, match="out_of_bounds_policy"):
        run_op("slice", data, start=(1, 1), out_of_bounds_policy="mirror")


def test_empty_axes_mean_every_axis() -> None:
    volume = np.arange(4 * 6 * 2, dtype=np.int16).reshape(4, 6, 2)
    anchor = [np.float32([0.25, 0.5, 0.0])] * 2
    shape = [np.float32([0.5, 0.5, 1.0])] * 2
    out, _ = run_op("slice", [volume, volume], None, anchor, shape, axes=[])
    np.testing.assert_array_equal(out[0], volume[1:3, 3:6, :])


def test_end_and_shape_arguments_exclude_each_other_first() -> None:
    images = [np.zeros((5, 4, 3), np.uint8)]
    anchor, shape = [np.int32([1, 2])], [np.int32([3, 1])]
    with pytest.raises(OperatorError, match='"end", "rel_end", "shape", and "rel_shape"'):
        run_op("slice", images, "HWC", anchor, shape, start=(1, 2), end=(4, 3), shape=(3, 1))
