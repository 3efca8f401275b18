"""The CPU callback-result checks and conversions (DALI's ``_utils.external_source_impl``)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline._utils import external_source_impl as impl
from feedline.tensors import TensorCPU, TensorListCPU

_arrays = hnp.arrays(
    dtype=st.sampled_from([np.uint8, np.int32, np.float32]),
    shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
)


@given(_arrays, st.integers(1, 4))
def test_list_of_equal_samples_stacks_to_the_batch(sample, count):
    batch = [sample] * count
    assert impl.assert_cpu_batch_data_type(batch)
    np.testing.assert_array_equal(impl.batch_to_numpy(batch), np.stack(batch))


@given(_arrays)
def test_tensor_wrappers_convert_back_to_the_same_values(array):
    np.testing.assert_array_equal(impl.sample_to_numpy(TensorCPU(array)), array)
    np.testing.assert_array_equal(impl.batch_to_numpy(TensorListCPU(array)), array)


def test_samples_of_different_shapes_are_not_a_uniform_batch():
    with pytest.raises(ValueError, match="Uniform input is required"):
        impl.batch_to_numpy([np.zeros((2,)), np.zeros((3,))])


@pytest.mark.parametrize("value", [1, "text", [1, 2], {"a": 1}])
def test_non_array_samples_are_refused_with_their_type(value):
    with pytest.raises(TypeError, match="Unsupported callback return type. Got: `<class"):
        impl.assert_cpu_sample_data_type(value)


def test_a_list_batch_is_checked_sample_by_sample():
    with pytest.raises(TypeError, match="Unsupported callback return type"):
        impl.assert_cpu_batch_data_type([np.zeros(2), "not a sample"])


def test_torch_cpu_tensor_is_a_sample():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    tensor = torch.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(impl.sample_to_numpy(tensor), np.arange(6).reshape(2, 3))


@pytest.mark.parametrize(("function", "expected"), [(lambda: 0, 0), (lambda info: info, 1)])
def test_accepted_arg_count(function, expected):
    assert impl.accepted_arg_count(function) == expected
