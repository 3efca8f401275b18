"""The prefetch queue: iterations computed ahead of the consumer, handed out in order.

:class:`IterationQueue` implements the scheduling half of DALI's run API for a pipeline:
``schedule()`` requests iterations (the queue depth at the start of an epoch, then one at a time),
each after a ``prepare`` step that runs on the calling thread (the pipeline's input callbacks,
which may end the input), and ``next_result()`` waits for the oldest. With ``background=True``
they are computed on one background thread while the consumer works on earlier ones; otherwise
at once, in ``schedule()``.
The end of the input (:class:`~feedline.core.execution.executor.EndOfData`) stops the epoch; any
other failure stops the queue (until :meth:`IterationQueue.new_epoch`) and is re-raised to the
consumer.

Shutting down never runs queued work: :meth:`IterationQueue.close` cancels the iterations not
started yet and waits only for the one being computed (or for none, with ``wait=False``), and a
consumer interrupted while it waits (Ctrl-C) cancels them too. The background thread is a daemon
that holds the queue only weakly between iterations, so neither a dropped pipeline nor
interpreter exit waits for more than the calls running: at exit (an ``atexit`` hook) the thread
pools hand out no further item and every live runner is closed once the calls in hand end, so no
kernel is still running when the interpreter finalizes — a thread stopped there inside C++ code
(OpenCV's bindings catch every exception) aborts the process with "FATAL: exception not
rethrown".
"""

from __future__ import annotations

import atexit
import contextlib
import inspect
import threading
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import CancelledError, Future

from feedline.core.errors import PipelineError
from feedline.core.execution.executor import EndOfData, IterationResult, abort_all_executors
from feedline.core.execution.threads import abort_all_pools

__all__ = ["IterationQueue"]

_LIVE_RUNNERS: weakref.WeakSet[_Runner] = weakref.WeakSet()


_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _detached(error: BaseException) -> BaseException:
    """A copy of ``error`` for later messages ("stopped after an earlier error"), without its
    traceback: the raised error's traceback runs through the pipeline's own frames, so keeping
    it in the queue, which the pipeline owns, would be a reference cycle that keeps a dropped
    pipeline (its threads and worker processes) alive until the garbage collector runs."""
    try:
        copy = type(error).__new__(type(error), *error.args)
        copy.__init__(*error.args)
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")
    return copy


def _release_frames(error: BaseException | None) -> None:
    """Drop the local variables of the finished background frames in the traceback of
    ``error`` and of its causes (their lines stay for printing): the executor's frames hold the
    error again (its progress record), and such a cycle would keep the frames the error passes
    through next, the pipeline's, alive after the caller dropped the error."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        tb = error.__traceback__
        while tb is not None:
            if not tb.tb_frame.f_code.co_flags & _SUSPENDABLE:  # clearing would close it
                with contextlib.suppress(RuntimeError):  # a frame still running
                    tb.tb_frame.clear()
            tb = tb.tb_next
        error = error.__cause__ or error.__context__


@atexit.register
def _finish_before_exit() -> None:
    """Before the interpreter finalizes: start no further item, wake the kernels waiting for
    input, let the calls running end (the iteration they belong to then stops) and cancel the
    queued iterations."""
    abort_all_pools()
    abort_all_executors()
    for runner in list(_LIVE_RUNNERS):
        runner.close(wait=True)


class _Runner:
    """A daemon thread computing requested iterations one after another, in request order.

    It holds the computation (:meth:`IterationQueue._compute`) weakly, so it keeps nothing alive;
    it ends when closed or when its queue is collected.
    """

    def __init__(self, compute: Callable[[], IterationResult]) -> None:
        self._compute = weakref.WeakMethod(compute)  # type: ignore[arg-type]
        self._lock = threading.Condition()
        self._todo: deque[Future[IterationResult]] = deque()
        self._running: Future[IterationResult] | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="feedline-pipeline", daemon=True)
        self._thread.start()
        _LIVE_RUNNERS.add(self)

    def submit(self) -> Future[IterationResult]:
        """Request the next iteration; its future completes when it is computed."""
        future: Future[IterationResult] = Future()
        with self._lock:
            self._todo.append(future)
            self._lock.notify()
        return future

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._todo and not self._closed:
                    self._lock.wait(timeout=0.5)
                    if self._compute() is None:
                        return
                if self._closed:
                    return
                future = self._running = self._todo.popleft()
            if future.set_running_or_notify_cancel():
                self._run_one(future)
            future = None  # this thread must not keep a finished iteration (or its error) alive
            with self._lock:
                self._running = None
                self._lock.notify_all()

    def _run_one(self, future: Future[IterationResult]) -> None:
        compute = self._compute()
        if compute is None:
            future.set_exception(EndOfData("the pipeline was closed"))
            return
        try:
            future.set_result(compute())
        except BaseException as exc:  # delivered to the consumer, never lost in this thread
            future.set_exception(exc)

    def close(self, wait: bool) -> None:
        """Cancel what has not started; with ``wait``, wait for the iteration being computed
        (unless called from this runner's own thread, which cannot wait for itself)."""
        wait = wait and threading.current_thread() is not self._thread
        with self._lock:
            self._closed = True
            while self._todo:
                self._todo.popleft().cancel()
            self._lock.notify_all()
            while wait and self._running is not None:
                self._lock.wait()


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
        self._runner: _Runner | None = None
        self._pending: deque[Future[IterationResult]] = deque()
        self._first_in_epoch = True
        self.iteration = 0
        """The number of the next iteration to compute."""
        self.requested = 0
        """How many iterations have been requested (iteration numbers below it)."""
        self.stopped = False
        self.end_reached = False
        self.input_ended = False
        """A ``prepare`` step reported the end of the input: nothing more is scheduled."""
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

    def schedule(self, prepare: Callable[[int], bool] | None = None) -> None:
        """Request the queue depth's iterations at the start of an epoch, else one more.

        Args:
            prepare: called with each iteration's number on this thread before it is requested
                (the pipeline's input callbacks); False means the input ended: nothing more is
                requested this epoch, and once the iterations requested before it are consumed
                :meth:`next_result` raises StopIteration.

        Raises:
            PipelineError: an earlier iteration failed.
            Exception: what ``prepare`` raised (the queue then stops for good).
        """
        self._raise_if_failed()
        if self.end_reached or self.stopped or self.input_ended:
            return
        count = self._depth if self._first_in_epoch else 1
        self._first_in_epoch = False
        for _ in range(count):
            if prepare is not None and not self._prepare(prepare):
                self.input_ended = True
                return
            self.requested += 1
            if self._background:
                if self._runner is None:
                    self._runner = _Runner(self._compute)
                self._pending.append(self._runner.submit())
                continue
            future: Future[IterationResult] = Future()
            try:
                future.set_result(self._compute())
            except BaseException as exc:
                future.set_exception(exc)
            self._pending.append(future)

    def _prepare(self, prepare: Callable[[int], bool]) -> bool:
        try:
            return prepare(self.requested)
        except Exception as exc:
            self.failure = _detached(exc)
            self._drain()
            raise

    def next_result(self) -> IterationResult:
        """Wait for the oldest scheduled iteration.

        Raises:
            StopIteration: nothing is scheduled, or the input ended (until :meth:`new_epoch`).
            PipelineError: an earlier iteration failed.
        """
        self._raise_if_failed()
        if not self._pending:
            self.end_reached = self.end_reached or self.input_ended
            raise StopIteration
        future = self._pending[0]
        try:
            error = future.exception()  # waits; the error is not raised here yet (see below)
        except CancelledError:
            self._pending.popleft()
            raise PipelineError(
                "the iteration was cancelled: the pipeline was interrupted or closed (build() "
                "again after close())"
            ) from None
        except (KeyboardInterrupt, SystemExit):
            # Interrupted while waiting: drop the work queued behind, keep this one for a retry.
            self.stop()
            raise
        self._pending.popleft()
        if error is None:
            return future.result()
        future = None
        self._drain()
        if isinstance(error, EndOfData):
            self.end_reached = True
            error = None
            raise StopIteration
        self.failure = _detached(error)
        _release_frames(error)
        try:
            raise error
        finally:
            error = None  # no cycle through this frame: the caller's drop frees the pipeline

    def new_epoch(self) -> bool:
        """Start a new epoch if an iteration had failed, or if the input had ended and every
        iteration before the end was consumed; whether it did. (DALI also starts one while such
        iterations are still queued, handing them out in the new epoch; here they are never mixed
        into it.)"""
        if self.failure is not None:
            self.failure = None
            self.requested = self.iteration
        elif not (self.end_reached or (self.input_ended and not self._pending)):
            return False
        self.end_reached = self.input_ended = False
        self.stopped = False
        self._first_in_epoch = True
        return True

    def close(self, wait: bool = True) -> None:
        """Stop computing: iterations not started are cancelled, the background thread ends
        (after the iteration it is computing, which ``wait`` waits for) and nothing scheduled is
        handed out any more."""
        self.stopped = True
        if self._runner is not None:
            self._runner.close(wait)
            self._runner = None
        self._pending.clear()

    def stop(self) -> None:
        """Cancel the scheduled iterations that have not started; the one being computed goes
        on (the consumer gave up, or the pipeline is closing)."""
        self.stopped = True
        for future in self._pending:
            future.cancel()

    def fail(self, failure: BaseException) -> None:
        """A later stage of a handed-out iteration failed: stop for good, as if the iteration
        itself had failed (later calls raise PipelineError naming ``failure``)."""
        self._drain()
        self.failure = failure

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
                future.cancel() or future.exception()
        self._discard()
        self.requested = self.iteration
