"""The prefetch queue: iterations computed ahead of the consumer, handed out in order.

:class:`IterationQueue` implements the scheduling half of DALI's run API for a pipeline:
``schedule()`` requests iterations (the queue depth at the start of an epoch, then one at a time)
and ``next_result()`` waits for the oldest. With ``background=True`` they are computed on one
background thread while the consumer works on earlier ones; otherwise at once, in ``schedule()``.
The end of the input (:class:`~feedline.core.execution.executor.EndOfData`) stops the epoch; any
other failure stops the queue for good and is re-raised to the consumer.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from feedline.core.errors import PipelineError
from feedline.core.execution.executor import EndOfData, IterationResult

__all__ = ["IterationQueue"]


class IterationQueue:
    """Iterations requested ahead of their consumer.

    Args:
        run: computes iteration ``n`` (raises EndOfData when the input ended).
        discard: drops work started early on the next iteration (after a failure or the end).
        depth: how many iterations are scheduled at the start of an epoch.
        background: compute on a background thread (started on first use).
    """

    def __init__(
        self,
        run: Callable[[int], IterationResult],
        discard: Callable[[], None],
        depth: int,
        background: bool,
    ) -> None:
        self._run = run
        self._discard = discard
        self._depth = depth
        self._background = background
        self._runner: ThreadPoolExecutor | None = None
        self._pending: deque[Future[IterationResult]] = deque()
        self._first_in_epoch = True
        self.iteration = 0
        """The number of the next iteration to compute."""
        self.requested = 0
        """How many iterations have been requested (iteration numbers below it)."""
        self.stopped = False
        self.end_reached = False
        self.failure: BaseException | None = None

    def is_requested(self, iteration: int) -> bool:
        """Whether ``iteration`` is scheduled, so the executor may start it early."""
        return iteration < self.requested and not self.stopped

    def empty(self) -> bool:
        """True when no scheduled iteration is waiting to be consumed."""
        return not self._pending

    def restart_at(self, iteration: int) -> None:
        """Number the next iteration ``iteration`` (resuming from a checkpoint)."""
        self.iteration = self.requested = iteration

    def schedule(self) -> None:
        """Request the queue depth's iterations at the start of an epoch, else one more.

        Raises:
            PipelineError: an earlier iteration failed.
        """
        self._raise_if_failed()
        if self.end_reached or self.stopped:
            return
        count = self._depth if self._first_in_epoch else 1
        self._first_in_epoch = False
        self.requested += count
        for _ in range(count):
            if self._background:
                if self._runner is None:
                    self._runner = ThreadPoolExecutor(1, thread_name_prefix="feedline-pipeline")
                self._pending.append(self._runner.submit(self._compute))
                continue
            future: Future[IterationResult] = Future()
            try:
                future.set_result(self._compute())
            except BaseException as exc:
                future.set_exception(exc)
            self._pending.append(future)

    def next_result(self) -> IterationResult:
        """Wait for the oldest scheduled iteration.

        Raises:
            StopIteration: nothing is scheduled, or the input ended (until :meth:`new_epoch`).
            PipelineError: an earlier iteration failed.
        """
        self._raise_if_failed()
        if not self._pending:
            raise StopIteration
        future = self._pending.popleft()
        try:
            return future.result()
        except EndOfData:
            self._drain()
            self.end_reached = True
            raise StopIteration from None
        except BaseException as exc:
            self._drain()
            self.failure = exc
            raise

    def new_epoch(self) -> bool:
        """Start a new epoch if the input had ended; whether it had."""
        if not self.end_reached:
            return False
        self.end_reached = False
        self.stopped = False
        self._first_in_epoch = True
        return True

    def close(self, wait: bool = True) -> None:
        """Stop computing: the background thread ends (after its current iteration if ``wait``)
        and nothing scheduled is handed out any more."""
        self.stopped = True
        if self._runner is not None:
            self._runner.shutdown(wait=wait, cancel_futures=True)
            self._runner = None
        self._pending.clear()

    def _compute(self) -> IterationResult:
        if self.stopped:
            raise EndOfData("stopped")
        iteration = self.iteration
        self.iteration += 1
        try:
            return self._run(iteration)
        except BaseException:
            self.stopped = True
            self._discard()
            raise

    def _raise_if_failed(self) -> None:
        if self.failure is not None:
            raise PipelineError(
                f"the pipeline stopped after an earlier error: {self.failure}"
            ) from self.failure

    def _drain(self) -> None:
        self.stopped = True
        while self._pending:
            future = self._pending.popleft()
            with contextlib.suppress(BaseException):
                future.result()
        self._discard()
        self.requested = self.iteration
