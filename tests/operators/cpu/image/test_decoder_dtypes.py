"""Decoder ``dtype``: DALI's full list of output types and its float32 rescaling."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import types
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.image.decoders import convert_depth
from tests.operators.cpu.image_ops_testing import encode, use_image_plugins
from tests.operators.cpu.image_samples import run_op

INTEGER_TYPES = {
    types.UINT8: np.uint8,
    types.INT8: np.int8,
    types.UINT16: np.uint16,
    types.INT16: np.int16,
    types.UINT32: np.uint32,
    types.INT32: np.int32,
}

#: Values DALI 2.4's CPU decoder gives for some 8-bit pixel values.
DALI_FROM_8BIT = {
    types.INT8: {1: 0, 3: 1, 102: 51, 128: 64, 254: 127, 255: 127},
    types.INT16: {1: 128, 3: 385, 102: 13107, 128: 16448, 254: 32639, 255: 32767},
    types.INT32: {1: 8421505, 102: 858993536, 128: 1077952640, 254: 2139062272, 255: 2147483647},
    types.UINT32: {1: 16843010, 102: 1717987072, 200: 3368602112, 255: 4294967295},
}
#: ... and for some 16-bit pixel values.
DALI_FROM_16BIT = {
    types.UINT8: {1: 0, 257: 1, 40000: 156, 65534: 255},
    types.INT8: {257: 0, 40000: 78, 65534: 127},
    types.INT16: {1: 0, 3: 1, 5: 2, 128: 64, 40000: 20000, 65534: 32767},
    types.INT32: {1: 32769, 3: 98306, 257: 8421504, 40000: 1310739968, 65534: 2147450880},
    types.UINT32: {1: 65537, 128: 8388736, 40000: 2621479936, 65534: 4294901760},
}


@pytest.mark.parametrize(
    ("source", "table"), [(np.uint8, DALI_FROM_8BIT), (np.uint16, DALI_FROM_16BIT)]
)
def test_values_measured_on_dali(source: type, table: dict) -> None:
    for dtype, expected in table.items():
        values = np.array(list(expected), dtype=source)
        got = convert_depth(values, dtype)
        assert got.dtype == INTEGER_TYPES[dtype]
        assert got.tolist() == list(expected.values()), dtype


def test_float_is_the_float32_product_with_the_reciprocal() -> None:
    values = np.arange(256, dtype=np.uint8)
    got = convert_depth(values, types.FLOAT)
    np.testing.assert_array_equal(got, values.astype(np.float32) * np.float32(1 / 255))
    assert got[-1] == 1.0


@given(st.sampled_from(list(INTEGER_TYPES)), st.sampled_from([np.uint8, np.uint16]))
def test_integer_outputs_span_the_type_range_monotonically(dtype, source) -> None:
    values = np.arange(np.iinfo(source).max + 1, dtype=np.int64).astype(source)
    got = convert_depth(values, dtype).astype(np.int64)
    assert got[0] == 0
    assert got[-1] == np.iinfo(INTEGER_TYPES[dtype]).max
    assert np.all(np.diff(got) >= 0)


def test_every_integer_type_runs_in_a_pipeline(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)
    image = np.arange(48, dtype=np.uint8).reshape(4, 4, 3) * 5
    data = [encode(image, "PNG")]
    for dtype, numpy_type in INTEGER_TYPES.items():
        (out,), layout = run_op("decoders.image_crop", data, None, crop=(2, 2), dtype=dtype)
        assert out.dtype == numpy_type and out.shape == (2, 2, 3) and layout == "HWC"
        np.testing.assert_array_equal(out, convert_depth(image[1:3, 1:3], dtype))


@pytest.mark.parametrize("dtype", [types.INT64, types.UINT64, types.FLOAT16, types.FLOAT64])
def test_types_dali_refuses_are_refused(empty_plugin_system: PluginSystem, dtype) -> None:
    use_image_plugins(empty_plugin_system)
    data = [encode(np.zeros((4, 4, 3), np.uint8), "PNG")]
    with pytest.raises(TypeError, match=f"dtype {dtype.name} is not supported"):
        run_op("decoders.image", data, None, dtype=dtype)
