"""TensorListCPU / TensorCPU behaviour."""

from __future__ import annotations

import ctypes
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import TensorCPU, TensorListCPU, types


def test_dense_from_ndarray_is_zero_copy() -> None:
    data = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    tl = TensorListCPU(data, "HW")
    assert len(tl) == 4 and tl.is_dense_tensor()
    assert tl.shape() == [(2, 3)] * 4
    assert tl.dtype is types.FLOAT and tl.layout() == "HW"
    view = np.asarray(tl[1])
    assert np.shares_memory(view, data)
    assert np.array_equal(tl[-1].as_array(), data[3])
    assert tl.as_array() is data or np.shares_memory(tl.as_array(), data)
    assert np.shares_memory(np.asarray(tl.as_tensor()), data)
    assert tl.as_tensor().shape() == [4, 2, 3]


def test_at_copies_and_rejects_negative() -> None:
    data = np.zeros((2, 3), np.int32)
    tl = TensorListCPU(data)
    copy = tl.at(0)
    copy[0] = 5
    assert data[0, 0] == 0
    with pytest.raises(IndexError):
        tl.at(-1)
    with pytest.raises(IndexError):
        tl[2]


def test_list_of_arrays_dense_or_ragged() -> None:
    dense = TensorListCPU([np.ones((2, 2), np.uint8), np.zeros((2, 2), np.uint8)])
    assert dense.is_dense_tensor() and dense.as_array().shape == (2, 2, 2)
    ragged = TensorListCPU([np.ones((2,), np.uint8), np.zeros((3,), np.uint8)])
    assert not ragged.is_dense_tensor()
    assert ragged.shape() == [(2,), (3,)]
    with pytest.raises(RuntimeError, match="same shape"):
        ragged.as_array()
    with pytest.raises(RuntimeError, match="same shape"):
        ragged.as_tensor()


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="batch"):
        TensorListCPU(np.float32(1))
    with pytest.raises(RuntimeError, match="strided"):
        TensorListCPU(np.zeros((4, 4))[:, ::2])
    with pytest.raises(TypeError, match="position 1 cannot be converted to TensorCPU"):
        TensorListCPU([np.zeros(2), np.zeros((2, 2))])
    with pytest.raises(TypeError, match="position 2 cannot be converted to TensorCPU"):
        TensorListCPU(
            [TensorCPU(np.zeros(2), "X"), TensorCPU(np.zeros(2), "X"), TensorCPU(np.zeros(2), "Y")]
        )
    with pytest.raises(TypeError, match="position 1 cannot be converted to TensorCPU"):
        TensorListCPU([np.zeros(2), "text"])
    with pytest.raises(
        TypeError, match="position 1 has type 'int32' expected to have type 'float'"
    ):
        TensorListCPU([np.zeros(2, np.float32), np.zeros(2, np.int32)])
    with pytest.raises(
        TypeError, match="position 1 has type 'bool' expected to have type 'double'"
    ):
        TensorListCPU([TensorCPU(np.zeros(2)), TensorCPU(np.zeros(2, bool))])
    with pytest.raises(ValueError, match="dimensions"):
        TensorListCPU(np.zeros((2, 3)), "HW")
    with pytest.raises(TypeError, match="integers or slices"):
        TensorListCPU(np.zeros((2, 3)))[1.0]


def test_dlpack_and_copy_constructor() -> None:
    data = np.arange(6, dtype=np.int16).reshape(2, 3)
    from_capsule = TensorListCPU(data.__dlpack__())
    assert np.array_equal(from_capsule.as_array(), data)
    from_tl = TensorListCPU(from_capsule, "X")
    assert from_tl.layout() == "X"
    tensor = from_tl[0]
    assert tensor.__dlpack_device__() == (1, 0)
    assert np.array_equal(np.from_dlpack(tensor), data[0])


def test_tensor_cpu_squeeze_layout_and_pointer() -> None:
    tensor = TensorCPU(np.zeros((1, 3, 1), np.uint8), "HWC")
    assert tensor.squeeze(0) and tensor.shape() == [3, 1] and tensor.layout() == "WC"
    assert tensor.squeeze() and tensor.shape() == [3]
    assert not tensor.squeeze()
    with pytest.raises(RuntimeError, match="extent"):
        TensorCPU(np.zeros((2, 3))).squeeze(0)
    source = TensorCPU(np.arange(4, dtype=np.uint8))
    target = np.zeros(4, np.uint8)
    source.copy_to_external(target.ctypes.data)
    assert target.tolist() == [0, 1, 2, 3]
    assert source.data_ptr() == np.asarray(source).ctypes.data
    assert np.asarray(source).__array_interface__["data"][0] == source.data_ptr()


def test_ragged_copy_to_external_and_zero_d_samples() -> None:
    tl = TensorListCPU([np.array([1, 2], np.uint8), np.array([3], np.uint8)])
    out = np.zeros(3, np.uint8)
    tl.copy_to_external(out.ctypes.data)
    assert out.tolist() == [1, 2, 3]
    scalars = TensorListCPU(np.array([1, 2, 3], np.int32))
    assert scalars.shape() == [()] * 3


def test_scalar_samples_are_zero_d_array_views() -> None:
    tl = TensorListCPU(np.array([10, 20, 30], np.int32))
    assert [int(np.asarray(tl[i])) for i in range(3)] == [10, 20, 30]
    samples = tl.samples()
    assert all(isinstance(s, np.ndarray) and s.shape == () for s in samples)
    assert np.shares_memory(samples[1], tl.as_array())


def test_unstacked_uniform_samples_are_gathered_on_request() -> None:
    samples = [np.full(3, i, np.uint8) for i in range(4)]
    tl = TensorListCPU.from_samples(samples, stack=False)
    assert not np.shares_memory(tl.samples()[0], samples[1])
    assert np.shares_memory(tl.samples()[0], samples[0])  # still the caller's arrays
    assert tl.is_dense_tensor()
    dense = tl.as_array()
    assert dense.shape == (4, 3) and dense[:, 0].tolist() == [0, 1, 2, 3]
    assert np.shares_memory(tl[2].as_array(), dense)  # gathered once, then a view
    ragged = TensorListCPU.from_samples([np.zeros(2), np.zeros(3)], stack=False)
    assert not ragged.is_dense_tensor()


@given(
    st.lists(st.integers(1, 3), min_size=1, max_size=6),
    st.integers(-8, 8) | st.none(),
    st.integers(-8, 8) | st.none(),
    st.sampled_from([None, 1, 2, -1, -2]),
    st.booleans(),
)
def test_slices_are_tensor_lists_like_list_slices(
    lengths: list[int], start: int | None, stop: int | None, step: int | None, dense: bool
) -> None:
    samples = [np.full(lengths[0] if dense else n, i, np.int32) for i, n in enumerate(lengths)]
    infos = [f"file{i}" for i in range(len(samples))]
    tl = TensorListCPU.from_samples(samples, "X", infos)
    part = tl[start:stop:step]
    expected = samples[start:stop:step]
    assert isinstance(part, TensorListCPU) and len(part) == len(expected)
    assert part.layout() == "X"
    assert [part.at(i).tolist() for i in range(len(part))] == [e.tolist() for e in expected]
    assert part.source_infos() == infos[start:stop:step]
    for i in range(len(part)):
        assert np.shares_memory(
            part[i].as_array(), tl[range(len(tl))[start:stop:step][i]].as_array()
        )


def test_contiguous_slice_of_a_dense_batch_is_a_dense_view() -> None:
    data = np.arange(12, dtype=np.uint8).reshape(4, 3)
    part = TensorListCPU(data)[1:3]
    assert part.is_dense_tensor() and np.shares_memory(part.as_array(), data)
    assert part.as_array().tolist() == [[3, 4, 5], [6, 7, 8]]
    assert len(TensorListCPU(data)[5:]) == 0


def test_tensor_list_dlpack_exports_a_dense_batch() -> None:
    import torch

    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    tl = TensorListCPU(data)
    assert tl.__dlpack_device__() == (1, 0)
    assert np.shares_memory(np.from_dlpack(tl), data)
    as_torch = torch.from_dlpack(tl)
    assert as_torch.shape == (2, 3) and as_torch.data_ptr() == data.ctypes.data
    ragged = TensorListCPU([np.zeros(2, np.uint8), np.zeros(3, np.uint8)])
    with pytest.raises(BufferError, match="ragged"):
        ragged.__dlpack__()


@pytest.mark.parametrize("wrap", [int, ctypes.c_void_p, np.uint64], ids=["int", "c_void_p", "np"])
def test_copy_to_external_takes_an_int_or_a_c_void_p(wrap: type) -> None:
    tl = TensorListCPU([np.array([1, 2], np.uint16), np.array([3], np.uint16)])
    out = np.zeros(3, np.uint16)
    tl.copy_to_external(wrap(out.ctypes.data))
    assert out.tolist() == [1, 2, 3]
    single = np.zeros(2, np.uint16)
    tl[0].copy_to_external(wrap(single.ctypes.data))
    assert single.tolist() == [1, 2]


def test_copy_to_external_rejects_bad_pointers() -> None:
    tl = TensorListCPU(np.zeros((2, 2), np.uint8))
    with pytest.raises(ValueError, match="NULL"):
        tl.copy_to_external(ctypes.c_void_p())
    with pytest.raises(TypeError, match="c_void_p, got str"):
        tl[0].copy_to_external("0x10")
    with pytest.raises(ValueError, match="invalid destination"):
        tl.copy_to_external(0)


def test_is_pinned_and_buffer_construction() -> None:
    raw = bytearray(range(6))
    tl = TensorListCPU(memoryview(raw).cast("B", (2, 3)), "W", is_pinned=True)
    assert tl.is_pinned() and tl.shape() == [(3,), (3,)]
    assert tl[1:].is_pinned() and TensorListCPU(tl).is_pinned()
    assert not TensorListCPU(np.zeros((1, 1))).is_pinned()
    tensor = TensorCPU(raw, "W", is_pinned=True)
    assert tensor.is_pinned() and tensor.shape() == [6] and not tl[0].is_pinned()
    assert TensorCPU(b"abc").as_array().tolist() == [97, 98, 99]  # bytes are uint8 buffers
    from_tensors = TensorListCPU([TensorCPU(np.ones(2, np.int8)), TensorCPU(np.zeros(2, np.int8))])
    assert from_tensors.as_array().tolist() == [[1, 1], [0, 0]]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="Python's __buffer__ protocol needs 3.12")
def test_tensor_cpu_speaks_the_buffer_protocol() -> None:
    tensor = TensorCPU(np.arange(4, dtype=np.int32))
    assert memoryview(tensor).tolist() == [0, 1, 2, 3]


@given(st.lists(st.integers(1, 5), min_size=0, max_size=3))
def test_a_batch_of_one_contiguous_sample_is_that_sample_not_a_copy(shape: list[int]) -> None:
    sample = np.arange(int(np.prod(shape)), dtype=np.int16).reshape(shape)
    batch = TensorListCPU.from_samples([sample], "")
    dense = batch.as_array()
    assert dense.shape == (1, *shape)
    assert np.shares_memory(dense, sample)
    assert dense.flags.c_contiguous


def test_a_batch_of_one_strided_sample_is_made_contiguous() -> None:
    strided = np.arange(24, dtype=np.uint8).reshape(4, 6)[:, ::2]
    dense = TensorListCPU.from_samples([strided], "HW").as_array()
    assert dense.flags.c_contiguous and not np.shares_memory(dense, strided)
    np.testing.assert_array_equal(dense[0], strided)


def test_separate_uniform_samples_are_gathered_into_a_new_buffer() -> None:
    samples = [np.full((2, 3), i, np.float32) for i in range(3)]
    dense = TensorListCPU.from_samples(samples, "HW").as_array()
    assert dense.shape == (3, 2, 3)
    assert not any(np.shares_memory(dense, s) for s in samples)
    np.testing.assert_array_equal(dense[:, 0, 0], [0, 1, 2])


@pytest.mark.parametrize("enum_type", [types.DATA_TYPE, types.IMAGE_TYPE, types.INTERP_TYPE])
def test_enum_typed_data_is_not_handed_out_as_numbers(enum_type: types.DataType) -> None:
    stored = np.asarray([[1, 2], [3, 0]], types.to_numpy_dtype(enum_type))
    tl = TensorListCPU(stored)
    assert tl.dtype == enum_type and tl[0].dtype == enum_type
    refusals = [tl.as_array, tl.as_tensor, tl[0].as_array, lambda: np.asarray(tl[1])]
    for refused in refusals:
        with pytest.raises(TypeError, match="enum types cannot be used with buffer protocol"):
            refused()
    assert tl.raw_array().tolist() == [[1, 2], [3, 0]]
    assert tl[1].raw_array().tolist() == [3, 0]
    assert TensorListCPU([tl[0], tl[1]]).dtype == enum_type  # samples rebatch with their type
