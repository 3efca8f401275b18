"""Per-sample generators: re-keyed per sample, identical to fresh ones, never taken from a kernel
that kept one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.kernel import BatchArena, SampleContext, sample_rng

KEYS = st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1), st.integers(0, 4095))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(KEYS, st.integers(0, 3)), min_size=1, max_size=12))
def test_recycled_generators_give_the_streams_of_fresh_ones(draws) -> None:
    for (seed, iteration, index), kind in draws:
        context = SampleContext(index, iteration, "", (), seed)
        fresh = sample_rng(seed, iteration, index)
        if kind == 0:
            got, expected = context.rng.uniform(size=5), fresh.uniform(size=5)
        elif kind == 1:
            got, expected = context.rng.integers(1000, size=7), fresh.integers(1000, size=7)
        elif kind == 2:
            got, expected = context.rng.normal(size=3), fresh.normal(size=3)
        else:
            got = context.rng.random(dtype=np.float32, size=3)
            expected = fresh.random(dtype=np.float32, size=3)
        np.testing.assert_array_equal(got, expected)
        context.release()


def test_distinct_samples_iterations_and_seeds_draw_differently() -> None:
    values = {
        float(sample_rng(seed, iteration, index).uniform())
        for seed in (1, 2)
        for iteration in (0, 1)
        for index in (0, 1)
    }
    assert len(values) == 8


def test_a_generator_a_kernel_kept_is_not_reused() -> None:
    first = SampleContext(0, 0, "", (), 5)
    kept = first.rng
    first.release()
    for index in range(1, 4):
        other = SampleContext(index, 0, "", (), 5)
        assert other.rng is not kept
        other.rng.uniform(size=10)
        other.release()
    np.testing.assert_array_equal(kept.uniform(size=4), sample_rng(5, 0, 0).uniform(size=4))


def test_arena_gives_scalar_samples_as_writable_arrays() -> None:
    arena = BatchArena(3)
    rows = [arena.allocate(i, (), np.int32) for i in range(3)]
    for i, row in enumerate(rows):
        assert isinstance(row, np.ndarray) and row.shape == ()
        row[...] = i * 10
    assert arena.dense(rows).tolist() == [0, 10, 20]


def test_arena_batch_is_dense_only_when_every_sample_is_its_own_row() -> None:
    arena = BatchArena(3)
    handed = {i: arena.allocate(i, (2, 2), np.float32) for i in (2, 0, 1)}  # any order
    rows = [handed[i] for i in range(3)]
    assert arena.dense(rows) is arena.buffer
    reshaped = [row.reshape(4).reshape(2, 2) for row in rows]  # other views of the same rows
    assert arena.dense(reshaped) is arena.buffer
    assert arena.dense([rows[0], rows[1].copy(), rows[2]]) is None
    assert arena.dense([rows[1], rows[0], rows[2]]) is None  # rows out of order
    assert arena.dense(rows[:2]) is None
