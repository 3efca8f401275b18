"""The Pipeline: define a graph of operators, build it, and run it (DALI's ``Pipeline`` API)."""

from __future__ import annotations

import contextlib
import json
import threading
import warnings
from collections import deque
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from feedline.core import serialize as _serialize
from feedline.core.errors import PipelineError
from feedline.core.executor import EndOfData, Executor, IterationResult
from feedline.core.graph import DataNode, OpNode, auto_name, constant_node, ordered_ops, prune
from feedline.core.kernel import Kernel, KernelContext
from feedline.core.pipeline_def import pipeline_def
from feedline.core.pipeline_properties import PipelineProperties
from feedline.core.registry import load_object
from feedline.core.schema import OpSchema
from feedline.core.tensor import TensorListCPU
from feedline.core.types import PipelineAPIType

__all__ = ["Pipeline", "pipeline_def"]

_local = threading.local()


def _check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"Pipeline: {name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"Pipeline: {name} must be at least 1, got {value}")
    return int(value)


class Pipeline(PipelineProperties):
    """A graph of operators and the machinery to run it.

    Args:
        batch_size: maximum number of samples per iteration.
        num_threads: CPU worker threads for per-sample work (``None`` → TypeError at build;
            values < 1 → ValueError, as in DALI where they are only valid for serialization).
        device_id: CUDA device, or ``None`` for a CPU-only pipeline.
        seed: pipeline seed; ``None`` picks a random one (``Pipeline.seed`` stays ``None``).
        exec_pipelined: overlap iterations (prefetching).
        prefetch_queue_depth: iterations computed ahead, or ``{"cpu_size": c, "gpu_size": g}``
            for separate CPU/GPU queues (needs ``exec_async``).
        exec_async: compute on a background thread.
        bytes_per_sample: memory hint per sample (kept for DALI compatibility; buffers are
            allocated per iteration, so it changes no result).
        set_affinity: pin the worker threads to CPU cores (one core each, round robin).
        max_streams: CUDA streams limit (GPU pipelines only).
        default_cuda_stream_priority: CUDA stream priority (GPU pipelines only).
        enable_memory_stats: record output memory sizes in :meth:`executor_statistics`.
        py_num_workers: worker processes for ``external_source(parallel=True)``.
        py_start_method: ``"fork"`` or ``"spawn"`` for those workers.
        py_callback_pickler: custom pickler for ``spawn`` callbacks.
        output_dtype, output_ndim, output_layout: expected output properties, checked each
            iteration (one value for all outputs or a list with ``None`` wildcards).
        enable_checkpointing: allow :meth:`checkpoint`.
        checkpoint: a checkpoint (from :meth:`checkpoint`) to resume from at build.
        exec_dynamic: accepted for DALI compatibility (the executor is always dynamic here).
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
        max_streams: int = -1,
        default_cuda_stream_priority: int = 0,
        *,
        enable_memory_stats: bool = False,
        enable_checkpointing: bool = False,
        checkpoint: str | Mapping[str, Any] | None = None,
        py_num_workers: int = 1,
        py_start_method: str = "fork",
        py_callback_pickler: Any = None,
        output_dtype: Any = None,
        output_ndim: Any = None,
        output_layout: Any = None,
        exec_dynamic: bool | None = None,
    ) -> None:
        if batch_size is not None:
            batch_size = _check_positive_int("batch_size", batch_size)
        if device_id is not None and (not isinstance(device_id, int) or device_id < 0):
            raise ValueError(f"Pipeline: device_id must be None or an int >= 0, got {device_id!r}")
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
                raise TypeError(f"Pipeline: seed must be an int or None, got {type(seed).__name__}")
            if seed < 0:
                warnings.warn(
                    "a negative pipeline seed is deprecated and means 'no seed'",
                    DeprecationWarning,
                    stacklevel=2,
                )
                seed = None
        if isinstance(prefetch_queue_depth, Mapping):
            unknown = set(prefetch_queue_depth) - {"cpu_size", "gpu_size"}
            if unknown or len(prefetch_queue_depth) != 2:
                raise ValueError(
                    "Pipeline: prefetch_queue_depth as a dict needs exactly the keys "
                    f"'cpu_size' and 'gpu_size', got {sorted(prefetch_queue_depth)}"
                )
            if not exec_async:
                raise ValueError("Pipeline: separate CPU/GPU queues need exec_async=True")
            cpu_size = _check_positive_int(
                "prefetch_queue_depth['cpu_size']", prefetch_queue_depth["cpu_size"]
            )
            gpu_size = _check_positive_int(
                "prefetch_queue_depth['gpu_size']", prefetch_queue_depth["gpu_size"]
            )
            self._separated = True
        else:
            cpu_size = gpu_size = _check_positive_int("prefetch_queue_depth", prefetch_queue_depth)
            self._separated = False
        if py_start_method not in ("fork", "spawn"):
            raise ValueError(
                f"Pipeline: py_start_method must be 'fork' or 'spawn', got {py_start_method!r}"
            )
        if not isinstance(py_num_workers, int) or py_num_workers < 0:
            raise ValueError(
                f"Pipeline: py_num_workers must be an int >= 0, got {py_num_workers!r}"
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
        self._default_cuda_stream_priority = default_cuda_stream_priority
        self._enable_memory_stats = bool(enable_memory_stats)
        self._enable_checkpointing = bool(enable_checkpointing) or checkpoint is not None
        self._restore_from = _serialize.parse_checkpoint(checkpoint) if checkpoint else None
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
        self._ops: list[OpNode] = []
        self._names: set[str] = set()
        self._name_counters: dict[str, int] = {}
        self._outputs: list[DataNode] | None = None
        self._sinks: list[OpNode] = []
        self._built = False
        self._executor: Executor | None = None
        self._built_ops: list[OpNode] = []
        self._seeds: dict[str, int] = {}
        self._runner: ThreadPoolExecutor | None = None
        self._pending: deque[Future[IterationResult]] = deque()
        self._api_type: PipelineAPIType | None = None
        self._first_in_epoch = True
        self._end_reached = False
        self._stop_flag = False
        self._failure: BaseException | None = None
        self._iteration = 0
        self._requested = 0
        self._epoch_idx = 0
        self._consumed = 0
        self._restored_iteration = 0
        self._reader_states: dict[str, Any] = {}
        self._shared: tuple[TensorListCPU, ...] | None = None
        self._lock = threading.Lock()
        self.py_pool: Any = None

    # -- definition -------------------------------------------------------------------------

    @staticmethod
    def current() -> Pipeline | None:
        """The pipeline being defined on this thread, if any."""
        stack = getattr(_local, "stack", None)
        return stack[-1] if stack else None

    @staticmethod
    def push_current(pipeline: Pipeline) -> None:
        """Make ``pipeline`` the current one on this thread."""
        if not hasattr(_local, "stack"):
            _local.stack = []
        _local.stack.append(pipeline)

    @staticmethod
    def pop_current() -> Pipeline | None:
        """Undo the last :meth:`push_current`."""
        stack = getattr(_local, "stack", None)
        return stack.pop() if stack else None

    def __enter__(self) -> Pipeline:
        Pipeline.push_current(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        Pipeline.pop_current()

    def _add_op(
        self,
        schema: OpSchema,
        device: str,
        inputs: list[DataNode],
        arg_inputs: dict[str, DataNode],
        args: dict[str, Any],
        seed: int | None,
        preserve: bool,
        name: str | None,
    ) -> OpNode:
        if self._built:
            raise RuntimeError("cannot add operators to a pipeline that is already built")
        for node in [*inputs, *arg_inputs.values()]:
            if not any(node.source is op for op in self._ops):
                raise ValueError(
                    f"{schema.name}: input {node.name!r} was defined in another pipeline"
                )
        if name is None:
            name = auto_name(schema.name, self._name_counters)
            while name in self._names:
                name = auto_name(schema.name, self._name_counters)
        elif name in self._names:
            raise ValueError(f"operator name {name!r} is already used in this pipeline")
        self._names.add(name)
        op = OpNode(schema, name, device, inputs, arg_inputs, args, seed, preserve, len(self._ops))
        self._ops.append(op)
        return op

    def set_outputs(self, *outputs: Any) -> None:
        """Set the pipeline outputs (DataNodes, or constants that become constant nodes)."""
        nodes: list[DataNode] = []
        with self:
            for index, value in enumerate(outputs):
                if isinstance(value, DataNode):
                    nodes.append(value)
                elif isinstance(value, list | tuple) and any(
                    isinstance(v, DataNode) for v in value
                ):
                    raise TypeError(
                        f"output {index} is a nested list of DataNodes; return a tuple for "
                        "several outputs"
                    )
                else:
                    nodes.append(constant_node(value))
        self._outputs = nodes

    def define_graph(self) -> Any:
        """Override in a subclass to define the graph (return the outputs)."""
        raise NotImplementedError(
            "define the pipeline with @pipeline_def, set_outputs() or by overriding define_graph()"
        )

    # -- build ------------------------------------------------------------------------------

    def _ensure_defined(self) -> None:
        if self._outputs is not None:
            return
        with self:
            result = self.define_graph()
        outputs = result if isinstance(result, tuple) else (() if result is None else (result,))
        self.set_outputs(*outputs)

    def build(self) -> None:
        """Build the pipeline (idempotent): prune, check devices, create and set up kernels."""
        if self._built:
            return
        if self._batch_size is None:
            raise TypeError("Pipeline: batch_size was not given")
        if self._num_threads is None:
            raise TypeError("Pipeline: num_threads was not given")
        if isinstance(self._num_threads, bool) or not isinstance(self._num_threads, int):
            raise TypeError(f"Pipeline: num_threads must be an int, got {self._num_threads!r}")
        if self._num_threads < 1:
            raise ValueError(
                "Pipeline: num_threads < 1 is only allowed for pipelines built for serialization"
            )
        self._ensure_defined()
        outputs = self._outputs or []
        if not outputs and not any(op.preserve or op.schema.no_prune for op in self._ops):
            raise PipelineError("the pipeline has no outputs and no preserved operator")
        from feedline.core.plugins import get_registry

        registry = get_registry()
        ops = prune(self._ops, outputs)
        for _name, (ref, _owner) in registry.graph_passes.items():
            ops = list(load_object(ref)(ops, outputs))
        ops = ordered_ops(ops)
        for op in ops:
            if op.device in ("gpu", "mixed") and self._device_id is None:
                raise PipelineError(
                    f"operator {op.name!r} ({op.schema.name}) runs on {op.device}, but the "
                    "pipeline is CPU-only (device_id=None); pass device_id or use device='cpu'"
                )
        self._seeds = {op.name: self._op_seed(op) for op in ops}
        kernels: list[Kernel] = []
        try:
            for op in ops:
                entry = registry.operators.get(op.schema.name)
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
                    pipeline=self,
                    num_outputs=len(op.outputs),
                    num_inputs=len(op.inputs),
                )
                try:
                    kernel = entry.kernel_class(op.device)(context)
                    kernel.setup()
                except Exception as exc:
                    if hasattr(exc, "add_note"):
                        exc.add_note(f"while building operator {op.name!r} ({op.schema.name})")
                    raise
                kernels.append(kernel)
        except BaseException:
            for kernel in kernels:
                kernel.close()
            raise
        if self.py_pool is not None:
            self.py_pool.start()
        self._built_ops = ops
        self._executor = Executor(
            ops,
            kernels,
            outputs,
            self._batch_size,
            self._num_threads,
            self._seeds,
            self._enable_memory_stats,
            self._set_affinity,
            requested=self._is_requested,
        )
        if self._exec_async and self._exec_pipelined:
            self._runner = ThreadPoolExecutor(1, thread_name_prefix="feedline-pipeline")
        self._built = True
        if self._restore_from is not None:
            self._apply_checkpoint(self._restore_from)

    def _op_seed(self, op: OpNode) -> int:
        if op.seed is not None:
            return int(op.seed)
        state = np.random.SeedSequence([self._effective_seed, op.position]).generate_state(1)
        return int(state[0])

    def _readers(self) -> dict[str, Kernel]:
        self.build()
        assert self._executor is not None
        return {
            op.name: self._executor.kernel_of(op)
            for op in self._built_ops
            if self._executor.kernel_of(op).is_reader
        }

    # -- running ----------------------------------------------------------------------------

    def _check_api(self, api: PipelineAPIType) -> None:
        if self._api_type is None:
            self._api_type = api
        elif self._api_type is not api:
            raise RuntimeError(
                f"Mixing pipeline API type. Currently used: {self._api_type.name}, "
                f"but trying to use {api.name}"
            )

    def _depth(self) -> int:
        return max(self._cpu_size, self._gpu_size) if self._exec_pipelined else 1

    def _compute(self) -> IterationResult:
        if self._stop_flag:
            raise EndOfData("stopped")
        assert self._executor is not None
        iteration = self._iteration
        self._iteration += 1
        try:
            result = self._executor.run_iteration(iteration)
            self._validate_outputs(result.outputs)
        except BaseException:
            self._stop_flag = True
            self._executor.discard_overlapped()
            raise
        return result

    def _is_requested(self, iteration: int) -> bool:
        """Whether ``iteration`` is scheduled, so the executor may start it early."""
        return iteration < self._requested and not self._stop_flag

    def _submit(self, count: int) -> None:
        self._requested += count
        for _ in range(count):
            if self._runner is not None:
                self._pending.append(self._runner.submit(self._compute))
                continue
            future: Future[IterationResult] = Future()
            try:
                future.set_result(self._compute())
            except BaseException as exc:
                future.set_exception(exc)
            self._pending.append(future)

    def schedule_run(self) -> None:
        """Schedule iterations: ``prefetch_queue_depth`` at the start of an epoch, else one."""
        self._check_api(PipelineAPIType.SCHEDULED)
        self._schedule()

    def _schedule(self) -> None:
        self.build()
        self._raise_if_failed()
        if self._end_reached or self._stop_flag:
            return
        count = self._depth() if self._first_in_epoch else 1
        self._first_in_epoch = False
        self._submit(count)

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise PipelineError(
                f"the pipeline stopped after an earlier error: {self._failure}"
            ) from self._failure

    def share_outputs(self) -> tuple[TensorListCPU, ...]:
        """Wait for the oldest scheduled iteration and return its outputs.

        Raises:
            StopIteration: nothing is scheduled, or the input data ended (until :meth:`reset`).
        """
        self._check_api(PipelineAPIType.SCHEDULED)
        return self._share()

    def _share(self) -> tuple[TensorListCPU, ...]:
        self.build()
        self._raise_if_failed()
        if not self._pending:
            raise StopIteration
        future = self._pending.popleft()
        try:
            result = future.result()
        except EndOfData:
            self._drain()
            self._end_reached = True
            raise StopIteration from None
        except BaseException as exc:
            self._drain()
            self._failure = exc
            raise
        self._consumed += 1
        self._reader_states.update(result.reader_states)
        self._shared = result.outputs
        return result.outputs

    def _drain(self) -> None:
        self._stop_flag = True
        while self._pending:
            future = self._pending.popleft()
            with contextlib.suppress(BaseException):
                future.result()
        if self._executor is not None:
            self._executor.discard_overlapped()
        self._requested = self._iteration

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
            if self._depth() > 1:
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
        return not self._pending

    def reset(self) -> None:
        """Start a new epoch after the input data ended (no-op otherwise; readers do not rewind)."""
        if not self._end_reached:
            return
        self._end_reached = False
        self._stop_flag = False
        self._first_in_epoch = True
        self._epoch_idx += 1
        for kernel in self._all_kernels():
            reset_epoch = getattr(kernel, "reset_epoch", None)
            if reset_epoch is not None:
                reset_epoch(self._epoch_idx)

    def _all_kernels(self) -> list[Kernel]:
        if self._executor is None:
            return []
        return [self._executor.kernel_of(op) for op in self._built_ops]

    def feed_input(
        self, data_node: str | DataNode, data: Any, layout: str | None = None, **kwargs: Any
    ) -> None:
        """Queue one batch for the external source named ``data_node`` (FIFO)."""
        self.build()
        name = data_node.source.name if isinstance(data_node, DataNode) else data_node
        for op in self._built_ops:
            if op.name == name:
                kernel = self._executor.kernel_of(op)  # type: ignore[union-attr]
                feed = getattr(kernel, "feed", None)
                if feed is None:
                    raise RuntimeError(f"operator {name!r} is not an external source")
                feed(data, layout, **kwargs)
                return
        raise RuntimeError(f"no external source named {name!r} in the built pipeline")

    # -- queries ----------------------------------------------------------------------------

    def reader_meta(self, name: str | None = None) -> dict[str, Any]:
        """Reader metadata (docs/readers.md): of reader ``name``, or ``{name: meta}`` for all."""
        readers = self._readers()
        if name is None:
            return {n: k.reader_meta() for n, k in readers.items()}  # type: ignore[attr-defined]
        if name not in readers:
            raise RuntimeError(
                f"no reader named {name!r} in the pipeline "
                f"(readers: {', '.join(readers) or 'none'})"
            )
        return readers[name].reader_meta()  # type: ignore[attr-defined]

    def epoch_size(self, name: str | None = None) -> int | dict[str, int]:
        """``epoch_size_padded`` of reader ``name``, or ``{name: size}`` for all readers."""
        if name is not None:
            return int(self.reader_meta(name)["epoch_size_padded"])
        return {n: int(m["epoch_size_padded"]) for n, m in self.reader_meta().items()}

    def executor_statistics(self) -> dict[str, dict[str, Any]]:
        """Per operator: stage, run count, time spent and (with memory stats) output bytes."""
        if self._executor is None:
            return {}
        return {name: stats.as_dict() for name, stats in self._executor.stats.items()}

    # -- checkpoints and serialization ------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Where the consumer stands: iterations consumed, epoch and every reader's position."""
        self.build()
        return {
            "version": 1,
            "iteration": self._restored_iteration + self._consumed,
            "epoch_idx": self._epoch_idx,
            "readers": dict(self._reader_states),
        }

    def checkpoint(self, filename: str | None = None) -> str:
        """The :meth:`state_dict` as JSON (also written to ``filename`` if given)."""
        if not self._enable_checkpointing:
            raise RuntimeError("checkpointing is disabled; pass enable_checkpointing=True")
        text = json.dumps(self.state_dict())
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as handle:
                handle.write(text)
        return text

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resume from :meth:`state_dict` (before the first iteration)."""
        if self._built and (self._pending or self._consumed):
            raise RuntimeError("a checkpoint can only be restored before the first iteration")
        if self._built:
            self._apply_checkpoint(dict(state))
        else:
            self._restore_from = dict(state)
            self._enable_checkpointing = True

    def _apply_checkpoint(self, state: Mapping[str, Any]) -> None:
        readers = self._readers()
        for name, reader_state in state.get("readers", {}).items():
            if name not in readers:
                raise RuntimeError(f"checkpoint names reader {name!r}, absent from this pipeline")
            readers[name].load_state_dict(reader_state)  # type: ignore[attr-defined]
        self._iteration = self._requested = int(state.get("iteration", 0))
        self._restored_iteration = self._iteration
        self._epoch_idx = int(state.get("epoch_idx", 0))
        self._reader_states = dict(state.get("readers", {}))

    def serialize(self, filename: str | None = None) -> str:
        """The graph and parameters as a JSON document (callbacks omitted)."""
        self._ensure_defined()
        text = _serialize.dump_pipeline(self, prune(self._ops, self._outputs or []))
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as handle:
                handle.write(text)
        return text

    @classmethod
    def deserialize(
        cls,
        serialized_pipeline: str | bytes | None = None,
        filename: str | None = None,
        **kwargs: Any,
    ) -> Pipeline:
        """Rebuild a pipeline from :meth:`serialize` output; ``kwargs`` override parameters.

        The returned pipeline is built. External sources have no callback: feed them.
        """
        return _serialize.load_pipeline(cls, serialized_pipeline, filename, kwargs)

    def save_graph_to_dot_file(
        self,
        filename: str,
        show_tensors: bool = False,
        show_ids: bool = False,
        use_colors: bool = False,
    ) -> None:
        """Write the built graph as Graphviz dot text."""
        self.build()
        text = _serialize.to_dot(
            self._built_ops, self._outputs or [], show_tensors, show_ids, use_colors
        )
        with open(filename, "w", encoding="utf-8") as handle:
            handle.write(text)

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stop background threads and worker processes; idempotent."""
        self._stop_flag = True
        if self._runner is not None:
            self._runner.shutdown(wait=True, cancel_futures=True)
            self._runner = None
        self._pending.clear()
        if self._executor is not None:
            self._executor.close()
            self._executor = None
        if self.py_pool is not None:
            self.py_pool.close()
            self.py_pool = None
        self._built = False

    def __del__(self) -> None:
        try:
            if self._runner is not None:
                self._runner.shutdown(wait=False, cancel_futures=True)
        except Exception:
            pass
