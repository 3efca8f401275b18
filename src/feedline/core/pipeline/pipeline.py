"""The Pipeline: define a graph of operators, build it, and run it (DALI's ``Pipeline`` API).

The pipeline ties the layers below together: it owns the :class:`~feedline.core.graph.Graph`
that its definition fills, builds it (graph passes, one kernel per operator from the registry,
an :class:`~feedline.core.execution.executor.Executor`) and drives it through an
:class:`~feedline.core.execution.prefetch.IterationQueue`. Its constructor parameters and their
properties are in :mod:`~feedline.core.pipeline.properties`, the run calls (``run``, the
scheduled API, ``reset``, ``feed_input``) in :mod:`~feedline.core.pipeline.running`, checkpoints
in :mod:`~feedline.core.pipeline.checkpoints` and JSON serialization in
:mod:`~feedline.core.pipeline.serialize`.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from feedline.core.errors import PipelineError
from feedline.core.execution.errors_policy import ErrorLog, check_policy, error_policies
from feedline.core.execution.executor import Executor, IterationResult
from feedline.core.execution.prefetch import IterationQueue
from feedline.core.execution.stages import StagedExecutor
from feedline.core.graph import (
    DataNode,
    Graph,
    OpNode,
    check_placement,
    prepare,
    used_outputs,
)
from feedline.core.kernel import Kernel, KernelContext
from feedline.core.pipeline.checkpoints import ReaderState, parse_checkpoint
from feedline.core.pipeline.definition import GraphDefinition
from feedline.core.pipeline.inputs import ScheduledInputs
from feedline.core.pipeline.properties import (
    OperatorConcurrency,
    PipelineProperties,
    StreamPolicy,
    check_dali_only,
    check_device_id,
    check_output_specs,
    check_positive_int,
    check_py_workers,
    check_queue_depth,
    check_seed,
)
from feedline.core.pipeline.references import iteration_runner, weak_method
from feedline.core.pipeline.running import RunAPI
from feedline.core.pipeline.staging import (
    ExecutorSettings,
    StagePlan,
    make_executor,
    plan_stages,
)
from feedline.core.plugins import get_registry
from feedline.core.tensor import TensorListCPU
from feedline.core.types import PipelineAPIType

__all__ = ["Pipeline"]


class Pipeline(GraphDefinition, PipelineProperties, ReaderState, RunAPI):
    """A graph of operators and the machinery to run it.

    Args:
        batch_size: maximum number of samples per iteration; ``-1`` (DALI's documented default)
            only for :meth:`deserialize_and_build`, which takes the stored value.
        num_threads: CPU worker threads for per-sample work (``None`` → TypeError at build;
            values < 1 → ValueError at build, as in DALI where they are only valid for
            serialization; ``-1`` takes the stored value when deserializing).
        device_id: CUDA device, ``None`` for a CPU-only pipeline, or ``-1`` for the current
            CUDA device (the stored one when deserializing), as in DALI.
        seed: pipeline seed; ``None`` picks a random one (``Pipeline.seed`` stays ``None``).
        exec_pipelined: overlap iterations (prefetching).
        prefetch_queue_depth: iterations computed ahead, or ``{"cpu_size": c, "gpu_size": g}``
            for separate CPU/GPU queues (needs ``exec_async``).
        exec_async: compute on a background thread.
        bytes_per_sample: memory hint per sample (kept for DALI compatibility; buffers are
            allocated per iteration, so it changes no result).
        set_affinity: pin the worker threads to CPU cores (one core each, round robin).
        max_streams: deprecated in DALI, where it has no effect; here neither (a GPU pipeline
            uses one stream). Giving it warns, as in DALI.
        default_cuda_stream_priority: the priority of the pipeline's CUDA stream (lower is more
            urgent; GPU pipelines only; None: 0). DALI deprecated it; feedline still applies it.
        enable_memory_stats: record output memory sizes in :meth:`executor_statistics`.
        py_num_workers: worker processes for ``external_source(parallel=True)`` (None or 0:
            none; a parallel source then fails at build, as in DALI).
        py_start_method: ``"fork"`` or ``"spawn"`` for those workers.
        py_callback_pickler: pickler for ``spawn`` callbacks (default ``cloudpickle``: local
            functions and lambdas travel by value).
        output_dtype, output_ndim, output_layout: expected output properties, checked each
            iteration (one value for all outputs or a list with ``None`` wildcards).
        enable_checkpointing: allow :meth:`checkpoint`.
        checkpoint: a checkpoint (from :meth:`checkpoint`: the text, or the UTF-8 bytes of a
            checkpoint file read in binary mode) to resume from at build.
        exec_dynamic: accepted for DALI compatibility (the executor is always dynamic here).
        experimental_exec_dynamic: DALI's deprecated name of ``exec_dynamic`` (warns).
        stream_policy: DALI's :class:`StreamPolicy` for its CUDA executor; accepted and
            reported by the property of that name, with no effect (one stream here).
        concurrency: DALI's :class:`OperatorConcurrency`; accepted and reported, with no effect
            (the CPU and device stages of different iterations always overlap).
        on_error: ``"raise"`` (a failing sample fails the iteration) or ``"skip"`` (it is
            replaced by the next sample of its reader, logged and listed in
            ``executor_statistics()["errors"]``); operators may override it with their own
            ``on_error`` argument. See ``docs/errors.md``.
        max_errors: with ``skip``, how many samples may be skipped before the pipeline raises a
            ``PipelineError`` listing them all; ``None`` (the default): no limit.
        max_decoded_bytes: the largest decoded image, in bytes, that the image decoders of this
            pipeline accept when they do not set their own ``max_decoded_bytes``; ``None`` (the
            default): 256 MiB. See ``docs/errors.md``.
    """

    def __init__(
        self,
        batch_size: int | None = None,
        num_threads: int | None = None,
        device_id: int | None = None,
        seed: int | None = None,
        exec_pipelined: bool = True,
        prefetch_queue_depth: int | Mapping[str, int] = 2,
        exec_async: bool = True,
        bytes_per_sample: int = 0,
        set_affinity: bool = False,
        max_streams: int | None = None,
        default_cuda_stream_priority: int | None = None,
        *,
        enable_memory_stats: bool = False,
        enable_checkpointing: bool = False,
        checkpoint: str | bytes | Mapping[str, Any] | None = None,
        py_num_workers: int | None = 1,
        py_start_method: str = "fork",
        py_callback_pickler: Any = None,
        output_dtype: Any = None,
        output_ndim: Any = None,
        output_layout: Any = None,
        exec_dynamic: bool | None = None,
        experimental_exec_dynamic: bool | None = None,
        stream_policy: StreamPolicy | None = None,
        concurrency: OperatorConcurrency | None = None,
        on_error: str = "raise",
        max_errors: int | None = None,
        max_decoded_bytes: int | None = None,
    ) -> None:
        if batch_size is not None and batch_size != -1:
            batch_size = check_positive_int("batch_size", batch_size)
        check_device_id(device_id)
        seed = check_seed(seed)
        cpu_size, gpu_size, self._separated = check_queue_depth(prefetch_queue_depth, exec_async)
        check_py_workers(py_num_workers, py_start_method, py_callback_pickler)
        check_output_specs(output_dtype, output_ndim, output_layout)
        check_dali_only(stream_policy, concurrency, max_streams, experimental_exec_dynamic)
        if experimental_exec_dynamic is not None:
            exec_dynamic = experimental_exec_dynamic
        self._on_error, self._max_errors = check_policy(on_error, max_errors)
        self._max_decoded_bytes = (
            None
            if max_decoded_bytes is None
            else check_positive_int("max_decoded_bytes", max_decoded_bytes)
        )
        self._batch_size = batch_size
        self._num_threads = num_threads
        self._device_id = device_id
        self._seed = None if seed is None else int(seed)
        self._exec_pipelined = bool(exec_pipelined)
        self._exec_async = bool(exec_async)
        self._cpu_size, self._gpu_size = cpu_size, gpu_size
        self._bytes_per_sample = bytes_per_sample
        self._set_affinity = bool(set_affinity)
        self._max_streams = max_streams
        self._default_cuda_stream_priority = default_cuda_stream_priority or 0
        self._stream_policy, self._concurrency = stream_policy, concurrency
        self._enable_memory_stats = bool(enable_memory_stats)
        self._enable_checkpointing = bool(enable_checkpointing) or checkpoint is not None
        self._restore_from = parse_checkpoint(checkpoint) if checkpoint else None
        self._py_num_workers = py_num_workers
        self._py_start_method = py_start_method
        self._py_callback_pickler = py_callback_pickler
        self._output_dtype = output_dtype
        self._output_ndim = output_ndim
        self._output_layout = output_layout
        self._exec_dynamic = exec_dynamic
        self._effective_seed = (
            self._seed
            if self._seed is not None
            else int(np.random.SeedSequence().generate_state(1)[0])
        )
        self._graph = Graph(owner=self)
        self._outputs: list[DataNode] | None = None
        self._outputs_error: TypeError | None = None
        self._built = False
        self._built_before_with: list[bool] = []
        self._executor: Executor | StagedExecutor | None = None
        self._built_ops: list[OpNode] = []
        self._seeds: dict[str, int] = {}
        self._queue = self._new_queue()
        self._api_type: PipelineAPIType | None = None
        self._epoch_idx = 0
        self._consumed = 0
        self._iteration_in_epoch = 0
        self._is_restored = False
        self._iterator_data = ""
        self._restored_iteration = 0
        self._reader_states: dict[str, Any] = {}
        self._shared: tuple[TensorListCPU, ...] | None = None
        self.py_pool: Any = None
        self._py_started = False
        self._sinks: list[DataNode] = []
        self._api_check = True
        self._inputs = ScheduledInputs([], weak_method(self.iter_setup))
        self._prepared: list[OpNode] | None = None
        self._used_outputs: dict[int, set[int]] = {}
        self._policies: dict[str, str] = {}
        self._stages: StagePlan | None = None
        self._kernels: dict[int, Kernel] = {}

    def _new_queue(self) -> IterationQueue:
        return IterationQueue(
            iteration_runner(self),
            weak_method(self._discard_overlapped),
            max(self._cpu_size, self._gpu_size) if self._exec_pipelined else 1,
            background=self._exec_async and self._exec_pipelined,
        )

    # -- build ------------------------------------------------------------------------------

    def _prepare_ops(self) -> list[OpNode]:
        """The pruned, rewritten operators to build (once: the definition is final now)."""
        if self._prepared is None:
            outputs = [*(self._outputs or []), *self._sinks]
            if not outputs and not any(op.preserve or op.schema.no_prune for op in self._graph.ops):
                raise PipelineError("the pipeline has no outputs and no preserved operator")
            registry = get_registry()
            ops = prepare(self._collect_graph(), outputs, registry)
            check_placement(ops, self._device_id)
            self._used_outputs = used_outputs(ops, outputs)
            self._seeds = {op.name: self._op_seed(op) for op in ops}
            self._policies = error_policies(ops, registry, self._on_error)
            self._prepared = ops
            self._graph.frozen = True
        return self._prepared

    def start_py_workers(self) -> None:
        """Start the worker processes of ``external_source(parallel=True)`` now.

        As in DALI, call it before anything creates a CUDA context when the workers are
        forked (``py_start_method="fork"``), e.g. on every pipeline before building any. It
        defines the graph and sets up the CPU operators; :meth:`build` sets up the rest (and
        calls this itself otherwise). ``build(define_graph=...)`` is refused afterwards.
        """
        if self._built:
            return
        self._check_build_params()
        self._ensure_defined()
        self._create_kernels(self._prepare_ops(), devices=("cpu",))
        if self.py_pool is not None and not self._py_started:
            self.py_pool.start()
            self._py_started = True

    def build(self, define_graph: Callable[[], Any] | None = None) -> None:
        """Build the pipeline (idempotent): prune, check devices, create and set up kernels.

        Args:
            define_graph: a function defining the graph, used instead of the
                :meth:`define_graph` method (refused when the outputs were set otherwise).
        """
        if self._built:
            self._ensure_defined(define_graph)
            return
        self._check_build_params()
        self._ensure_defined(define_graph)
        self.start_py_workers()
        ops = self._prepare_ops()
        self._stages = plan_stages(ops, self._device_id, self._default_cuda_stream_priority)
        kernels = self._create_kernels(ops, devices=("cpu", "mixed", "gpu"))
        self._built_ops = ops
        self._executor = make_executor(
            ops,
            kernels,
            self._outputs or [],
            self._stages,
            ExecutorSettings(
                self._batch_size,
                self._num_threads,
                self._seeds,
                self._enable_memory_stats,
                self._set_affinity,
                self._queue.is_requested,
                self._cpu_size,
                self._gpu_size,
                background=self._exec_async and self._exec_pipelined,
            ),
            policies=self._policies,
            errors=ErrorLog(self._max_errors) if "skip" in self._policies.values() else None,
        )
        sources = [(op.name, k) for op, k in zip(ops, kernels, strict=True) if k.fetches_input]
        self._inputs = ScheduledInputs(sources, weak_method(self.iter_setup))
        self._built = self._graph.frozen = True
        if self._restore_from is not None:
            self._apply_checkpoint(self._restore_from)
        self._initial_reader_states()

    def _create_kernels(self, ops: list[OpNode], devices: tuple[str, ...]) -> list[Kernel]:
        """Create and set up the kernels of ``ops`` on ``devices`` not created yet; all of
        ``ops``' kernels created so far, in order. On failure every kernel is closed."""
        registry = get_registry()
        try:
            for op in ops:
                if op.device not in devices or id(op) in self._kernels:
                    continue
                entry = registry.entry(op.schema.name)
                if entry is None:
                    raise PipelineError(f"operator {op.schema.name!r} has no registered kernel")
                context = KernelContext(
                    name=op.name,
                    schema=op.schema,
                    args=op.args,
                    tensor_args=frozenset(op.arg_inputs),
                    device=op.device,
                    batch_size=self._batch_size,
                    num_threads=self._num_threads,
                    seed=self._seeds[op.name],
                    device_id=self._device_id,
                    pipeline=weakref.proxy(self),
                    num_outputs=len(op.outputs),
                    used_outputs=frozenset(self._used_outputs.get(id(op), ())),
                    num_inputs=len(op.inputs),
                    on_error=self._policies[op.name],
                    stream=None if self._stages is None else self._stages.stream_of(op),
                )
                try:
                    kernel = entry.kernel_class(op.device)(context)
                    kernel.setup()
                except Exception as exc:
                    if hasattr(exc, "add_note"):
                        exc.add_note(f"while building operator {op.name!r} ({op.schema.name})")
                    raise
                self._kernels[id(op)] = kernel
        except BaseException:
            self._close_kernels()
            raise
        return [self._kernels[id(op)] for op in ops if id(op) in self._kernels]

    def _close_kernels(self) -> None:
        for kernel in self._kernels.values():
            kernel.close()
        self._kernels = {}
        if self._stages is not None and self._stages.stream is not None:
            self._stages.stream.close()
        self._stages = None
        if self.py_pool is not None:
            self.py_pool.close()
            self.py_pool = None
            self._py_started = False

    def _op_seed(self, op: OpNode) -> int:
        if op.seed is not None:
            return int(op.seed)
        state = np.random.SeedSequence([self._effective_seed, op.position]).generate_state(1)
        return int(state[0])

    # -- running ----------------------------------------------------------------------------

    def _collect(self, result: IterationResult) -> IterationResult:
        """The complete outputs of an iteration whose device stage was still under way."""
        executor = self._executor
        assert isinstance(executor, StagedExecutor)
        try:
            result = executor.collect(result)
            self._validate_outputs(result.outputs)
        except BaseException as exc:
            executor.runner.close(wait=False)
            self._queue.fail(exc)
            raise
        return result

    def _discard_overlapped(self) -> None:
        if self._executor is not None:
            self._executor.discard_overlapped()
        self._inputs.drop()

    def _all_kernels(self) -> list[Kernel]:
        if self._executor is None:
            return []
        return [self._executor.kernel_of(op) for op in self._built_ops]

    # -- queries ----------------------------------------------------------------------------

    def executor_statistics(self) -> dict[str, Any]:
        """Per operator: stage, run count, time spent and (with memory stats) output bytes;
        with ``on_error="skip"`` anywhere, also ``"errors"``: the skipped samples (dicts of
        operator, iteration, sample_index, source_info and error)."""
        return {} if self._executor is None else self._executor.statistics()

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stop background threads and worker processes; idempotent.

        Iterations and samples not started yet are dropped; only the work already running is
        waited for.
        """
        self._queue.stop()
        if self._executor is not None:
            self._executor.abort()
        self._queue.close()
        if self._executor is not None:
            self._executor.close()
            self._executor = None
        else:
            self._close_kernels()
        if self.py_pool is not None:
            self.py_pool.close()
            self.py_pool = None
        self._kernels, self._prepared, self._py_started, self._stages = {}, None, False, None
        self._built = self._graph.frozen = False
        self._queue = self._new_queue()  # a later build() starts clean, whatever failed before

    def __del__(self) -> None:
        # Dropped while an iteration runs in the background: stop it (kernels waiting for fed
        # input wake up) and wait for it, so that everything the pipeline owns (threads, worker
        # processes, files) is released now, on this thread.
        with contextlib.suppress(Exception):
            if self._executor is not None:
                self._executor.abort()
            self._queue.close(wait=True)
        with contextlib.suppress(Exception):
            if self.py_pool is not None:
                self.py_pool.close()
