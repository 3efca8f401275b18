"""``lookup_table`` and ``reinterpret``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, fn, types
from feedline.operators.cpu.manipulation.values import target_shape
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed


@given(
    st.sampled_from([np.uint8, np.int8, np.int16, np.uint16, np.int32, np.int64, np.uint64]),
    st.lists(st.tuples(st.integers(0, 300), st.floats(-500, 500)), max_size=6),
    st.data(),
)
@settings(max_examples=40, deadline=None)
def test_lookup_table_follows_its_definition(dtype: type, pairs: list, data: Any) -> None:
    info = np.iinfo(dtype)
    low, high = max(int(info.min), -20), min(int(info.max), 320)
    sample = data.draw(hnp.arrays(dtype, (5,), elements=st.integers(low, high)))
    keys, values = [k for k, _ in pairs], [v for _, v in pairs]
    ((out, _),) = build(
        lambda: fn.lookup_table(
            feed([sample]), keys=keys, values=values, default_value=-1.5, dtype=types.FLOAT
        ),
        1,
    )
    table = dict(zip(keys, values, strict=True))  # later pairs win, as in DALI
    expected = [np.float32(table.get(int(x), -1.5)) for x in sample]
    assert out[0].dtype == np.float32
    assert out[0].tolist() == expected


def test_lookup_table_converts_to_dtype_with_rounding_and_saturation() -> None:
    sample = np.array([[0, 1, 2], [9, 255, 3]], np.uint8)
    ((out, layout),) = build(
        lambda: fn.lookup_table(
            feed([sample], "HW"),
            keys=[1, 2, 255],
            values=[10.5, 300, -4],
            default_value=7,
            dtype=types.UINT8,
        ),
        1,
    )
    assert layout == "HW" and out[0].dtype == np.uint8
    assert out[0].tolist() == [[7, 11, 255], [7, 0, 7]]


@pytest.mark.parametrize(
    ("sample", "kwargs", "error", "message"),
    [
        (np.ones(2, np.float32), {"keys": [1], "values": [2]}, OperatorError, "only integer"),
        (np.ones(2, np.bool_), {"keys": [1], "values": [2]}, OperatorError, "only integer"),
        (np.ones(2, np.int32), {"keys": [-1], "values": [2]}, ValueError, r"\[0, 65535\]"),
        (np.ones(2, np.int32), {"keys": [70000], "values": [2]}, ValueError, r"\[0, 65535\]"),
        (np.ones(2, np.int32), {"keys": [1, 2], "values": [2]}, ValueError, "'values' has 1"),
    ],
)
def test_lookup_table_errors(sample: Any, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build(lambda: fn.lookup_table(feed([sample]), **kwargs), 1)


def test_lookup_table_accepts_the_deprecated_output_dtype() -> None:
    with pytest.warns(DeprecationWarning, match="`output_dtype` is a deprecated alias for `dtype`"):
        ((out, _),) = build(
            lambda: fn.lookup_table(
                feed([np.array([1], np.int32)]), keys=[1], values=[3], output_dtype=types.INT16
            ),
            1,
        )
    assert out[0].dtype == np.int16 and out[0].tolist() == [3]


@pytest.mark.parametrize(
    ("shape", "rel", "dims", "expected"),
    [
        ((480, 640, 3), [240, -1], None, (240, 3840)),
        ((480, 640, 3), None, None, (480, 640, 3)),
        ((480, 640, 3), None, [-1, 1, 0], (1, 640, 480)),
        ((300, 200, 1), None, [-1, 1, 0], (1, 200, 300)),
    ],
)
def test_target_shape_with_shape_or_src_dims(shape: tuple, rel: Any, dims: Any, expected: tuple):
    assert target_shape(shape, rel, None, dims) == expected


@pytest.mark.parametrize(
    ("shape", "rel", "dims", "expected"),
    [
        ((480, 640, 3), [0.5, -1], None, (240, 3840)),
        ((300, 200, 1), [-1, 0.5, 2], [-1, 1, 0], (1, 100, 600)),
        ((4, 6), [1, 1, -1], None, (4, 6, 1)),
    ],
)
def test_target_shape_with_rel_shape(shape: tuple, rel: list, dims: Any, expected: tuple) -> None:
    assert target_shape(shape, None, rel, dims) == expected


def test_reinterpret_reads_the_same_bytes() -> None:
    sample = np.array([[1, 2, 3], [4, 5, 6]], np.int16)

    def graph() -> Any:
        data = feed([sample], "HW")
        return (
            fn.reinterpret(data, dtype=types.UINT8),
            fn.reinterpret(data, dtype=types.INT32, shape=[3]),
            fn.reinterpret(data, shape=[3, 2], layout="AB"),
            fn.reinterpret(data, rel_shape=[0.5, 2]),
        )

    (as_bytes, b_layout), (as_ints, i_layout), (reshaped, r_layout), (rel, _) = build(graph, 1)
    assert b_layout == "HW" and as_bytes[0].shape == (2, 6)
    np.testing.assert_array_equal(as_bytes[0], sample.view(np.uint8))
    assert i_layout == "" and as_ints[0].tolist() == sample.reshape(-1).view(np.int32).tolist()
    assert r_layout == "AB" and reshaped[0].shape == (3, 2)
    assert rel[0].shape == (1, 6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dtype": types.INT32}, "innermost dimension .* is not divisible"),
        ({"shape": [4]}, r"cannot have shape \(4,\)"),
        ({"shape": [2, 3], "rel_shape": [1.0, 1.0]}, "mutually exclusive"),
        ({"src_dims": [2]}, "src_dims index 2 is out of range"),
    ],
)
def test_reinterpret_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        build(lambda: fn.reinterpret(feed([np.zeros((2, 3), np.int16)]), **kwargs), 1)


@pytest.mark.parametrize(
    ("name", "example"),
    [
        (
            "lookup_table",
            OperatorExample(
                [[np.arange(6, dtype=np.uint8)] * 3], args={"keys": [1, 5], "values": [0.5, 2.0]}
            ),
        ),
        (
            "reinterpret",
            OperatorExample([[np.ones((2, 4), np.int16)] * 3], ["HW"], {"dtype": types.INT32}),
        ),
    ],
)
def test_check_operator(name: str, example: OperatorExample) -> None:
    assert "threads" in check_operator(name, example)


def test_lookup_table_maps_scalar_samples() -> None:
    ids = [np.int64(i) for i in range(4)]
    ((out, _),) = build(
        lambda: fn.lookup_table(feed(ids), keys=[0, 1], values=[100, 200], dtype=types.INT64), 4
    )
    assert [o.shape for o in out] == [()] * 4 and [int(o) for o in out] == [100, 200, 0, 0]
