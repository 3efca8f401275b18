"""The executor's thread pool: results in order, several jobs open at once, failures, shutdown."""

from __future__ import annotations

import gc
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.execution.threads import Job, ThreadPool, _Shared


@pytest.fixture
def pool2():
    pool = ThreadPool(2)
    yield pool
    pool.close()


@settings(max_examples=30, deadline=None)
@given(
    num_threads=st.integers(1, 4),
    sizes=st.lists(st.integers(0, 40), min_size=1, max_size=5),
)
def test_every_item_of_every_open_job_runs_once_and_results_stay_in_order(
    num_threads: int, sizes: list[int]
) -> None:
    pool = ThreadPool(num_threads)
    calls: list[tuple[int, int]] = []
    try:
        jobs = []
        for number, n in enumerate(sizes):

            def item(i: int, number: int = number) -> tuple[int, int]:
                calls.append((number, i))
                return number, i * i

            jobs.append(pool.open(item, n))
        for number, (job, n) in enumerate(zip(jobs, sizes, strict=True)):
            assert pool.join(job) == [(number, i * i) for i in range(n)]
    finally:
        pool.close()
    assert sorted(calls) == [(number, i) for number, n in enumerate(sizes) for i in range(n)]


def test_the_joining_thread_works_on_a_later_job_while_its_own_last_item_runs(pool2) -> None:
    main = threading.get_ident()
    later_ran_on: list[int] = []
    later_started = threading.Event()
    waited: list[bool] = []

    def first(i: int) -> int:
        if threading.get_ident() == main:
            time.sleep(0.05)  # time for the helper to take the other item
        else:
            waited.append(later_started.wait(timeout=10))
        return i

    def later(i: int) -> int:
        later_ran_on.append(threading.get_ident())
        later_started.set()
        return i

    first_job = pool2.open(first, 2)
    later_job = pool2.open(later, 4)
    assert pool2.join(first_job) == [0, 1]
    # The helper held one of the first job's items until a later item had started; only the
    # joining thread could start it, since the helper was busy.
    if waited:
        assert waited == [True]
        assert main in later_ran_on
    assert pool2.join(later_job) == [0, 1, 2, 3]


def test_helpers_go_on_to_the_next_job_without_waiting_for_a_join(pool2) -> None:
    helper_items = threading.Semaphore(0)

    def item(i: int) -> int:
        helper_items.release()
        return i

    job = pool2.open(item, 3)
    # Nobody joins yet: the helper thread alone takes every item.
    for _ in range(3):
        assert helper_items.acquire(timeout=10)
    assert pool2.join(job) == [0, 1, 2]


def test_the_first_failure_is_raised_and_the_remaining_items_are_not_run(pool2) -> None:
    ran: list[int] = []

    def item(i: int) -> int:
        ran.append(i)
        if i == 3:
            raise ValueError("item 3 failed")
        return i

    with pytest.raises(ValueError, match="item 3 failed"):
        pool2.map(item, 1000)
    assert len(ran) < 1000
    assert pool2.map(lambda i: i + 1, 5) == [1, 2, 3, 4, 5]  # the pool is still usable


@settings(max_examples=25, deadline=None)
@given(
    num_threads=st.integers(2, 4),
    failing=st.sets(st.integers(0, 15), min_size=1, max_size=6),
    delays=st.lists(st.floats(0, 0.004), min_size=16, max_size=16),
)
def test_of_several_failures_the_lowest_index_is_raised_whatever_the_timing(
    num_threads: int, failing: set[int], delays: list[float]
) -> None:
    def item(i: int) -> int:
        time.sleep(delays[i])  # later items may fail first
        if i in failing:
            raise ValueError(f"item {i}")
        return i

    pool = ThreadPool(num_threads)
    try:
        with pytest.raises(ValueError, match=rf"^item {min(failing)}$"):
            pool.map(item, 16)
    finally:
        pool.close()


def test_cancel_waits_for_running_items_and_drops_the_rest(pool2) -> None:
    release = threading.Event()
    started = threading.Event()
    ran: list[int] = []

    def item(i: int) -> int:
        ran.append(i)
        started.set()
        release.wait(timeout=10)
        return i

    job = pool2.open(item, 50)
    assert started.wait(timeout=10)
    threading.Timer(0.05, release.set).start()
    pool2.cancel(job)
    assert job.finished
    assert ran == [0]  # the helper's first item ran; nobody else took any
    assert pool2.map(lambda i: -i, 3) == [0, -1, -2]


def test_cancel_swallows_a_failure(pool2) -> None:
    def item(i: int) -> int:
        raise RuntimeError("dropped")

    job = pool2.open(item, 4)
    pool2.cancel(job)
    assert job.finished


def test_a_single_thread_pool_runs_everything_on_the_joining_thread() -> None:
    pool = ThreadPool(1)
    threads: set[int] = set()

    def item(i: int) -> int:
        threads.add(threading.get_ident())
        return i

    assert pool.map(item, 10) == list(range(10))
    assert threads == {threading.get_ident()}
    pool.close()


def test_close_stops_the_helpers() -> None:
    before = set(threading.enumerate())
    pool = ThreadPool(3)
    helpers = set(threading.enumerate()) - before
    assert len(helpers) == 2
    pool.close()
    assert not any(thread.is_alive() for thread in helpers)


def test_an_unclosed_pool_is_collected_and_its_helpers_exit() -> None:
    before = set(threading.enumerate())
    pool = ThreadPool(3)
    assert pool.map(lambda i: i, 8) == list(range(8))
    helpers = set(threading.enumerate()) - before
    del pool
    gc.collect()
    deadline = time.monotonic() + 10
    while any(thread.is_alive() for thread in helpers) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(thread.is_alive() for thread in helpers)


@given(n=st.integers(1, 300), workers=st.integers(1, 8))
def test_items_go_out_in_shrinking_runs_that_end_with_single_items(n: int, workers: int) -> None:
    shared = _Shared(workers)
    job = Job(lambda i: i, n, 0)
    shared.open.append(job)
    runs = []
    while job.has_items:
        runs.append(shared.claim(job))
    assert [i for run in runs for i in run] == list(range(n))  # in order, each once
    sizes = [len(run) for run in runs]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] == 1
    assert sizes[0] == max(1, n // (4 * workers))
    assert not shared.open
