"""DataType/enum names and NumPy mapping, TensorLayout, SampleInfo, Constant rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import types
from feedline.core.types import (
    DataType,
    ScalarConstant,
    TensorLayout,
    check_enum_cast,
    from_numpy_dtype,
    refuse_enum_buffer,
    to_numpy_dtype,
)

DALI_MEMBERS = [
    "NO_TYPE",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "FLOAT16",
    "FLOAT",
    "FLOAT64",
    "BOOL",
    "STRING",
    "_BOOL_VEC",
    "_INT32_VEC",
    "_STRING_VEC",
    "_FLOAT_VEC",
    "FEATURE",
    "_FEATURE_VEC",
    "_FEATURE_DICT",
    "IMAGE_TYPE",
    "DATA_TYPE",
    "INTERP_TYPE",
    "TENSOR_LAYOUT",
    "PYTHON_OBJECT",
    "_TENSOR_LAYOUT_VEC",
    "_DATA_TYPE_VEC",
    "_INT64_VEC",
]


def test_datatype_members_and_values_match_dali() -> None:
    assert list(DataType.__members__) == DALI_MEMBERS
    assert [int(m) for m in DataType.__members__.values()] == list(range(-1, 28))


def test_aliases_and_module_level_members() -> None:
    assert types.DALIDataType is DataType
    assert types.DALIInterpType is types.InterpType
    assert types.DALIImageType is types.ImageType
    assert types.FLOAT is DataType.FLOAT and types.RGB is types.ImageType.RGB
    assert types.INTERP_LINEAR is types.InterpType.INTERP_LINEAR
    assert [m.name for m in types.ImageType] == ["RGB", "BGR", "GRAY", "YCbCr", "ANY_DATA"]
    assert len(types.InterpType) == 6


@pytest.mark.parametrize(
    "np_dtype",
    [
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.float16,
        np.float32,
        np.float64,
        np.bool_,
    ],
)
def test_numpy_mapping_round_trips(np_dtype: type) -> None:
    assert to_numpy_dtype(from_numpy_dtype(np_dtype)) == np.dtype(np_dtype)


@pytest.mark.parametrize(
    "np_dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float64]
)
def test_calling_a_data_type_gives_its_buffer_format_with_dalis_warning(np_dtype: type) -> None:
    with pytest.warns(Warning, match=r"Calling '\.dtype\(\)' is deprecated"):
        code = from_numpy_dtype(np_dtype)()
    assert code[0] == "="
    assert np.dtype(code[1:]) == np.dtype(np_dtype)
    with pytest.raises(TypeError, match="STRING"), pytest.warns(Warning):
        DataType.STRING()


def test_to_numpy_type_gives_the_scalar_type() -> None:
    assert types.to_numpy_type(types.FLOAT) is np.float32
    assert types.to_numpy_type(DataType.UINT16)(7) == np.uint16(7)
    with pytest.raises(TypeError, match="STRING"):
        types.to_numpy_type(DataType.STRING)


def test_enum_types_survive_numpy_round_trips() -> None:
    dtype = to_numpy_dtype(DataType.INTERP_TYPE)
    values = np.asarray([types.INTERP_NN, types.INTERP_CUBIC], dtype)
    assert from_numpy_dtype(values[[1, 0, 1]].dtype) == DataType.INTERP_TYPE
    assert from_numpy_dtype(values.astype(np.int32).dtype) == DataType.INT32


@pytest.mark.parametrize(
    ("value", "dali_name"),
    [
        (types.INTERP_CUBIC, "DALIInterpType"),
        (types.UINT8, "DALIDataType"),
        (types.RGB, "DALIImageType"),
    ],
)
def test_a_scalar_constant_refuses_enum_members_as_dali(value: Any, dali_name: str) -> None:
    with pytest.raises(TypeError, match=rf"'bool', 'int' or 'float', got types\.{dali_name}\."):
        ScalarConstant(value)
    with pytest.raises(TypeError, match=dali_name):
        ScalarConstant.from_value(value)
    with pytest.raises(TypeError, match="INTERP_TYPE; types.Constant"):
        ScalarConstant(1, DataType.INTERP_TYPE)


@pytest.mark.parametrize(
    "enum_type", [DataType.DATA_TYPE, DataType.IMAGE_TYPE, DataType.INTERP_TYPE]
)
@pytest.mark.parametrize("number", [DataType.FLOAT16, DataType.FLOAT, DataType.FLOAT64])
def test_enums_cast_only_to_and_from_integers(enum_type: DataType, number: DataType) -> None:
    with pytest.raises(RuntimeError, match="Enums can only participate in casts with integral"):
        check_enum_cast(enum_type, number)
    with pytest.raises(RuntimeError, match=r"Cannot cast from (float|double|float16) to DALI"):
        check_enum_cast(number, enum_type)
    for integral in (DataType.INT32, DataType.UINT8, DataType.INT64, enum_type):
        check_enum_cast(enum_type, integral)
        check_enum_cast(integral, enum_type)
    check_enum_cast(number, DataType.INT32)


def test_enum_buffers_are_refused_in_dalis_words() -> None:
    refuse_enum_buffer(np.dtype(np.int32))
    with pytest.raises(TypeError, match="DALI enum types cannot be used with buffer protocol"):
        refuse_enum_buffer(to_numpy_dtype(DataType.IMAGE_TYPE))


def test_scalar_constant_without_dtype_infers_it() -> None:
    assert ScalarConstant(10) == ScalarConstant(10, DataType.INT32)
    assert ScalarConstant(2.5).dtype == DataType.FLOAT
    assert ScalarConstant(np.int16(3)) == ScalarConstant(3, DataType.INT16)


def test_numpy_mapping_errors() -> None:
    with pytest.raises(TypeError, match="complex128"):
        from_numpy_dtype(np.complex128)
    with pytest.raises(TypeError, match="STRING"):
        to_numpy_dtype(DataType.STRING)


def test_tensor_layout() -> None:
    layout = TensorLayout("HWC")
    assert layout == "HWC" and layout.ndim == 3
    with pytest.raises(ValueError, match="twice"):
        TensorLayout("HWH")
    with pytest.raises(ValueError, match="2"):
        layout.check_ndim(2)


def test_legacy_layout_names_are_per_sample_layouts() -> None:
    # DALI's NHWC & co. name a sample's layout: there is no batch dimension in them.
    assert (types.NHWC, types.NCHW, types.NFHWC, types.NFCHW) == ("HWC", "CHW", "FHWC", "FCHW")
    assert types.SAME == ""


def test_sample_and_batch_info_fields() -> None:
    info = types.SampleInfo(7, 1, 3, 0)
    assert (info.idx_in_epoch, info.idx_in_batch, info.iteration, info.epoch_idx) == (7, 1, 3, 0)
    assert types.BatchInfo(2, 1).epoch_idx == 1


def test_scalar_constant_rules() -> None:
    assert types.Constant(1).dtype is DataType.INT32
    assert types.Constant(1.5).dtype is DataType.FLOAT
    assert types.Constant(True).dtype is DataType.BOOL
    assert types.Constant(np.uint16(3)).dtype is DataType.UINT16
    assert types.Constant(1, dtype=types.INT64).dtype is DataType.INT64
    assert isinstance(types.Constant(2), ScalarConstant)
    with pytest.raises(OverflowError, match="int32"):
        types.Constant(2**40)
    assert types.Constant(2**40, dtype=types.INT64).value == 2**40
    assert types.Constant(3).as_array().dtype == np.int32


def test_array_constant_outside_a_pipeline_is_a_detached_node() -> None:
    node = types.Constant([1, 2, 3])
    assert node.source.graph is None and node.name.startswith("__Constant_detached_")


@pytest.mark.parametrize("name", ["bool", "int8", "uint16", "int64", "float16", "float32"])
def test_scalar_constant_conversions_give_the_named_type(name: str) -> None:
    converted = getattr(ScalarConstant(3), name)()
    assert (
        converted.dtype
        == types.DataType[{"float32": "FLOAT", "bool": "BOOL"}.get(name, name.upper())]
    )
    assert converted.value == (True if name == "bool" else 3)
    assert type(converted.value) is type(converted.as_array().item())


@given(st.integers(-(2**31), 2**31 - 1))
def test_int_and_bool_of_integer_constants_float_of_floating_ones(number: int) -> None:
    integer = ScalarConstant(number)
    assert int(integer) == number and bool(integer) == bool(number)
    assert float(integer.float64()) == float(number)
    with pytest.raises(TypeError, match="float types explicitly before casting to builtin"):
        float(integer)
    for refused in (int, bool):
        with pytest.raises(TypeError, match="bool or int types explicitly"):
            refused(integer.float32())


def test_an_explicit_type_stores_the_value_as_that_types_python_value() -> None:
    assert ScalarConstant(2.7, DataType.INT16).value == 2
    assert ScalarConstant(np.float32(0.5), DataType.FLOAT64) == ScalarConstant(0.5).float64()
    with pytest.raises(TypeError, match="got <class 'str'>"):
        ScalarConstant("1", DataType.INT32)
