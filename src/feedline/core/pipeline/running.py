"""DALI's ways of running a pipeline: ``run()`` (schedule one iteration and take the oldest),
the scheduled calls (``schedule_run``, ``share_outputs``/``outputs``, ``release_outputs``), the
check that refuses mixing the two, ``reset`` at an epoch's end and ``feed_input``."""

from __future__ import annotations

from typing import Any

from feedline.core.execution.executor import Executor, IterationResult
from feedline.core.execution.prefetch import IterationQueue
from feedline.core.graph import DataNode, OpNode
from feedline.core.kernel import Kernel
from feedline.core.pipeline.definition import require_source
from feedline.core.pipeline.inputs import ScheduledInputs
from feedline.core.tensor import TensorListCPU
from feedline.core.types import PipelineAPIType

__all__ = ["RunAPI"]


class RunAPI:
    """The run calls; mixed into ``Pipeline``, which sets the attributes."""

    _api_check: bool
    _api_type: PipelineAPIType | None
    _queue: IterationQueue
    _inputs: ScheduledInputs
    _executor: Executor | None
    _built_ops: list[OpNode]
    _exec_pipelined: bool
    _cpu_size: int
    _gpu_size: int
    _consumed: int
    _iteration_in_epoch: int
    _epoch_idx: int
    _reader_states: dict[str, Any]
    _shared: tuple[TensorListCPU, ...] | None

    def build(self) -> None:
        """Build the pipeline (implemented by ``Pipeline``)."""
        raise NotImplementedError

    def _collect(self, result: IterationResult) -> IterationResult:
        """The complete outputs of an iteration with a device stage (by ``Pipeline``)."""
        raise NotImplementedError

    def _all_kernels(self) -> list[Kernel]:
        """Every built kernel, in order (implemented by ``Pipeline``)."""
        raise NotImplementedError

    def enable_api_check(self, enable: bool) -> None:
        """Turn the check that refuses mixing ``run()`` with the scheduled calls on or off."""
        self._api_check = bool(enable)

    def _check_api(self, api: PipelineAPIType) -> None:
        if not self._api_check:
            return
        if self._api_type is None:
            self._api_type = api
        elif self._api_type is not api:
            raise RuntimeError(
                f"Mixing pipeline API type. Currently used: {self._api_type.name}, "
                f"but trying to use {api.name}"
            )

    def schedule_run(self) -> None:
        """Schedule iterations: ``prefetch_queue_depth`` at the start of an epoch, else one.

        The external sources' callbacks and :meth:`iter_setup` of each scheduled iteration run
        here, on this thread (as in DALI); the rest is computed in the background.
        """
        self._check_api(PipelineAPIType.SCHEDULED)
        self._schedule()

    def _schedule(self) -> None:
        self.build()
        self._queue.schedule(self._inputs.prepare)

    def share_outputs(self) -> tuple[TensorListCPU, ...]:
        """Wait for the oldest scheduled iteration and return its outputs.

        Raises:
            StopIteration: nothing is scheduled, or the input data ended (until :meth:`reset`).
        """
        self._check_api(PipelineAPIType.SCHEDULED)
        return self._share()

    def _share(self) -> tuple[TensorListCPU, ...]:
        self.build()
        result = self._queue.next_result()
        if result.pending is not None:
            result = self._collect(result)
        self._consumed += 1
        self._iteration_in_epoch += 1
        self._reader_states.update(result.reader_states)
        self._shared = result.outputs
        return result.outputs

    def release_outputs(self) -> None:
        """Release the outputs returned by :meth:`share_outputs`."""
        self._check_api(PipelineAPIType.SCHEDULED)
        self._shared = None

    def outputs(self) -> tuple[TensorListCPU, ...]:
        """Release the previous outputs and return the next ones."""
        self._check_api(PipelineAPIType.SCHEDULED)
        self._shared = None
        return self._share()

    def run(self, **inputs: Any) -> tuple[TensorListCPU, ...]:
        """Run one iteration and return its outputs (schedule + outputs).

        Keyword arguments feed named external sources first (only with a queue depth of 1 or a
        non-pipelined executor).
        """
        self._check_api(PipelineAPIType.BASIC)
        self.build()
        if inputs:
            if self._exec_pipelined and max(self._cpu_size, self._gpu_size) > 1:
                raise RuntimeError(
                    "run() with named inputs needs prefetch_queue_depth=1 or "
                    "exec_pipelined=False; use feed_input() ahead of time instead"
                )
            for name, data in inputs.items():
                self.feed_input(name, data)
        self._schedule()
        self._shared = None
        return self._share()

    def empty(self) -> bool:
        """True when no scheduled iteration is waiting to be consumed."""
        return self._queue.empty()

    def reset(self) -> None:
        """Start a new epoch after the input data ended or an error (no-op otherwise; readers do
        not rewind)."""
        if not self._queue.new_epoch():
            return
        self._epoch_idx += 1
        self._iteration_in_epoch = 0
        for kernel in self._all_kernels():
            reset_epoch = getattr(kernel, "reset_epoch", None)
            if reset_epoch is not None:
                reset_epoch(self._epoch_idx)

    def feed_input(
        self, data_node: str | DataNode, data: Any, layout: str | None = None, **kwargs: Any
    ) -> None:
        """Queue one batch for the external source named ``data_node`` (FIFO).

        Raises:
            KeyError: no external source of that name in the built pipeline (as in DALI).
            RuntimeError: the operator of that name is not an external source.
        """
        self.build()
        if isinstance(data_node, DataNode):
            name = require_source(data_node, "feed_input").source.name
        else:
            name = data_node
        for op in self._built_ops:
            if op.name == name:
                kernel = self._executor.kernel_of(op)  # type: ignore[union-attr]
                feed = getattr(kernel, "feed", None)
                if feed is None:
                    raise RuntimeError(f"operator {name!r} is not an external source")
                if isinstance(data_node, DataNode):
                    kwargs["output_index"] = data_node.index
                feed(data, layout, **kwargs)
                return
        raise KeyError(
            f'Could not find an input operator with name "{name}": no external source of that '
            "name in the built pipeline (pruned, as nothing reads it, or never defined)"
        )
