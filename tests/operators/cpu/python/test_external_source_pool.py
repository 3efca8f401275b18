"""A pipeline's worker pool for ``external_source(parallel=True)``, through the pipeline: DALI's
names for it, its shared-memory statistics, ``py_num_workers=None`` and its end with the
pipeline."""

from __future__ import annotations

import time

import numpy as np
import psutil
import pytest

from feedline import fn, pipeline_def
from feedline.core.types import SampleInfo

MIB = 1 << 20


def index_sample(info: SampleInfo) -> np.ndarray:
    return np.full((2, 3), info.idx_in_epoch, np.int32)


def slow_sample(info: SampleInfo) -> np.ndarray:
    time.sleep(0.2)
    return np.array(info.idx_in_epoch)


def children() -> set[int]:
    return {child.pid for child in psutil.Process().children()}


def parallel_pipe(source=index_sample, workers=2, batch_size=4, **es_args):
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, py_num_workers=workers)
    def graph():
        return fn.external_source(source, batch=False, parallel=True, **es_args)

    return graph()


def test_py_pool_is_dalis_name_of_the_pipelines_worker_pool() -> None:
    pipe = parallel_pipe()
    assert pipe._py_pool is None
    pipe.build()
    assert pipe._py_pool is pipe.py_pool
    pids = pipe._py_pool.pids()
    assert len(pids) == 2 and set(pids) <= children()
    (out,) = pipe.run()
    assert [int(out.at(i)[0, 0]) for i in range(4)] == [0, 1, 2, 3]
    pipe.close()
    assert not set(pids) & children()


def test_shm_statistics_follow_the_hint_and_the_batch_split() -> None:
    plain = parallel_pipe()
    assert plain.external_source_shm_statistics() == {"capacities": [], "per_sample_capacities": []}
    plain.build()
    assert plain.external_source_shm_statistics()["capacities"] == [MIB, MIB]
    hinted = parallel_pipe(batch_size=10, workers=3, bytes_per_sample_hint=[MIB])
    hinted.build()
    stats = hinted.external_source_shm_statistics()
    assert stats["capacities"] == [4 * MIB] * 3  # ceil(10 / 3) samples per worker
    assert stats["per_sample_capacities"] == [MIB] * 3
    hinted.run()
    assert hinted.external_source_shm_statistics() == stats  # the results fit: no new segment


def test_no_pool_without_a_parallel_source() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def graph():
        return fn.external_source(index_sample, batch=False)

    pipe = graph()
    pipe.run()
    assert pipe._py_pool is None
    assert pipe.external_source_shm_statistics()["capacities"] == []


@pytest.mark.parametrize("workers", [None, 0])
def test_a_parallel_source_without_workers_fails_at_build(workers: int | None) -> None:
    pipe = parallel_pipe(workers=workers)
    assert pipe.py_num_workers == workers
    with pytest.raises(RuntimeError, match=f"`py_num_workers` was set to `{workers}`"):
        pipe.build()


def test_dropping_a_pipeline_stops_its_workers_at_once() -> None:
    pipe = parallel_pipe(slow_sample, workers=1, batch_size=2)
    pipe.build()
    pipe.run()  # the next iterations are computed ahead, in the background, right now
    pids = pipe._py_pool.pids()
    thread = pipe._py_pool.pool._observer.thread
    del pipe
    assert not set(pids) & children()
    assert not thread.is_alive()


class EndsAt:
    """A sample callback whose epoch ends (StopIteration) or fails (ValueError) at ``end``."""

    def __init__(self, end: int, error: type[Exception]) -> None:
        self.end, self.error = end, error

    def __call__(self, info: SampleInfo) -> np.ndarray:
        if info.idx_in_epoch >= self.end:
            raise self.error("the end")
        return np.array(info.idx_in_epoch)


@pytest.mark.parametrize("error", [StopIteration, ValueError])
def test_a_pipeline_dropped_after_its_epoch_ended_or_failed_stops_its_workers(error) -> None:
    pipe = parallel_pipe(EndsAt(6, error), workers=2, batch_size=2)
    pipe.build()
    pids = pipe._py_pool.pids()
    thread = pipe._py_pool.pool._observer.thread
    with pytest.raises(Exception) as caught:  # either kind, checked below
        while True:
            pipe.run()
    assert isinstance(caught.value, StopIteration if error is StopIteration else RuntimeError)
    del caught, pipe  # no reference cycle through the error: freed without the collector
    assert not set(pids) & children()
    assert not thread.is_alive()


def test_after_a_failure_the_next_run_still_names_it() -> None:
    pipe = parallel_pipe(EndsAt(4, ValueError), workers=1, batch_size=2)
    pipe.run()  # schedules iterations 0 and 1 (the queue depth)
    with pytest.raises(RuntimeError, match="the end"):
        pipe.run()  # schedules iteration 2, whose callback failed
    with pytest.raises(RuntimeError, match="(?s)earlier error.*ValueError: the end"):
        pipe.run()
    pipe.close()


def _pipe_with_depth(source, batch_size: int, depth: int):
    @pipeline_def(
        batch_size=batch_size,
        num_threads=1,
        device_id=None,
        py_num_workers=2,
        prefetch_queue_depth=depth,
    )
    def graph():
        return fn.external_source(source, batch=False, parallel=True)

    return graph()


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("failing_iteration", [1, 2, 3])
def test_a_failing_callback_is_raised_by_the_run_that_schedules_its_iteration(
    depth: int, failing_iteration: int
) -> None:
    """As in DALI: the first run() schedules ``depth`` iterations, each later one one more, and
    the run that schedules the failing iteration raises (a StopIteration, by contrast, ends the
    epoch after the iterations scheduled before it)."""
    pipe = _pipe_with_depth(EndsAt(2 * failing_iteration, ValueError), 2, depth)
    delivered = 0
    with pytest.raises(RuntimeError, match="the end"):
        while True:
            pipe.run()
            delivered += 1
    assert delivered == max(failing_iteration - depth + 1, 0)
    pipe.close()


class Batches:
    """An iterable of ``count`` batches that starts over when ``iter()`` is called again."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __iter__(self):
        return iter(np.full((2, 1), i, np.int32) for i in range(self.count))


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_every_parallel_source_reaches_its_end_in_the_iteration_that_ends(depth: int) -> None:
    # The sample source ends first in iteration 3; the iterable, computed ahead like it, has
    # reached its end too, so it starts over in the next epoch instead of going on.
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, py_num_workers=2)
    def graph():
        per_sample = fn.external_source(
            EndsAt(6, StopIteration), batch=False, parallel=True, prefetch_queue_depth=depth
        )
        whole = fn.external_source(
            Batches(3), batch=True, parallel=True, cycle="raise", prefetch_queue_depth=depth
        )
        return per_sample, whole

    pipe = graph()
    for _ in range(3):
        firsts = []
        with pytest.raises(StopIteration):
            while True:
                _, whole = pipe.run()
                firsts.append(int(whole.at(0)[0]))
        assert firsts == [0, 1, 2]
        pipe.reset()
    pipe.close()


def epochs_of_firsts(pipe, epochs: int) -> list[list[int]]:
    """The first value of the iterable's batches, epoch by epoch, resetting at each end."""
    result = []
    for _ in range(epochs):
        firsts = []
        with pytest.raises(StopIteration):
            while True:
                _, whole = pipe.run()
                firsts.append(int(whole.at(0)[0]))
        result.append(firsts)
        pipe.reset()
    return result


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("depth", [1, 3])
def test_an_iterable_that_did_not_end_goes_on_after_reset(parallel: bool, depth: int) -> None:
    # The sample source ends the epoch in its third iteration. The iterable still yields its
    # item of that iteration (dropped with the iteration), and the next epoch takes the item
    # after it: neither the items the workers computed ahead nor that one are given twice or
    # skipped, with and without workers alike.
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, py_num_workers=2)
    def graph():
        depths = {"prefetch_queue_depth": depth} if parallel else {}
        per_sample = fn.external_source(
            EndsAt(4, StopIteration), batch=False, parallel=parallel, **depths
        )
        whole = fn.external_source(
            Batches(20), batch=True, parallel=parallel, cycle="raise", **depths
        )
        return per_sample, whole

    pipe = graph()
    assert epochs_of_firsts(pipe, 3) == [[0, 1], [3, 4], [6, 7]]
    pipe.close()
