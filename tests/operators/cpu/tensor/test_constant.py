"""``constant``: ``fdata``/``idata`` reach the requested ``dtype`` the way a cast does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import fn, pipeline_def, types


def constant_sample(**kwargs: object) -> np.ndarray:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def graph():
        return fn.constant(**kwargs)

    (out,) = graph().run()
    assert np.array_equal(out.at(0), out.at(1))
    return out.at(0)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"idata": [-1, 300, 5], "dtype": types.UINT8}, np.array([0, 255, 5], np.uint8)),
        (
            {"fdata": [-1.5, 2.5, 0.5, 300.7, -3.7], "dtype": types.INT8},
            np.array([-2, 3, 1, 127, -4], np.int8),
        ),
        ({"fdata": [1e10, -1e10], "dtype": types.INT32}, np.array([2**31 - 1, -(2**31)], np.int32)),
        ({"fdata": [0.0, 0.2, -3.0], "dtype": types.BOOL}, np.array([False, False, True])),
        ({"idata": [0, 1, 0], "dtype": types.BOOL}, np.array([False, True, False])),
        ({"idata": [-1, 2], "dtype": types.FLOAT16}, np.array([-1, 2], np.float16)),
    ],
)
def test_values_are_rounded_and_saturated(kwargs, expected) -> None:
    out = constant_sample(**kwargs)
    assert out.dtype == expected.dtype
    assert np.array_equal(out, expected)


@given(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=8))
def test_idata_to_uint8_clamps_into_range(values: list[int]) -> None:
    out = constant_sample(idata=values, dtype=types.UINT8)
    assert out.tolist() == [min(max(v, 0), 255) for v in values]


def test_defaults_stay_float32_and_int32() -> None:
    assert constant_sample(fdata=[1.25, 2.5]).dtype == np.float32
    assert constant_sample(idata=[1, 2], shape=[2, 1]).dtype == np.int32
