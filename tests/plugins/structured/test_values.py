"""Assigning values: conversion to the declared type, string↔number mappings with the None
default, strings as bytes inside and str outside, and the NumPy type table."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import types
from feedline.plugins.structured import SampleDataGroup
from tests.plugins.structured.helpers import LABELS


def test_assignment_converts_to_the_declared_type() -> None:
    group = SampleDataGroup()
    group.add_data_field("f", types.FLOAT)
    group.add_data_field("i", types.INT16)
    group.add_data_field("b", types.BOOL)
    group["f"] = 1
    assert group["f"].dtype == np.float32 and group["f"].shape == ()
    group["i"] = [1.7, -2.7]
    assert group["i"].tolist() == [1, -2] and group["i"].dtype == np.int16
    group["b"] = 1
    assert group["b"].dtype == np.bool_
    group["f"] = np.arange(3, dtype=np.int64)
    assert group["f"].dtype == np.float32
    group["f"] = None
    assert group["f"] is None
    with pytest.raises(OverflowError, match="'i'"):
        group["i"] = 70000
    with pytest.raises(TypeError, match="'f'"):
        group["f"] = "text"
    with pytest.raises(TypeError, match="'f'"):
        group["f"] = {"a": 1}
    group.set_do_convert(False)
    group["f"] = "kept as is"
    assert group["f"] == "kept as is"


def test_assignment_of_torch_tensors_converts_in_torch() -> None:
    torch = pytest.importorskip("torch")
    group = SampleDataGroup()
    group.add_data_field("f", types.FLOAT)
    group["f"] = torch.arange(3)
    assert group["f"].dtype == torch.float32


def test_strings_are_bytes_inside_and_str_outside() -> None:
    group = SampleDataGroup()
    group.add_data_field("s", types.STRING)
    for text in ("hello", "", "ünïcödé", "\x00lead", "a b"):
        group["s"] = text
        assert group["s"] == text
        stored = group.get_data()[0]
        assert stored.dtype == np.uint8 and stored.ndim == 1
    group["s"] = ["ab", "", "xyz"]
    assert group["s"] == ["ab", "", "xyz"]
    group["s"] = [["a", "bc"], ["d", ""]]
    assert group["s"] == [["a", "bc"], ["d", ""]]
    group["s"] = b"raw"
    assert group["s"] == "raw"
    group["s"] = np.frombuffer(b"enc", np.uint8)
    assert group["s"] == "enc"
    group["s"] = None
    assert group["s"] is None
    for bad in (3, 1.5, {"a": 1}, np.zeros(2, np.float32), ["a", None]):
        with pytest.raises(TypeError, match="'s'"):
            group["s"] = bad
    assert group.to_dictionary() == {"s": None}


def test_mappings_with_default_numbers_and_numpy_arrays() -> None:
    group = SampleDataGroup()
    group.add_data_field("c", types.INT32, LABELS)
    group.add_data_field("strict", types.INT64, {"a": 5})
    group["c"] = "person"
    assert group["c"].dtype == np.int32 and int(group["c"]) == 2
    group["c"] = "unknown"
    assert int(group["c"]) == 0
    group["c"] = [["car", "x"], ["person", "car"]]
    assert group["c"].tolist() == [[1, 0], [2, 1]]
    group["c"] = np.array(["car", "person", "bus"])
    assert group["c"].tolist() == [1, 2, 0] and group["c"].dtype == np.int32
    group["c"] = 7
    assert int(group["c"]) == 7
    group["c"] = 1
    assert int(group["c"]) == 1
    group["c"] = np.array([4, 5], np.int64)
    assert group["c"].tolist() == [4, 5] and group["c"].dtype == np.int32
    group["c"] = ["car", 9]
    assert group["c"].tolist() == [1, 9]
    group["c"] = []
    assert group["c"].shape == (0,) and group["c"].dtype == np.int32
    with pytest.raises(KeyError, match=r"'strict'.*'b'.*no None default"):
        group["strict"] = "b"
    group.set_apply_mapping(False)
    with pytest.raises(TypeError, match="'c'"):
        group["c"] = "car"


def test_numeric_keys_of_a_mapping_are_mapped() -> None:
    group = SampleDataGroup()
    group.add_data_field("c", types.INT32, {3: 0, 7: 1})
    group["c"] = [3, 7, 5]
    assert group["c"].tolist() == [0, 1, 5]
    group["c"] = np.array([7, 3])
    assert group["c"].tolist() == [1, 0]


def test_numpy_type_table() -> None:
    get = SampleDataGroup.get_numpy_type_for_dali_type
    assert get(types.BOOL) is bool
    assert get(types.FLOAT) is np.float32 and get(types.FLOAT16) is np.float16
    assert get(types.UINT64) is np.uint64 and get(types.INT8) is np.int8
    for bad in (types.STRING, types.DataType.NO_TYPE, "float"):
        with pytest.raises(ValueError, match="does not have a corresponding numpy type"):
            get(bad)


def test_decoding_batched_strings_from_any_framework() -> None:
    from feedline.plugins.structured.values import decode_string, encode_string

    batch = encode_string(["ab", "", "cde"], "s")
    assert batch.shape == (3, 3)
    assert decode_string(batch) == ["ab", "", "cde"]
    torch = pytest.importorskip("torch")
    assert decode_string(torch.from_numpy(batch)) == ["ab", "", "cde"]
    with pytest.raises(ValueError, match="at least 1-D"):
        decode_string(np.uint8(3))
    with pytest.raises(TypeError, match="regular"):
        encode_string([["a"], "b"], "s")


@given(st.lists(st.text().map(lambda t: t.rstrip("\x00")), max_size=5))
def test_strings_round_trip(texts: list[str]) -> None:
    group = SampleDataGroup()
    group.add_data_field("s", types.STRING)
    for text in texts:
        group["s"] = text
        assert group["s"] == text
    group["s"] = texts
    assert group["s"] == texts


@given(st.lists(st.sampled_from(["car", "person", "bus", "x"]), max_size=6), st.booleans())
def test_mapping_is_element_wise(names: list[str], as_array: bool) -> None:
    group = SampleDataGroup()
    group.add_data_field("c", types.INT32, LABELS)
    group["c"] = np.array(names, dtype=str) if as_array else names
    assert group["c"].tolist() == [LABELS.get(n, 0) for n in names]
    assert group["c"].dtype == np.int32
