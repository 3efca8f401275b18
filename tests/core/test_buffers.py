"""Recycled batch buffers: reused only once nothing references them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import fn, pipeline_def
from feedline.core.buffers import BufferPool
from feedline.core.plugins import PluginSystem


def address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def test_a_dropped_buffer_is_reused() -> None:
    pool = BufferPool(min_bytes=0)
    first = pool.empty((64, 10), np.float32)
    where = address(first)
    del first
    again = pool.empty((64, 10), np.float32)
    assert address(again) == where


def test_referenced_buffers_are_never_reused() -> None:
    pool = BufferPool(min_bytes=0)
    held = pool.empty((8, 8), np.uint8)
    view_owner = pool.empty((8, 8), np.uint8)
    view = view_owner[2:4]
    del view_owner
    borrowed = pool.empty((8, 8), np.uint8)
    capsule = borrowed.__dlpack__()  # a DLPack consumer keeps the array alive
    del borrowed
    fresh = pool.empty((8, 8), np.uint8)
    taken = {address(held), address(view.base), address(fresh)}
    assert len(taken) == 3 and capsule is not None


def test_shape_dtype_size_and_capacity() -> None:
    pool = BufferPool(capacity=2, min_bytes=1000)
    small = pool.empty((10,), np.uint8)
    where = address(small)
    del small
    assert pool.empty((10,), np.uint8) is not None and not pool._buffers  # below min_bytes
    a = pool.empty((1000,), np.uint8)
    del a
    assert pool.empty((1000,), np.int8).dtype == np.int8  # other dtype: a new buffer
    assert pool.empty((500, 2), np.uint8).shape == (500, 2)
    assert len(pool._buffers) == 2  # the oldest was forgotten
    pool.clear()
    assert not pool._buffers and where


@pytest.fixture
def test_ops(plugin_system: PluginSystem) -> PluginSystem:
    from tests.core.ops_for_tests import TestOps

    plugin_system.register(TestOps(), "test-ops")
    return plugin_system


def _numbered_batches(batch_size: int, side: int, num_threads: int) -> Any:
    """A built pipeline whose k-th batch holds ``side x side`` float images all equal to 2k,
    written by a kernel into its batch buffer."""
    counter = iter(range(1000))

    @pipeline_def(
        batch_size=batch_size, num_threads=num_threads, device_id=None, prefetch_queue_depth=1
    )
    def graph():
        data = fn.external_source(
            source=lambda: [
                np.full((side, side), next(counter), np.float32) for _ in range(batch_size)
            ]
        )
        return fn.test.double_into(data)

    return graph()


def test_pipeline_outputs_stay_intact_while_held(test_ops: PluginSystem) -> None:
    pipe = _numbered_batches(batch_size=4, side=256, num_threads=2)
    held = [pipe.run()[0] for _ in range(3)]
    values = [tl.as_array()[:, 0, 0].copy() for tl in held]
    for _ in range(4):
        pipe.run()  # later batches must not land in the held ones
    for tl, expected in zip(held, values, strict=True):
        np.testing.assert_array_equal(tl.as_array()[:, 0, 0], expected)
        assert np.all(tl.as_array() == tl.as_array()[:, :1, :1])
    addresses = set()
    for _ in range(6):
        (out,) = pipe.run()
        addresses.add(address(out.as_array()))
        del out
    assert len(addresses) <= 2  # dropped batches' memory came back
    pipe.close()


def test_torch_tensors_borrowing_a_batch_keep_it(test_ops: PluginSystem) -> None:
    torch = pytest.importorskip("torch")
    pipe = _numbered_batches(batch_size=2, side=512, num_threads=1)
    tensor = torch.from_dlpack(pipe.run()[0].as_array())  # the TensorList itself is dropped
    expected = tensor.clone()
    for _ in range(4):
        pipe.run()
    assert torch.equal(tensor, expected)
    pipe.close()
