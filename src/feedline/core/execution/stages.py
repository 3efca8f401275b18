"""Pipelines with a GPU stage: the CPU stage and the device stage of consecutive iterations
overlap.

A graph with ``mixed``/``gpu`` operators is split at build (:func:`~feedline.core.graph.
split_stages`) into a CPU stage and a device stage, each run by its own
:class:`~feedline.core.execution.executor.Executor` (sharing one thread pool).
:class:`StagedExecutor` stands where the single executor of a CPU-only pipeline stands: the
prefetch queue's thread runs the CPU stage of iteration *n* and hands its outputs to the device
stage's thread, which runs the mixed and gpu operators of iteration *n* on the pipeline's stream
while the CPU stage goes on with iteration *n + 1*. Two bounded buffers keep the stages apart
as ``prefetch_queue_depth={"cpu_size": c, "gpu_size": g}`` asks: the CPU stage waits while
``c`` of its results wait for the device stage, the device stage while ``g`` of its results wait
for the consumer. Each device-stage result carries an event recorded on the stream after its
work; the consumer waits for that event, so outputs are complete when it gets them.
CPU-only pipelines never create any of this.
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future
from typing import Any

from feedline.core.errors import PipelineError
from feedline.core.execution.device import DeviceEvent, DeviceStream
from feedline.core.execution.executor import EndOfData, Executor, IterationResult, OpStats
from feedline.core.graph import DataNode, OpNode
from feedline.core.kernel import Kernel

__all__ = ["DeviceStageRunner", "StagedExecutor"]

_Done = tuple[IterationResult, DeviceEvent]


class DeviceStageRunner:
    """Runs the device stage of iterations in order, on one thread (or inline).

    Args:
        run: computes the device stage of an iteration from its CPU stage's result.
        stream: the pipeline's stream (current while ``run`` runs).
        cpu_size: how many CPU-stage results may wait for the device stage.
        gpu_size: how many device-stage results may wait for the consumer.
        background: run on a thread of its own; else at once, in :meth:`submit`.
    """

    def __init__(
        self,
        run: Callable[[int, IterationResult], IterationResult],
        stream: DeviceStream,
        cpu_size: int,
        gpu_size: int,
        background: bool,
    ) -> None:
        self._run = weakref.WeakMethod(run)  # type: ignore[arg-type]
        self._stream = stream
        self._cpu_size = cpu_size
        self._gpu_size = gpu_size
        self._background = background
        self._lock = threading.Condition()
        self._todo: deque[tuple[Future[_Done], int, IterationResult]] = deque()
        self._ready = 0
        self._closed = False
        self._thread: threading.Thread | None = None

    def submit(self, iteration: int, cpu_result: IterationResult) -> Future[_Done]:
        """Hand iteration ``iteration``'s CPU result to the device stage; waits while
        ``cpu_size`` results wait already.

        Raises:
            EndOfData: the runner was closed (the pipeline is shutting down).
        """
        future: Future[_Done] = Future()
        if not self._background:
            future.set_running_or_notify_cancel()
            self._compute(future, iteration, cpu_result)
            with self._lock:
                self._ready += 1
            return future
        with self._lock:
            while len(self._todo) >= self._cpu_size and not self._closed:
                self._lock.wait()
            if self._closed:
                raise EndOfData("the pipeline was closed")
            self._todo.append((future, iteration, cpu_result))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="feedline-gpu-stage", daemon=True
                )
                self._thread.start()
            self._lock.notify_all()
        return future

    def collect(self, future: Future[_Done]) -> IterationResult:
        """The device stage's result of a submitted iteration, once its GPU work is done.

        Raises:
            PipelineError: the iteration was cancelled (the pipeline closed).
            BaseException: what the device stage raised.
        """
        try:
            result, event = future.result()
        except CancelledError:
            raise PipelineError("the iteration was cancelled: the pipeline was closed") from None
        finally:
            with self._lock:
                self._ready -= 1
                self._lock.notify_all()
        event.synchronize()
        return result

    def _loop(self) -> None:
        while True:
            with self._lock:
                while (not self._todo or self._ready >= self._gpu_size) and not self._closed:
                    self._lock.wait(timeout=0.5)
                    if self._run() is None:
                        return
                if self._closed:
                    return
                future, iteration, cpu_result = self._todo.popleft()
                self._lock.notify_all()
            if future.set_running_or_notify_cancel():
                self._compute(future, iteration, cpu_result)
                with self._lock:
                    self._ready += 1
                    self._lock.notify_all()
            del future, cpu_result  # hold no batch while waiting for the next one

    def _compute(self, future: Future[_Done], iteration: int, cpu_result: IterationResult) -> None:
        run = self._run()
        if run is None:
            future.set_exception(EndOfData("the pipeline was closed"))
            return
        try:
            with self._stream.activate():
                result = run(iteration, cpu_result)
                event = self._stream.record()
            future.set_result((result, event))
        except BaseException as exc:  # delivered to the consumer, never lost in this thread
            future.set_exception(exc)

    def close(self, wait: bool = True) -> None:
        """Cancel what has not started; with ``wait``, wait for the iteration in progress."""
        with self._lock:
            self._closed = True
            while self._todo:
                self._todo.popleft()[0].cancel()
            self._lock.notify_all()
            thread = self._thread
        if wait and thread is not None and thread is not threading.current_thread():
            thread.join()


class StagedExecutor:
    """The executor of a pipeline with a device stage (the interface of
    :class:`~feedline.core.execution.executor.Executor` that the pipeline uses).

    Args:
        cpu: runs the CPU stage; its outputs are ``boundary``.
        device: runs the device stage, given the CPU stage's outputs.
        boundary: the CPU-stage nodes the device stage reads or the pipeline outputs.
        stream: the pipeline's stream (closed with the executor).
        cpu_size: see :class:`DeviceStageRunner`.
        gpu_size: see :class:`DeviceStageRunner`.
        background: run the device stage on a thread of its own.
    """

    def __init__(
        self,
        cpu: Executor,
        device: Executor,
        boundary: Sequence[DataNode],
        stream: DeviceStream,
        cpu_size: int,
        gpu_size: int,
        background: bool,
    ) -> None:
        self.cpu, self.device, self.stream = cpu, device, stream
        self._keys = [(id(n.source), n.index) for n in boundary]
        self.stats: dict[str, OpStats] = {**cpu.stats, **device.stats}
        self.runner = DeviceStageRunner(self._run_device, stream, cpu_size, gpu_size, background)

    def run_iteration(self, iteration: int) -> IterationResult:
        """Run the CPU stage of ``iteration`` and hand it to the device stage; the result's
        ``pending`` is for :meth:`collect`.

        Raises:
            EndOfData: an input callback ended the epoch.
            OperatorError: a CPU-stage operator failed.
        """
        cpu_result = self.cpu.run_iteration(iteration)
        pending = self.runner.submit(iteration, cpu_result)
        return IterationResult((), cpu_result.reader_states, pending)

    def _run_device(self, iteration: int, cpu_result: IterationResult) -> IterationResult:
        given = dict(zip(self._keys, cpu_result.outputs, strict=True))
        size = len(cpu_result.outputs[0]) if cpu_result.outputs else None
        result = self.device.run_iteration(iteration, given, size)
        return IterationResult(result.outputs, cpu_result.reader_states)

    def collect(self, result: IterationResult) -> IterationResult:
        """The complete outputs of an iteration returned by :meth:`run_iteration`."""
        return self.runner.collect(result.pending)

    def statistics(self) -> dict[str, Any]:
        """Both stages' counters by operator, and the CPU stage's ``"errors"`` (if it skips)."""
        return {**self.device.statistics(), **self.cpu.statistics()}

    def discard_overlapped(self) -> None:
        """Drop the CPU stage's work started early (see ``Executor.discard_overlapped``)."""
        self.cpu.discard_overlapped()

    def kernel_of(self, op: OpNode) -> Kernel:
        """The kernel that runs ``op`` (in either stage)."""
        if id(op) in self.cpu.kernels:
            return self.cpu.kernel_of(op)
        return self.device.kernel_of(op)

    def abort(self) -> None:
        """Stop starting per-sample work; no further device-stage iteration starts."""
        self.cpu.abort()
        self.runner.close(wait=False)

    def close(self) -> None:
        """Stop both stages, wait for the stream's work and close every kernel."""
        self.runner.close()
        try:
            self.device.close()
            self.cpu.close()
        finally:
            self.stream.close()

    @property
    def kernels(self) -> dict[int, Any]:
        """Every kernel by ``id`` of its operator."""
        return {**self.cpu.kernels, **self.device.kernels}
