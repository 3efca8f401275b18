"""The executor's thread pool: jobs of indexed items shared by persistent threads.

A *job* maps a function over ``range(n)``. :meth:`ThreadPool.open` queues a job and the pool's
helper threads start on it at once; :meth:`ThreadPool.join` makes the calling thread work on
the job too and returns the results in order. Helpers always take the oldest job that has items
left, so several jobs can be open at once and a helper that runs out of one job's items goes
straight on to the next job's instead of waiting at a barrier. While the items of the job it
joins are all taken but some still run on helpers, the joining thread works on later jobs'
items, so no thread idles while there is work.

The pool holds ``num_threads - 1`` helper threads: the thread that joins is the last worker.

Items are handed out in runs of consecutive indices that shrink as the job empties (a quarter of
the items left per thread and claim, down to one): each claim takes the pool's lock, and a
thread that runs several items per claim meets the other threads there less often, while the
last items still go out one at a time, so that no thread waits long for another's run.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Job", "ThreadPool", "abort_all_pools"]

T = TypeVar("T")


class Job(Generic[T]):
    """One map over the pool: items ``0 … n-1`` handed out in order, results kept by index."""

    __slots__ = (
        "cancelled",
        "claimed",
        "completed",
        "failure",
        "failure_index",
        "fn",
        "n",
        "ran",
        "results",
        "seq",
    )

    def __init__(self, fn: Callable[[int], T], n: int, seq: int) -> None:
        self.fn = fn
        self.n = n
        self.seq = seq
        self.results: list[Any] = [None] * n
        self.claimed = 0
        self.completed = 0
        """Items handed out that no thread holds any more (run, or skipped once dropped)."""
        self.ran = 0
        """Items that ran (returned or raised)."""
        self.failure: BaseException | None = None
        self.failure_index = n
        self.cancelled = False

    @property
    def has_items(self) -> bool:
        """Whether some item has not been handed out yet."""
        return not self.cancelled and self.claimed < self.n

    @property
    def finished(self) -> bool:
        """Whether every item handed out has completed and none is left to hand out."""
        return not self.has_items and self.completed == self.claimed


class _Shared:
    """What the helper threads see: they hold no reference to the pool, so an unclosed pool
    is still collected (and its threads told to exit)."""

    def __init__(self, workers: int) -> None:
        self.lock = threading.Lock()
        self.has_work = threading.Condition(self.lock)
        self.finished = threading.Condition(self.lock)
        self.open: deque[Job[Any]] = deque()
        self.closed = False
        self.aborted = False
        self.share = 4 * workers
        """Each claim takes the items left over this, rounded down (at least one)."""

    def claim(self, job: Job[Any]) -> range:
        """Hand out ``job``'s next run of items (the lock is held)."""
        start = job.claimed
        job.claimed = start + max(1, (job.n - start) // self.share)
        if not job.has_items:
            self.open.remove(job)
        return range(start, job.claimed)

    def execute(self, job: Job[Any], items: range) -> None:
        """Run a run of items in order and record their results, or the failure that ends the
        run. A failure stops the handing out of the job's items; the items of the runs in hand
        still run up to the lowest failing index, and the job keeps the failure of the lowest
        index (items are handed out in order and the join waits for those held, so that is the
        lowest failing item overall, whatever the threads' timing). A job dropped otherwise
        (cancelled, aborted) runs none of the items left in the runs in hand."""
        fn, results = job.fn, job.results
        failure, ran, index = None, 0, items.start
        for index in items:
            if job.cancelled and (job.failure is None or index > job.failure_index):
                break
            ran += 1
            try:
                results[index] = fn(index)
            except BaseException as exc:
                failure = exc
                break
        with self.lock:
            if failure is not None and index < job.failure_index:
                job.failure, job.failure_index = failure, index
                self.drop(job)
            job.ran += ran
            job.completed += len(items)
            if job.finished:
                self.finished.notify_all()

    def drop(self, job: Job[Any]) -> None:
        """Hand out no more of ``job``'s items (the lock is held)."""
        if job.has_items:
            self.open.remove(job)
        job.cancelled = True

    def close(self) -> None:
        """Tell the helpers to exit once they finish the item in hand."""
        with self.lock:
            self.closed = True
            self.has_work.notify_all()

    def abort(self) -> None:
        """Hand out no item of any job any more; joins fail once their running items end."""
        with self.lock:
            self.aborted = True
            for job in list(self.open):
                self.drop(job)
            self.finished.notify_all()

    def helper_loop(self, pin: Callable[[], None] | None) -> None:
        """A helper thread's life: take the oldest open job's next item until closed."""
        if pin is not None:
            pin()
        while self._work_once():
            pass

    def _work_once(self) -> bool:
        """Wait for an item and run it; False once closed. The job is a local of this call, so
        an idle helper holds no reference to it (nor, through it, to a dropped pipeline)."""
        with self.lock:
            while not self.open and not self.closed:
                self.has_work.wait()
            if self.closed:
                return False
            job = self.open[0]
            items = self.claim(job)
        self.execute(job, items)
        return True


class ThreadPool:
    """Runs jobs on ``num_threads`` threads: ``num_threads - 1`` helpers and the joining thread.

    Args:
        num_threads: threads that work on jobs, the joining thread included (>= 1).
        set_affinity: pin each helper thread to one core (round robin over the allowed cores).
    """

    def __init__(self, num_threads: int, set_affinity: bool = False) -> None:
        self.num_threads = num_threads
        self._shared = _Shared(num_threads)
        self._seq = itertools.count()
        cores = itertools.count(1)

        def pin() -> None:
            allowed = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {allowed[next(cores) % len(allowed)]})

        self._threads = [
            threading.Thread(
                target=self._shared.helper_loop,
                args=(pin if set_affinity else None,),
                name=f"feedline-thread-{index}",
                daemon=True,
            )
            for index in range(1, num_threads)
        ]
        for thread in self._threads:
            thread.start()
        weakref.finalize(self, self._shared.close)
        _LIVE_POOLS.add(self)

    def open(self, fn: Callable[[int], T], n: int) -> Job[T]:
        """Queue ``fn(i)`` for ``i < n``; the helpers start on it once older jobs' items are
        handed out. :meth:`join` (or :meth:`cancel`) must follow."""
        shared = self._shared
        job = Job(fn, n, next(self._seq))
        if shared.aborted:
            job.cancelled = True
        elif n > 0:
            with shared.lock:
                shared.open.append(job)
                if self._threads and n > 1:
                    shared.has_work.notify(n - 1)
        return job

    def join(self, job: Job[T], poll: Callable[[], None] | None = None) -> list[T]:
        """Work on ``job`` (then on later jobs while its last items finish) until it is done.

        Args:
            job: a job opened on this pool.
            poll: called before each run of items this thread takes, outside the lock.

        Returns:
            ``fn(i)`` for every ``i``, in order.

        Raises:
            BaseException: the first failure of one of the job's items.
        """
        shared = self._shared
        while True:
            if poll is not None:
                poll()
            with shared.lock:
                if job.finished:
                    break
                if job.has_items:
                    target, items = job, shared.claim(job)
                else:
                    later = next((j for j in shared.open if j.seq > job.seq), None)
                    if later is None:
                        shared.finished.wait()
                        continue
                    target, items = later, shared.claim(later)
            shared.execute(target, items)
        if job.failure is not None:
            raise job.failure
        if job.cancelled and job.ran < job.n:
            raise RuntimeError("the thread pool was aborted before the job finished")
        return job.results

    def cancel(self, job: Job[Any]) -> None:
        """Hand out no more of ``job``'s items and wait for those running; failures are dropped."""
        shared = self._shared
        with shared.lock:
            shared.drop(job)
            while not job.finished:
                shared.finished.wait()

    def map(self, fn: Callable[[int], T], n: int) -> list[T]:
        """``fn(i)`` for ``i < n``, run on the pool and the calling thread; results in order."""
        return self.join(self.open(fn, n))

    def abort(self) -> None:
        """Stop handing out items of every job, without waiting: a pipeline that is shutting
        down waits only for the items already running, not for the ones queued."""
        self._shared.abort()

    def close(self) -> None:
        """Stop the helper threads once they finish the item in hand."""
        self._shared.close()
        for thread in self._threads:
            thread.join()


_LIVE_POOLS: weakref.WeakSet[ThreadPool] = weakref.WeakSet()


def abort_all_pools() -> None:
    """Stop every live pool handing out items (the items running finish): the interpreter is
    about to exit, and no iteration should start more work."""
    for pool in list(_LIVE_POOLS):
        pool.abort()
