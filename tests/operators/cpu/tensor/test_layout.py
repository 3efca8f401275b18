"""``transpose`` and ``pad`` against NumPy references and DALI-observed facts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.image_samples import (
    PerSample,
    generated_image,
    real_images,
    run_op,
    use_transforms,
)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


# ---------------------------------------------------------------------------------- transpose


def test_transpose_real_images_to_chw() -> None:
    images = real_images("file_tree", 2)
    out, layout = run_op("transpose", images, perm=[2, 0, 1])
    assert layout == "CHW"
    for image, got in zip(images, out, strict=True):
        assert got.shape == (3, *image.shape[:2])
        for c in range(3):
            np.testing.assert_array_equal(got[c], image[:, :, c])


@settings(max_examples=40, deadline=None)
@given(st.permutations(range(4)), st.integers(0, 2**16))
def test_transpose_moves_every_element(perm: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 1000, tuple(int(rng.integers(1, 4)) for _ in range(4))).astype(np.int32)
    (out,), layout = run_op("transpose", [data], "ABCD", perm=perm)
    assert layout == "".join("ABCD"[p] for p in perm)
    for index in np.ndindex(data.shape):
        assert out[tuple(index[p] for p in perm)] == data[index]


def test_transpose_defaults_and_layout_options() -> None:
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (out,), layout = run_op("transpose", [data], "HWC")
    assert layout == "CWH" and out.shape == (4, 3, 2)
    assert out[3, 2, 1] == data[1, 2, 3]
    (_,), layout = run_op("transpose", [data], "HWC", perm=[1, 0, 2], transpose_layout=False)
    assert layout == "HWC"
    (_,), layout = run_op("transpose", [data], "HWC", perm=[2, 0, 1], output_layout="XYZ")
    assert layout == "XYZ"


def test_transpose_rejects_bad_perm() -> None:
    with pytest.raises(OperatorError, match=r"not a permutation of 0\.\.2"):
        run_op("transpose", [np.zeros((2, 3, 4))], "HWC", perm=[0, 0, 1])


# ---------------------------------------------------------------------------------------- pad


def pad_reference(samples, axes, fill, shape=None, align=None):
    """Each padded axis: batch max (or max(shape, own)), rounded up to align; data top-left."""
    out = []
    for s in samples:
        target = list(s.shape)
        for k, axis in enumerate(axes):
            extent = max(x.shape[axis] for x in samples)
            if shape is not None and shape[k] >= 0:
                extent = max(shape[k], s.shape[axis])
            if align is not None:
                extent = int(np.ceil(extent / align[k]) * align[k])
            target[axis] = extent
        canvas = np.full(target, fill, dtype=s.dtype)
        canvas[tuple(slice(0, n) for n in s.shape)] = s
        out.append(canvas)
    return out


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    axes=st.sampled_from([(0,), (1,), (0, 1), (0, 1, 2)]),
    use_shape=st.booleans(),
    use_align=st.booleans(),
    fill=st.sampled_from([0.0, -1.0, 7.0]),
)
def test_pad_matches_reference(seed, axes, use_shape, use_align, fill) -> None:
    rng = np.random.default_rng(seed)
    samples = [
        rng.normal(size=(int(rng.integers(1, 6)), int(rng.integers(1, 6)), 2)).astype(np.float32)
        for _ in range(3)
    ]
    shape = [int(rng.integers(-1, 8)) for _ in axes] if use_shape else None
    align = [int(rng.integers(1, 5)) for _ in axes] if use_align else None
    kwargs = {"axes": list(axes), "fill_value": fill}
    if shape is not None:
        kwargs["shape"] = shape
    if align is not None:
        kwargs["align"] = align
    out, layout = run_op("pad", samples, "HWC", **kwargs)
    assert layout == "HWC"
    for got, expected in zip(out, pad_reference(samples, axes, fill, shape, align), strict=True):
        np.testing.assert_array_equal(got, expected)


def test_pad_dali_examples() -> None:
    # the 1-D examples of DALI's documentation
    samples = [np.array([3, 4, 2, 5, 4]), np.array([2, 2]), np.array([3, 199, 5])]
    samples = [s.astype(np.int32) for s in samples]
    out, _ = run_op("pad", samples, "", fill_value=-1, axes=[0])
    assert [o.tolist() for o in out] == [[3, 4, 2, 5, 4], [2, 2, -1, -1, -1], [3, 199, 5, -1, -1]]
    out, _ = run_op("pad", samples, "", fill_value=-1, axes=[0], align=[4])
    assert [len(o) for o in out] == [8, 8, 8]
    longer = [*samples, np.arange(1, 9, dtype=np.int32)]
    out, _ = run_op("pad", longer, "", fill_value=-1, axes=[0], shape=[7])
    assert [len(o) for o in out] == [7, 7, 7, 8]


def test_pad_by_axis_names_and_per_sample_fill() -> None:
    rng = np.random.default_rng(3)
    images = [generated_image(rng, 4, 5), generated_image(rng, 6, 3)]
    out, _ = run_op("pad", images, "HWC", axis_names="W", fill_value=PerSample([1.0, 2.0]))
    assert [o.shape for o in out] == [(4, 5, 3), (6, 5, 3)]
    assert (out[1][:, 3:] == 2).all()
    np.testing.assert_array_equal(out[0], images[0])


@pytest.mark.parametrize(
    ("dtype", "fill", "expected"),
    [
        (np.uint8, -1, 255),
        (np.uint8, 300, 44),
        (np.uint8, -1.5, 255),
        (np.uint8, 2.7, 2),
        (np.int8, 200, -56),
        (np.int16, -3.9, -3),
        (np.float16, 1e6, np.inf),
        (np.float32, 0.25, 0.25),
    ],
)
def test_pad_fill_value_is_converted_as_dali_converts_it(dtype, fill, expected) -> None:
    samples = [np.ones(1, dtype), np.ones(2, dtype)]
    out, _ = run_op("pad", samples, None, fill_value=fill)
    assert out[0].dtype == dtype
    assert out[0].tolist() == [1, expected]


def test_pad_axes_given_per_sample() -> None:
    samples = [np.ones((2, 2), np.int32), np.ones((1, 3), np.int32)]
    axes = PerSample([np.int32([1]), np.int32([0])])
    out, _ = run_op("pad", samples, None, axes=axes)
    assert [o.shape for o in out] == [(2, 3), (2, 3)]  # each to the batch's largest extent
    assert out[0][:, 2].tolist() == [0, 0] and out[1][1].tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"axes": [0], "axis_names": "H"}, "mutually exclusive"),
        ({"axes": [3]}, r"Axis 3 out of range. Expected range is \[-3, 2\] for a 3D input"),
        ({"axis_names": "D"}, "'D'"),
        ({"shape": [1, 2]}, "needs 1 or 3 values"),
        ({"align": [0]}, r"Values of `align` argument must be positive\. Got \[0, 0, 0\]"),
    ],
)
def test_pad_errors(kwargs: dict, message: str) -> None:
    samples = [np.zeros((2, 3, 3), np.uint8), np.zeros((4, 1, 3), np.uint8)]
    with pytest.raises(OperatorError, match=message):
        run_op("pad", samples, "HWC", **kwargs)
