"""TensorGPU / TensorListGPU: lazy CuPy import (every machine) and DALI's API on a device
(``gpu`` marker)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from feedline.core.tensor import TensorListCPU
from feedline.core.tensor_gpu import TensorGPU, TensorListGPU


def test_importing_feedline_and_the_gpu_types_does_not_import_cupy() -> None:
    code = (
        "import sys, feedline, feedline.core.tensor_gpu, feedline.operators.gpu\n"
        "assert 'cupy' not in sys.modules, 'cupy imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_cupy_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(ImportError, match=r"feedline\[gpu\]"):
        TensorListGPU(np.zeros((2, 3)))


@pytest.fixture
def cp():  # type: ignore[no-untyped-def]
    return pytest.importorskip("cupy")


class _Interface:
    """Only the CUDA array interface of an array (as a foreign library would expose)."""

    def __init__(self, array) -> None:  # type: ignore[no-untyped-def]
        self.array = array
        self.__cuda_array_interface__ = array.__cuda_array_interface__


@pytest.mark.gpu
def test_a_dense_batch_is_one_contiguous_device_buffer(cp) -> None:  # type: ignore[no-untyped-def]
    data = cp.arange(2 * 4 * 5 * 3, dtype=cp.uint8).reshape(2, 4, 5, 3)
    tl = TensorListGPU(data, "HWC")
    assert len(tl) == 2 and tl.is_dense_tensor() and tl.layout() == "HWC"
    assert tl.shape() == [(4, 5, 3)] * 2
    assert tl.data_ptr() == data.data.ptr  # no copy
    assert tl[1].data_ptr() == data.data.ptr + 60 and tl.at(1).shape() == [4, 5, 3]
    assert tl[-1].layout() == "HWC"
    np.testing.assert_array_equal(tl.as_cpu().as_array(), data.get())
    assert isinstance(tl.as_cpu(), TensorListCPU)
    tensor = tl.as_tensor()
    assert tensor.shape() == [2, 4, 5, 3] and tensor.layout() == "NHWC"
    assert tl.as_reshaped_tensor([8, 15]).shape() == [8, 15]
    with pytest.raises(IndexError):
        tl[2]


@pytest.mark.gpu
def test_ragged_batches_and_lists_of_tensors(cp) -> None:  # type: ignore[no-untyped-def]
    samples = [cp.ones((2, 3), cp.float32), cp.zeros((4, 3), cp.float32)]
    tl = TensorListGPU([TensorGPU(s, "HW") for s in samples], "HW")
    assert not tl.is_dense_tensor() and tl.shape() == [(2, 3), (4, 3)]
    with pytest.raises(RuntimeError, match="not dense"):
        tl.as_tensor()
    same = TensorListGPU([cp.ones((2, 2)), cp.ones((2, 2))])
    assert same.is_dense_tensor() and same.as_tensor().shape() == [2, 2, 2]
    with pytest.raises(ValueError, match="same ndim and dtype"):
        TensorListGPU([cp.ones((2,)), cp.ones((2, 2))])


@pytest.mark.gpu
def test_construction_from_dlpack_and_the_cuda_array_interface(cp) -> None:  # type: ignore[no-untyped-def]
    data = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    from_capsule = TensorGPU(data.toDlpack())
    from_interface = TensorGPU(_Interface(data))
    from_producer = TensorListGPU(data)
    for tensor in (from_capsule, from_interface):
        assert tensor.data_ptr() == data.data.ptr and tensor.shape() == [3, 4]
    assert from_producer.data_ptr() == data.data.ptr
    assert TensorGPU(data).__cuda_array_interface__["data"][0] == data.data.ptr
    assert TensorGPU(data).__dlpack_device__()[0] == 2  # kDLCUDA
    with pytest.raises(TypeError, match="TensorCPU"):
        TensorGPU(np.zeros(3))


@pytest.mark.gpu
def test_copy_to_external(cp) -> None:  # type: ignore[no-untyped-def]
    samples = [cp.full((2, 2), 1, cp.int32), cp.full((3, 2), 2, cp.int32)]
    tl = TensorListGPU.from_samples(samples, "HW")
    target = cp.zeros(10, cp.int32)
    tl.copy_to_external(target.data.ptr)
    np.testing.assert_array_equal(target.get(), [1] * 4 + [2] * 6)
    stream = cp.cuda.Stream()
    one = cp.zeros(4, cp.int32)
    tl[0].copy_to_external(one.data.ptr, cuda_stream=stream, non_blocking=True)
    stream.synchronize()
    np.testing.assert_array_equal(one.get(), [1] * 4)


@pytest.mark.gpu
def test_dlpack_hand_off_to_torch_shares_memory(cp) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    data = cp.arange(24, dtype=cp.float32).reshape(2, 3, 4)
    tl = TensorListGPU(data, "HWC")
    batch = torch.from_dlpack(tl)
    assert batch.is_cuda and batch.data_ptr() == data.data.ptr  # no copy
    sample = torch.from_dlpack(tl[1])
    assert sample.data_ptr() == data.data.ptr + 12 * 4
    batch[0, 0, 0] = 100.0
    assert float(data[0, 0, 0]) == 100.0
    back = TensorListGPU(torch.zeros((2, 5), device="cuda"))  # torch → feedline, no copy
    assert back.shape() == [(5,), (5,)]


@pytest.mark.gpu
def test_rows_of_one_buffer_stay_one_dense_batch(cp) -> None:  # type: ignore[no-untyped-def]
    buffer = cp.zeros((3, 4), cp.uint8)
    tl = TensorListGPU.from_samples([buffer[i] for i in range(3)])
    assert tl.is_dense_tensor() and tl.data_ptr() == buffer.data.ptr
    apart = TensorListGPU.from_samples([cp.zeros(4, cp.uint8) for _ in range(3)])
    assert apart.is_dense_tensor()  # same shapes: gathered into one buffer on request
    assert apart.as_tensor().shape() == [3, 4]
