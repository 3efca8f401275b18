"""``cast`` from floating point to integers: DALI's rounding, saturation and NaN results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline.operators.cpu.tensor.basic import cast_array

INTEGERS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]


@pytest.mark.parametrize("source", FLOATS)
def test_rounds_half_away_from_zero_exactly(source: Any) -> None:
    values = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.7, 0.25], source)
    assert cast_array(values, np.int32).tolist() == [1, 2, 3, -1, -2, -3, -1, 0]
    just_below_half = np.nextafter(source(0.5), source(0))
    assert cast_array(np.array([just_below_half, -just_below_half]), np.int8).tolist() == [0, 0]
    assert cast_array(np.array([just_below_half]), np.bool_).tolist() == [False]


@pytest.mark.parametrize("target", INTEGERS)
@pytest.mark.parametrize("source", FLOATS)
def test_saturates_at_the_limits_and_infinities(source: Any, target: Any) -> None:
    info = np.iinfo(target)
    values = np.array([np.inf, -np.inf], source)
    assert cast_array(values, target).tolist() == [info.max, info.min]
    huge = np.finfo(source).max
    if float(huge) > info.max:
        assert cast_array(np.array([huge, -huge]), target).tolist() == [info.max, info.min]


@pytest.mark.parametrize("source", FLOATS)
def test_nan_gives_what_dalis_conversion_gives(source: Any) -> None:
    nan = np.array([np.nan], source)
    expected = {np.int32: -(2**31), np.int64: -(2**63), np.uint64: 2**63}
    for target in INTEGERS:
        assert cast_array(nan, target).tolist() == [expected.get(target, 0)], target
    assert cast_array(nan, np.bool_).tolist() == [True]


@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=20))
def test_in_range_values_match_python_rounding(values: list[float]) -> None:
    array = np.array(values, np.float32)
    expected = [int(np.sign(v) * np.floor(abs(float(v)) + 0.5)) for v in array]
    assert cast_array(array, np.int32).tolist() == expected


def test_float32_values_near_the_int32_limit() -> None:
    values = np.array([2147483520.0, 2147483648.0, -2147483648.0, 4294967040.0], np.float32)
    assert cast_array(values, np.int32).tolist() == [2147483520, 2**31 - 1, -(2**31), 2**31 - 1]
    assert cast_array(values, np.uint32).tolist() == [2147483520, 2**31, 0, 4294967040]
