"""``one_hot``, ``expand_dims``, ``squeeze`` and ``cast_like`` against DALI's definitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, fn, pipeline_def, types
from feedline.operators.cpu.arrays.shape_ops import one_hot
from tests.operators.cpu.image_samples import run_op


def definition(sample: np.ndarray, num_classes: int, axis: int, on: float, off: float) -> list:
    """DALI's formula, element by element."""
    k = sample.ndim if axis == -1 else axis
    out_shape = (*sample.shape[:k], num_classes, *sample.shape[k:])
    out = np.empty(out_shape, np.float64)
    for index in np.ndindex(*out_shape):
        i = index[k]
        cls = sample[index[:k] + index[k + 1 :]]
        out[index] = on if i == cls else off
    return out.tolist()


@given(
    hnp.arrays(
        np.int32, hnp.array_shapes(min_dims=0, max_dims=3, max_side=3), elements=st.integers(-1, 5)
    ),
    st.integers(1, 5),
    st.data(),
)
def test_one_hot_follows_the_definition(
    sample: np.ndarray, classes: int, data: st.DataObject
) -> None:
    axis = data.draw(st.integers(-1, sample.ndim))
    got = one_hot(sample, classes, axis, 2.5, -1.0, np.dtype(np.float32))
    assert got.dtype == np.float32
    assert got.tolist() == definition(sample, classes, axis, 2.5, -1.0)


def test_one_hot_in_a_pipeline_with_layout_and_dtype() -> None:
    labels = [np.array([0, 2, 1], np.int64), np.array([3, 1, 1], np.int64)]
    out, layout = run_op(
        "one_hot", labels, "W", num_classes=3, axis=0, axis_name="C", dtype=types.UINT8
    )
    assert layout == "CW"
    assert out[0].dtype == np.uint8
    assert out[0].tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert out[1].tolist() == [[0, 0, 0], [0, 1, 1], [0, 0, 0]]  # 3 is out of range


def test_one_hot_legacy_scalars_and_default_layout() -> None:
    labels = [np.array([[2]], np.int32), np.array([[0]], np.int32)]
    out, layout = run_op("one_hot", labels, "HW", num_classes=4)
    assert layout == ""
    assert [o.tolist() for o in out] == [[0, 0, 1, 0], [1, 0, 0, 0]]
    # an explicit axis turns the legacy rule off: the (1, 1) samples get a third axis
    out, _ = run_op("one_hot", labels, "HW", num_classes=4, axis=-1)
    assert out[0].shape == (1, 1, 4)
    scalars = [np.array(1, np.uint8), np.array(5, np.uint8)]
    out, layout = run_op("one_hot", scalars, None, num_classes=3, axis_name="C")
    assert layout == "C" and out[0].tolist() == [0.0, 1.0, 0.0] and out[1].tolist() == [0.0] * 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_classes": 0}, "num_classes"),
        ({"num_classes": 3, "axis": 3}, r"out of range \[-1, 1\]"),
        ({"num_classes": 3, "axis_name": "CD"}, 'It must be a single character, got "CD"'),
        ({"num_classes": 3, "dtype": float}, "Python type 'float'"),
        ({"num_classes": 3, "axis_name": "C"}, "Input layout mismatch - expected input layout"),
    ],
)
def test_one_hot_errors(kwargs: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError, TypeError), match=message):
        run_op("one_hot", [np.array([1, 2], np.int32)], None, **kwargs)


def test_one_hot_axis_name_errors_are_runtime_errors_as_in_dali() -> None:
    for name in ("", "CD"):
        with pytest.raises(RuntimeError, match="Unsupported axis_name value"):
            run_op("one_hot", [np.array([1, 2], np.int32)], "W", num_classes=3, axis_name=name)


def test_expand_dims_inserts_unit_axes_and_names() -> None:
    data = [np.arange(6, dtype=np.int16).reshape(2, 3)] * 2
    out, layout = run_op("expand_dims", data, "HW", axes=[0, 3], new_axis_names="FC")
    assert layout == "FHWC" and out[0].shape == (1, 2, 3, 1)
    np.testing.assert_array_equal(out[0].reshape(2, 3), data[0])
    out, layout = run_op("expand_dims", data, "HW", axes=[1])
    assert layout == "" and out[0].shape == (2, 1, 3)
    ragged = [np.zeros((2, 3), np.float32), np.zeros((4, 1), np.float32)]
    out, _ = run_op("expand_dims", ragged, None, axes=[2])
    assert [o.shape for o in out] == [(2, 3, 1), (4, 1, 1)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"axes": [3]}, "Data has not enough dimensions to add new axes"),
        ({"axes": [0, -1]}, "Axis value can't be negative"),
        ({"axes": [0, 0]}, "Duplicate axis index found"),
        ({"axes": [0], "new_axis_names": "AB"}, "Specified 1 new dimensions, but layout contains"),
        ({"axes": [0, 0], "new_axis_names": "A"}, "Specified 2 new dimensions"),  # before repeats
        ({"axes": [5, -1]}, "Axis value can't be negative"),  # before the range
    ],
)
def test_expand_dims_errors(kwargs: dict, message: str) -> None:
    # DALI raises RuntimeError for these; feedline's error is also one.
    with pytest.raises(RuntimeError, match=message):
        run_op("expand_dims", [np.zeros((2, 2), np.uint8)], "HW", **kwargs)


def test_expand_dims_names_need_an_input_layout() -> None:
    with pytest.raises(RuntimeError, match="requires an input with a proper layout"):
        run_op("expand_dims", [np.zeros((2, 2), np.uint8)], None, axes=[1], new_axis_names="C")

    # a scalar has nothing to name, so names are fine without a layout
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def scalars():
        data = fn.external_source(source=lambda: [np.zeros((), np.uint8)], batch=True)
        return fn.expand_dims(data, axes=[0], new_axis_names="X")

    (out,) = scalars().run()
    assert out.layout() == "X" and out.at(0).shape == (1,)


def test_expand_dims_without_new_axes_keeps_the_layout() -> None:
    out, layout = run_op("expand_dims", [np.zeros((2, 3), np.uint8)], "HW", axes=[])
    assert layout == "HW" and out[0].shape == (2, 3)


def test_squeeze_by_axes_and_names() -> None:
    data = [np.arange(6, dtype=np.float32).reshape(1, 2, 1, 3)] * 2
    out, layout = run_op("squeeze", data, "FHCW", axes=[0, -2])
    assert layout == "HW" and out[0].shape == (2, 3)
    out, layout = run_op("squeeze", data, "FHCW", axis_names="C")
    assert layout == "FHW" and out[0].shape == (1, 2, 3)
    out, layout = run_op("squeeze", data, "FHCW")
    assert layout == "FHCW" and out[0].shape == (1, 2, 1, 3)  # default: no axes, unchanged
    empty = [np.zeros((0, 5, 1), np.uint8)]
    out, _ = run_op("squeeze", empty, None, axes=[1, 2])  # volume 0 before and after
    assert out[0].shape == (0,)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"axes": [1]}, "Requested a shape with 3 elements but the original shape has 6 elements"),
        ({"axes": [4]}, "out of range"),
        ({"axis_names": "X"}, "Axis 'X' is not present in the input layout"),
        ({"axes": [0], "axis_names": "F"}, "Provided both ``axes`` and ``axis_names`` arguments"),
        ({"axes": [2, 2]}, "Specified at least twice same dimension to remove"),
    ],
)
def test_squeeze_errors(kwargs: dict, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op("squeeze", [np.zeros((1, 2, 1, 3), np.uint8)], "FHCW", **kwargs)


def test_cast_like_takes_the_type_of_the_second_input() -> None:
    data = [np.array([-1.5, 0.4, 2.5, 300.0], np.float32)] * 2
    like = [np.zeros(1, np.uint8)] * 2
    out, layout = run_op("cast_like", data, "W", like)
    assert layout == "W"
    assert out[0].dtype == np.uint8 and out[0].tolist() == [0, 0, 3, 255]
    ints = [np.array([1, 2], np.int32), np.array([3], np.int32)]
    out, _ = run_op("cast_like", ints, None, [np.zeros(2, np.float64)] * 2)
    assert [o.dtype for o in out] == [np.float64, np.float64]
    assert out[1].tolist() == [3.0]


def test_cast_with_a_python_type_is_refused_not_float64() -> None:
    data = [np.array([1.5], np.float32)]
    with pytest.raises(TypeError, match=r"cast: argument 'dtype' got the Python type 'float'"):
        run_op("cast", data, None, dtype=float)
    with pytest.raises(TypeError, match=r"'int'.*types.INT32 or types.INT64"):
        run_op("cast", data, None, dtype=int)
