"""``zeros``, ``ones``, ``full`` and their ``*_like`` forms."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, fn, types
from feedline.operators.cpu.constants.kernels import broadcast_fill
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed


def test_zeros_and_ones_default_to_int32_scalars() -> None:
    (zeros, layout), (ones, _) = build(lambda: (fn.zeros(), fn.ones()))
    assert layout == ""
    assert [z.shape for z in zeros] == [(), ()] and zeros[0].dtype == np.int32
    assert ones[1].tolist() == 1


def test_shape_dtype_and_layout() -> None:
    ((out, layout),) = build(lambda: fn.ones(shape=[2, 3], dtype=types.UINT8, layout="HW"))
    assert layout == "HW" and out[0].dtype == np.uint8 and out[0].tolist() == [[1] * 3] * 2


def test_shape_per_sample() -> None:
    shapes = [np.array([1, 2], np.int32), np.array([3, 0], np.int32)]
    ((out, _),) = build(lambda: fn.zeros(shape=feed(shapes), dtype=types.FLOAT))
    assert [o.shape for o in out] == [(1, 2), (3, 0)]


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        (
            lambda: fn.zeros(shape=[2, 3], layout="HWC"),
            "Layout 'HWC' has 3 dimensions but output shape has 2",
        ),
        (lambda: fn.ones(shape=[-1]), "negative extent"),
        (
            lambda: fn.full(feed([np.ones(2, np.float32)] * 2), shape=[2, 3]),
            r"shape \(2,\) cannot be broadcast to the output shape \(2, 3\)",
        ),
    ],
)
def test_errors(graph: Any, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        build(graph)


def test_full_without_shape_is_a_scalar_of_the_first_value() -> None:
    ((out, _),) = build(lambda: fn.full(feed([np.array([[7, 8], [9, 10]], np.int16)] * 2)))
    assert out[0].shape == () and out[0].dtype == np.int16 and out[0].tolist() == 7


def test_like_forms_take_shape_type_and_layout() -> None:
    like = [np.arange(6, dtype=np.int16).reshape(2, 3), np.zeros((1, 4), np.int16)]

    def graph() -> Any:
        data = feed(like, "HW")
        return (
            fn.zeros_like(data),
            fn.ones_like(data, dtype=types.FLOAT),
            fn.full_like(data, feed([np.float32(3.5), np.float32(-70000)])),
            fn.full_like(data, 7),
        )

    (zeros, z_layout), (ones, _), (full, f_layout), (sevens, _) = build(graph)
    assert z_layout == f_layout == "HW"
    assert zeros[1].dtype == np.int16 and zeros[1].shape == (1, 4) and not zeros[1].any()
    assert ones[0].dtype == np.float32 and ones[0].tolist() == [[1.0] * 3] * 2
    # converted to int16 with rounding half away from zero and saturation
    assert full[0].tolist() == [[4] * 3] * 2 and full[1].tolist() == [[-32768] * 4]
    assert sevens[0].dtype == np.int16 and (sevens[0] == 7).all()


@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
        elements=st.floats(-9, 9, width=32),
    ),
    st.lists(st.integers(1, 3), min_size=0, max_size=2),
)
@settings(max_examples=30, deadline=None)
def test_full_broadcasts_like_numpy(fill: np.ndarray, outer: list) -> None:
    shape = [*outer, *fill.shape]
    ((out, _),) = build(lambda: fn.full(feed([fill]), shape=shape), batch_size=1)
    np.testing.assert_array_equal(out[0], np.broadcast_to(fill, shape))
    assert out[0].dtype == np.float32


@pytest.mark.parametrize(
    ("name", "example"),
    [
        ("zeros", OperatorExample(args={"shape": [2, 2], "dtype": types.UINT8})),
        ("ones", OperatorExample(args={"shape": [3], "layout": "W"})),
        ("zeros_like", OperatorExample([[np.ones((2, 3), np.int32)] * 3], ["HW"])),
        ("ones_like", OperatorExample([[np.ones((2, 3), np.int32)] * 3], ["HW"])),
        ("full", OperatorExample([[np.float32(i) for i in range(3)]], args={"shape": [2]})),
        (
            "full_like",
            OperatorExample([[np.ones(2, np.int8)] * 3, [np.float32(i) for i in range(3)]]),
        ),
    ],
)
def test_check_operator(name: str, example: OperatorExample) -> None:
    assert "threads" in check_operator(name, example)


@pytest.mark.parametrize(
    ("fill", "shape", "expected"),
    [
        (np.array([7, 8, 9]), (1,), [7]),
        (np.arange(1, 7).reshape(2, 3), (1, 3), [[1, 2, 3]]),
        (np.arange(1, 7).reshape(2, 3), (2, 2, 1), [[[1], [2]], [[1], [2]]]),
    ],
)
def test_an_output_extent_of_one_takes_the_leading_fill_values(fill, shape, expected) -> None:
    assert broadcast_fill("full", fill, shape).tolist() == expected
