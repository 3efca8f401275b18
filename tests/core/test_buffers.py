"""Recycled batch buffers: reused only once nothing references them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import fn, pipeline_def
from feedline.core.buffers import ALIGNMENT, BufferPool, Slab
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


def test_blocks_are_reused_when_large_enough_and_free() -> None:
    pool = BufferPool(min_bytes=0)
    block = pool.block(1000)
    assert block.dtype == np.uint8 and block.ndim == 1 and block.size >= 1000
    where = address(block)
    del block
    assert address(pool.block(900)) == where  # room enough, not twice too much
    kept = pool.block(900)
    assert address(pool.block(900)) != address(kept)  # held: a new block
    assert pool.block(100).size < 900  # far smaller: its own block


@given(
    shapes=st.lists(
        st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple), min_size=1, max_size=8
    ),
    dtypes=st.lists(st.sampled_from([np.uint8, np.int16, np.float32, np.float64]), min_size=8),
)
def test_slab_arrays_are_disjoint_views_of_one_block(
    shapes: list[tuple[int, ...]], dtypes: list[Any]
) -> None:
    room = sum(Slab.room(shape, dtype) for shape, dtype in zip(shapes, dtypes, strict=False))
    slab = Slab(BufferPool(min_bytes=0), room)
    arrays = [slab.empty(shape, dtype) for shape, dtype in zip(shapes, dtypes, strict=False)]
    carved = [array for array in arrays if array.size]
    assert all(array.base is carved[0].base is not None for array in carved)
    for number, (array, shape, dtype) in enumerate(zip(arrays, shapes, dtypes, strict=False)):
        assert array.shape == shape and array.dtype == dtype and array.flags.writeable
        assert not array.size or address(array) % ALIGNMENT == address(carved[0]) % ALIGNMENT
        array[...] = number
    for number, array in enumerate(arrays):
        assert np.all(array == number)  # no array overlaps another
    assert slab.requested == room


def test_slab_falls_back_to_own_arrays_beyond_its_room() -> None:
    pool = BufferPool(min_bytes=0)
    slab = Slab(pool, Slab.room((10,), np.float32))
    inside, beyond = slab.empty((10,), np.float32), slab.empty((10,), np.float32)
    assert inside.base is not None and beyond.base is None
    assert slab.empty((2,), object).base is None  # object arrays are never carved
    assert slab.requested == 2 * Slab.room((10,), np.float32) + Slab.room((2,), object)
    assert Slab(pool, 0).empty((3,), np.uint8).base is None


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


def _ragged_batches(num_threads: int) -> Any:
    """A built pipeline whose k-th batch holds images of four sizes all equal to 2k."""
    counter = iter(range(1000))
    sides = [300, 200, 300, 100]

    @pipeline_def(batch_size=4, num_threads=num_threads, device_id=None, prefetch_queue_depth=1)
    def graph():
        data = fn.external_source(
            source=lambda: (lambda k: [np.full((side, side), k, np.float32) for side in sides])(
                next(counter)
            )
        )
        return fn.test.double_into(data)

    return graph()


@pytest.mark.parametrize("num_threads", [1, 2])
def test_ragged_outputs_share_a_recycled_block_yet_stay_intact(
    test_ops: PluginSystem, num_threads: int
) -> None:
    pipe = _ragged_batches(num_threads)
    held = [pipe.run()[0] for _ in range(3)]
    for _ in range(4):
        pipe.run()
    for k, tl in enumerate(held):
        assert [s.shape for s in tl.samples()] == [(300, 300), (200, 200), (300, 300), (100, 100)]
        assert all(np.all(s == 2 * k) for s in tl.samples())
    blocks = set()
    for _ in range(6):
        (out,) = pipe.run()
        samples = out.samples()
        assert len({address(s.base) for s in samples}) == 1  # carved from one block
        blocks.add(address(samples[0].base))
        del out, samples
    assert len(blocks) <= 2  # dropped batches' blocks came back
    pipe.close()
