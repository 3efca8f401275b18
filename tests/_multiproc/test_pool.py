"""``feedline._multiproc``: DALI's worker-pool interface over feedline's pool."""

from __future__ import annotations

import os
from contextlib import closing, nullcontext

import numpy as np
import pytest

from feedline._multiproc.messages import SampleRange, TaskArgs
from feedline._multiproc.pool import WorkerPool
from feedline._utils.external_source_impl import get_callback_from_source


class Group:
    """What DALI's pool reads of an external-source group."""

    def __init__(self, source, batch=False, prefetch_queue_depth=1) -> None:
        _, self.source_desc = get_callback_from_source(source, cycle=None)
        self.batch = batch
        self.prefetch_queue_depth = prefetch_queue_depth


def where_and_which(info):
    return np.array([os.getpid(), info.idx_in_epoch, info.idx_in_batch, info.iteration])


def batch_of(iteration):
    return [np.full(2, iteration)] * 3


def text_sample(info):
    return "text"


class PidBatches:
    def __iter__(self):
        self.count = 0
        return self

    def __next__(self):
        self.count += 1
        return [np.array([os.getpid(), self.count])]


def test_sample_range_becomes_sample_infos() -> None:
    rng = SampleRange(10, 14, 2, 1, slice_start=1, slice_end=3)
    assert len(rng) == 2
    assert [tuple(i) for i in rng.sample_infos()] == [(11, 1, 2, 1), (12, 2, 2, 1)]
    with pytest.raises(RuntimeError, match="empty batch"):
        TaskArgs.make_sample(SampleRange(3, 3, 0, 0))
    assert TaskArgs.make_batch((5,)).batch_args == (5,)
    with pytest.raises(ValueError, match="either"):
        TaskArgs(0)


def test_sample_and_batch_contexts_are_scheduled_by_index() -> None:
    groups = [Group(where_and_which), Group(batch_of, batch=True)]
    with closing(WorkerPool.from_groups(groups, 1, num_workers=2)) as pool:
        assert len(pool.pids()) == 2 and pool.pool.pids() == pool.pids()
        assert [c.dedicated_worker_id for c in pool.contexts] == [None, None]
        pool.schedule_batch(0, TaskArgs.make_sample(SampleRange(4, 8, 1, 0)))
        pool.schedule_batch(1, TaskArgs.make_batch((7,)))
        samples = pool.receive_batch(0)
        assert [s[1:].tolist() for s in samples] == [[4 + i, i, 1] for i in range(4)]
        assert {int(s[0]) for s in samples} <= set(pool.pids())
        assert [s.tolist() for s in pool.receive_batch(1)] == [[7, 7]] * 3


@pytest.mark.parametrize("num_workers", [1, 3])
def test_iterables_get_a_dedicated_worker_and_no_idle_workers(num_workers) -> None:
    groups = [Group(PidBatches(), batch=True), Group(PidBatches(), batch=True)]
    with pytest.warns(Warning, match="only 2") if num_workers > 2 else nullcontext():
        pool = WorkerPool.from_groups(groups, 1, start_method="spawn", num_workers=num_workers)
    with closing(pool):
        assert len(pool.pids()) == min(num_workers, 2)
        workers = [c.dedicated_worker_id for c in pool.contexts]
        for index in (0, 1):
            pool.schedule_batch(index, TaskArgs.make_batch(()))
        for index, worker in enumerate(workers):
            (sample,) = pool.receive_batch(index)
            assert sample.tolist() == [pool.pool._processes[worker].pid, 1]
        assert (workers[0] == workers[1]) == (num_workers == 1)


def test_refusals_as_dali_gives_them() -> None:
    with pytest.raises(RuntimeError, match="no callbacks"):
        WorkerPool.from_groups([], 1)
    with pytest.raises(RuntimeError, match="batch mode"):
        WorkerPool.from_groups([Group(PidBatches())], 1)
    with closing(WorkerPool.from_groups([Group(text_sample)], 1)) as pool:
        pool.schedule_batch(0, TaskArgs.make_sample(SampleRange(0, 1, 0, 0)))
        with pytest.raises(Exception, match="Unsupported callback return type.*str"):
            pool.receive_batch(0)
