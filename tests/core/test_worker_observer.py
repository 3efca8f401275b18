"""The worker pool's observer thread, its DALI-named surface and the slots made at start."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import psutil
import pytest

from feedline.core.types import SampleInfo
from feedline.core.workers import SampleBatchTask, WorkerDiedError, WorkerPool

TIMEOUT = 20.0
MIB = 1 << 20


def slow_index(info: SampleInfo) -> np.ndarray:
    time.sleep(0.05)
    return np.array(info.idx_in_epoch)


def block_of(info: SampleInfo) -> np.ndarray:
    return np.full(3 * MIB, info.idx_in_batch, np.uint8)


def echo(task: Any) -> Any:
    return task


def children() -> set[int]:
    return {child.pid for child in psutil.Process().children()}


def assert_ends(pid: int) -> None:
    """Wait until the child ``pid`` has exited (a zombie: the pool reaps it when closed)."""
    deadline = time.monotonic() + TIMEOUT
    while psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, f"worker {pid} is still running"
        time.sleep(0.01)


def infos(count: int) -> SampleBatchTask:
    return SampleBatchTask([SampleInfo(i, i, 0, 0) for i in range(count)])


@pytest.fixture
def make_pool() -> Iterator[Callable[..., WorkerPool]]:
    pools: list[WorkerPool] = []

    def make(*sources: tuple, workers: int = 2) -> WorkerPool:
        pool = WorkerPool(workers, "fork")
        pools.append(pool)
        for source_id, callback, options in sources:
            pool.add_source(source_id, callback, **options)
        pool.start()
        return pool

    yield make
    for pool in pools:
        pool.close()


def test_pids_are_the_live_worker_children(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, slow_index, {"kind": "sample"}), workers=3)
    pids = pool.pids()
    assert len(set(pids)) == 3 and set(pids) <= children()
    pool.close()
    assert not set(pids) & children()  # joined, not left as zombies


def test_observer_thread_lives_as_long_as_the_pool(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, slow_index, {"kind": "sample"}))
    thread = pool.pool._observer.thread
    assert thread is not None and thread.is_alive() and thread.daemon
    pool.close()
    assert not thread.is_alive()


def test_a_dead_worker_stops_the_others_and_is_the_one_named(
    make_pool: Callable[..., WorkerPool],
) -> None:
    pool = make_pool((0, slow_index, {"kind": "sample"}), workers=3)
    victim, *others = pool.pids()
    observer = pool.pool._observer
    os.kill(victim, signal.SIGKILL)
    observer.thread.join(TIMEOUT)
    assert not observer.thread.is_alive()
    assert observer.first_exit is not None and observer.first_exit.pid == victim
    for pid in others:  # stopped by the observer without anything being received
        assert_ends(pid)
    with pytest.raises(WorkerDiedError, match=f"pid {victim}.*SIGKILL"):
        pool.schedule(0, infos(6))
        pool.receive(0, timeout=TIMEOUT)


def test_closing_is_not_taken_for_a_failure(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, slow_index, {"kind": "sample"}))
    observer = pool.pool._observer
    pool.close()
    assert observer.first_exit is None


@pytest.mark.parametrize(
    ("kind", "batch_size", "hint", "workers", "expected"),
    [
        ("sample", 16, None, 2, MIB),  # no hint: 1 MiB
        ("sample", 16, 1024, 2, MIB),  # 8 samples per worker x 1 KiB is below 1 MiB
        ("sample", 7, 4 * MIB, 3, 3 * 4 * MIB),  # ceil(7 / 3) samples per worker
        ("batch", 5, MIB, 2, 5 * MIB),  # a batch source's task holds the whole batch
    ],
)
def test_slots_exist_from_the_start_at_the_planned_size(
    make_pool: Callable[..., WorkerPool],
    kind: str,
    batch_size: int,
    hint: int | None,
    workers: int,
    expected: int,
) -> None:
    callback = slow_index if kind == "sample" else echo
    options = {"kind": kind, "batch_size": batch_size, "bytes_per_sample": hint, "prefetch": 2}
    pool = make_pool((0, callback, options), workers=workers)
    stats = pool.shm_statistics()
    assert stats["capacities"] == [expected] * (2 * workers)  # prefetch slots in each worker
    samples = -(-batch_size // workers) if kind == "sample" else batch_size
    assert stats["per_sample_capacities"] == [expected // samples] * (2 * workers)


def test_every_slot_takes_turns_and_grows(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, block_of, {"kind": "sample", "batch_size": 2, "prefetch": 2}), workers=1)
    assert pool.shm_statistics()["capacities"] == [MIB, MIB]
    for _ in range(2):  # one batch at a time: the two slots are used in turn
        pool.schedule(0, infos(2))
        result = pool.receive(0, timeout=TIMEOUT)
        assert [int(a[0]) for a in result] == [0, 1]
    assert min(pool.shm_statistics()["capacities"]) >= 2 * 3 * MIB


def test_batch_size_and_hint_are_checked() -> None:
    pool = WorkerPool(1, "fork")
    with pytest.raises(ValueError, match="batch_size of source 0"):
        pool.add_source(0, echo, kind="batch", batch_size=0)
    with pytest.raises(ValueError, match="bytes_per_sample of source 1"):
        pool.add_source(1, echo, kind="batch", bytes_per_sample=-5)
