"""Shared helpers: DALI's rounding conversion and layout resolution."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline.core.types import DataType
from feedline.operators.cpu.common.tensors import output_dtype, resolve_layout, saturate_cast

INT_TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32]


@given(
    st.sampled_from(INT_TYPES),
    st.lists(
        st.floats(-5e9, 5e9, allow_nan=False) | st.sampled_from([0.5, -0.5, 2.5, -2.5]),
        min_size=1,
        max_size=20,
    ),
)
def test_saturate_cast_rounds_half_away_and_clamps(dtype: type, values: list[float]) -> None:
    info = np.iinfo(dtype)
    expected = []
    for v in values:
        r = math.copysign(math.floor(abs(v) + 0.5), v)
        expected.append(int(min(max(r, info.min), info.max)))
    got = saturate_cast(np.array(values, dtype=np.float64), np.dtype(dtype))
    assert got.dtype == dtype
    assert got.tolist() == expected


def test_saturate_cast_nan_and_floats() -> None:
    values = np.array([np.nan, np.inf, -np.inf, 1.25], np.float32)
    assert saturate_cast(values, np.dtype(np.uint8)).tolist() == [0, 255, 0, 1]
    assert saturate_cast(values, np.dtype(np.float16)).dtype == np.float16


def test_resolve_layout() -> None:
    allowed, defaults = ("HWC", "CHW"), {3: "HWC"}
    assert resolve_layout("op", "", 3, allowed, defaults) == "HWC"
    assert resolve_layout("op", "CHW", 3, allowed, defaults) == "CHW"
    with pytest.raises(
        ValueError,
        match='op: The layout "HW" does not match any of the allowed layouts for input 0. '
        "Valid layouts are: HWC",
    ):
        resolve_layout("op", "HW", 2, allowed, defaults)
    with pytest.raises(
        ValueError,
        match="The number of dimensions 2 does not match any of the allowed layouts for input 0. "
        r"Valid layouts are: HWC, CHW \(the input has no layout; without one 3-D data is accepted",
    ):
        resolve_layout("op", "", 2, allowed, defaults)


def test_output_dtype() -> None:
    allowed = (np.uint8, np.float32)
    assert output_dtype("op", None, np.dtype(np.uint8), allowed) == np.uint8
    assert output_dtype("op", DataType.FLOAT, np.dtype(np.uint8), allowed) == np.float32
    with pytest.raises(TypeError, match="'dtype' = INT64 is not supported; expected UINT8, FLOAT"):
        output_dtype("op", DataType.INT64, np.dtype(np.uint8), allowed)
