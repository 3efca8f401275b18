"""The parameters of :class:`~feedline.core.pipeline.Pipeline`: checked at construction, read
back as DALI's read-only properties, and the declared output checks (dtype, ndim, layout)."""

from __future__ import annotations

import enum
import warnings
from collections.abc import Mapping, Sequence
from numbers import Integral
from typing import Any

import numpy as np

from feedline.core.errors import PipelineError
from feedline.core.tensor import TensorListCPU
from feedline.core.types import DataType

__all__ = [
    "OperatorConcurrency",
    "PipelineProperties",
    "StreamPolicy",
    "check_dali_only",
    "check_device_id",
    "check_output_specs",
    "check_positive_int",
    "check_py_workers",
    "check_queue_depth",
    "check_seed",
]


class StreamPolicy(enum.Enum):
    """DALI's CUDA stream policy (``Pipeline(stream_policy=...)``). A feedline GPU pipeline runs
    its device stage on one stream whatever the policy, so every value gives the same results."""

    SINGLE = "single"
    PER_BACKEND = "per_backend"
    PER_OPERATOR = "per_operator"
    UNSPECIFIED = "unspecified"


class OperatorConcurrency(enum.Enum):
    """DALI's operator concurrency policy (``Pipeline(concurrency=...)``). feedline runs the CPU
    stage and the device stage of different iterations in parallel and the operators of one stage
    one after another (their samples in parallel), whatever the value."""

    NONE = "none"
    BACKEND = "backend"
    FULL = "full"
    UNSPECIFIED = "unspecified"


def check_dali_only(
    stream_policy: Any, concurrency: Any, max_streams: Any, experimental_exec_dynamic: Any
) -> None:
    """Check the constructor arguments that only tune DALI's CUDA executor, and give DALI's
    warnings for its deprecated ones.

    Raises:
        TypeError: a policy that is not a member of its enum (or None).
    """
    for name, value, kind in (
        ("stream_policy", stream_policy, StreamPolicy),
        ("concurrency", concurrency, OperatorConcurrency),
    ):
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"Pipeline: {name} must be a {kind.__name__} or None, got {value!r}")
    if max_streams is not None:
        warnings.warn("The `max_streams` is deprecated and has no effect.", Warning, stacklevel=3)
    if experimental_exec_dynamic is not None:
        warnings.warn(
            "experimental_exec_dynamic is deprecated, please use exec_dynamic instead",
            Warning,
            stacklevel=3,
        )


def check_positive_int(name: str, value: Any) -> int:
    """``value`` as an int >= 1, or TypeError/ValueError naming parameter ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"Pipeline: {name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"Pipeline: {name} must be at least 1, got {value}")
    return int(value)


def check_device_id(device_id: Any) -> None:
    """Raise ValueError unless ``device_id`` is None or an int >= -1 (-1: the current device)."""
    if device_id is not None and (
        isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < -1
    ):
        raise ValueError(
            f"Pipeline: device_id must be None, -1 (the current CUDA device) or an int >= 0, "
            f"got {device_id!r}"
        )


def check_seed(seed: Any) -> int | None:
    """The pipeline seed as an int, or None (a negative seed is deprecated and means none)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"Pipeline: seed must be an int or None, got {type(seed).__name__}")
    if seed < 0:
        warnings.warn(
            "a negative pipeline seed is deprecated and means 'no seed'",
            DeprecationWarning,
            stacklevel=3,
        )
        return None
    return int(seed)


def check_queue_depth(depth: int | Mapping[str, int], exec_async: bool) -> tuple[int, int, bool]:
    """``(cpu_size, gpu_size, separated)`` of ``prefetch_queue_depth`` (an int or a dict)."""
    if not isinstance(depth, Mapping):
        size = check_positive_int("prefetch_queue_depth", depth)
        return size, size, False
    if set(depth) - {"cpu_size", "gpu_size"} or len(depth) != 2:
        raise ValueError(
            "Pipeline: prefetch_queue_depth as a dict needs exactly the keys "
            f"'cpu_size' and 'gpu_size', got {sorted(depth)}"
        )
    if not exec_async:
        raise ValueError("Pipeline: separate CPU/GPU queues need exec_async=True")
    cpu_size = check_positive_int("prefetch_queue_depth['cpu_size']", depth["cpu_size"])
    gpu_size = check_positive_int("prefetch_queue_depth['gpu_size']", depth["gpu_size"])
    return cpu_size, gpu_size, True


def check_py_workers(py_num_workers: Any, py_start_method: Any, pickler: Any = None) -> None:
    """Raise ValueError for a bad ``py_num_workers`` or ``py_start_method``, or a
    ``py_callback_pickler`` with the ``fork`` start method (DALI's rule: forked workers get the
    callbacks without pickling)."""
    if py_start_method not in ("fork", "spawn"):
        raise ValueError(
            f"Pipeline: py_start_method must be 'fork' or 'spawn', got {py_start_method!r}"
        )
    if py_num_workers is not None and (not isinstance(py_num_workers, int) or py_num_workers < 0):
        raise ValueError(
            f"Pipeline: py_num_workers must be None or an int >= 0, got {py_num_workers!r}"
        )
    if pickler is not None and py_start_method == "fork":
        raise ValueError(
            "``py_callback_pickler`` should not be set when 'fork' start method is used."
        )


def check_output_specs(output_dtype: Any, output_ndim: Any, output_layout: Any) -> None:
    """DALI's checks of the declared output properties at construction (each one value, or a
    list/tuple with ``None`` wildcards).

    Raises:
        TypeError: a value of the wrong type.
        ValueError: ``types.NO_TYPE`` as a dtype, or a negative ndim.
    """
    for name, spec, kind, what in (
        ("output_dtype", output_dtype, DataType, "a types.DALIDataType"),
        ("output_ndim", output_ndim, int, "an int"),
        ("output_layout", output_layout, str, "a string"),
    ):
        for value in spec if isinstance(spec, list | tuple) else [spec]:
            if value is None:
                continue
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise TypeError(
                    f"`{name}` must be either: {what}, a list of these or None. "
                    f"Found type: {type(value)}."
                )
            if value is DataType.NO_TYPE:
                raise ValueError(f"`{name}` can't be a types.NO_TYPE. Found value: {value}")
            if kind is int and value < 0:
                raise ValueError(f"`{name}` must be non-negative. Found value: {value}.")


class PipelineProperties:
    """The DALI ``Pipeline`` properties; mixed into ``Pipeline``, which sets the attributes."""

    _batch_size: int | None
    _num_threads: int | None
    _device_id: int | None
    _seed: int | None
    _exec_pipelined: bool
    _exec_async: bool
    _exec_dynamic: bool | None
    _separated: bool
    _cpu_size: int
    _gpu_size: int
    _bytes_per_sample: int
    _set_affinity: bool
    _max_streams: int | None
    _default_cuda_stream_priority: int
    _stream_policy: StreamPolicy | None
    _concurrency: OperatorConcurrency | None
    _enable_memory_stats: bool
    _enable_checkpointing: bool
    _is_restored: bool
    _py_num_workers: int | None
    _py_start_method: str
    _py_callback_pickler: Any
    py_pool: Any
    _on_error: str
    _max_errors: int | None
    _max_decoded_bytes: int | None
    _output_dtype: Any
    _output_ndim: Any
    _output_layout: Any
    _outputs: Any
    _epoch_idx: int

    def _check_build_params(self) -> None:
        """Refuse to build without a usable batch size and thread count (``-1`` and ``None``
        are only for pipelines that are deserialized or serialized)."""
        if self._batch_size is None:
            raise TypeError("Pipeline: batch_size was not given")
        if self._batch_size == -1:
            raise ValueError(
                "Pipeline: batch_size=-1 is only valid for a deserialized pipeline (which takes "
                "the stored batch size, see deserialize_and_build()); pass batch_size >= 1"
            )
        if self._num_threads is None:
            raise TypeError("Pipeline: num_threads was not given")
        if isinstance(self._num_threads, bool) or not isinstance(self._num_threads, Integral):
            raise TypeError(f"Pipeline: num_threads must be an int, got {self._num_threads!r}")
        self._num_threads = int(self._num_threads)
        if self._num_threads < 1:
            raise ValueError(
                "Pipeline: num_threads < 1 is only allowed for pipelines built for serialization"
            )

    def _ensure_defined(self) -> None:
        """Run the graph definition if needed (implemented by ``Pipeline``)."""
        raise NotImplementedError

    @property
    def batch_size(self) -> int | None:
        """The maximum batch size."""
        return self._batch_size

    @property
    def max_batch_size(self) -> int | None:
        """The maximum batch size (same as ``batch_size``)."""
        return self._batch_size

    @property
    def num_threads(self) -> int | None:
        """Number of CPU worker threads."""
        return self._num_threads

    @property
    def device_id(self) -> int | None:
        """The CUDA device, or None for CPU only."""
        return self._device_id

    @property
    def seed(self) -> int | None:
        """The seed given at construction (None if none was)."""
        return self._seed

    @property
    def exec_pipelined(self) -> bool:
        """Whether iterations are prefetched."""
        return self._exec_pipelined

    @property
    def exec_async(self) -> bool:
        """Whether iterations run on a background thread."""
        return self._exec_async

    @property
    def exec_dynamic(self) -> bool:
        """Always True: operators of any device may interleave."""
        return self._exec_dynamic is not False

    @property
    def exec_separated(self) -> bool:
        """Whether separate CPU/GPU queue depths were requested."""
        return self._separated

    @property
    def prefetch_queue_depth(self) -> int | dict[str, int]:
        """The queue depth as given."""
        if self._separated:
            return {"cpu_size": self._cpu_size, "gpu_size": self._gpu_size}
        return self._cpu_size

    @property
    def cpu_queue_size(self) -> int:
        """CPU stage queue depth."""
        return self._cpu_size

    @property
    def gpu_queue_size(self) -> int:
        """GPU stage queue depth."""
        return self._gpu_size

    @property
    def bytes_per_sample(self) -> int:
        """The memory hint given at construction."""
        return self._bytes_per_sample

    @property
    def set_affinity(self) -> bool:
        """Whether worker threads are pinned to cores."""
        return self._set_affinity

    @property
    def max_streams(self) -> int | None:
        """CUDA streams limit (deprecated in DALI, no effect)."""
        return self._max_streams

    @property
    def stream_policy(self) -> StreamPolicy | None:
        """DALI's stream policy as given (no effect: a GPU pipeline uses one stream)."""
        return self._stream_policy

    @property
    def concurrency(self) -> OperatorConcurrency | None:
        """DALI's operator concurrency as given (no effect on the results or the schedule)."""
        return self._concurrency

    @property
    def default_cuda_stream_priority(self) -> int:
        """CUDA stream priority."""
        return self._default_cuda_stream_priority

    @property
    def enable_memory_stats(self) -> bool:
        """Whether output memory sizes are recorded."""
        return self._enable_memory_stats

    @property
    def enable_checkpointing(self) -> bool:
        """Whether :meth:`checkpoint` is allowed."""
        return self._enable_checkpointing

    @property
    def is_restored_from_checkpoint(self) -> bool:
        """Whether this pipeline was restored from a checkpoint (``checkpoint=`` or
        ``load_state_dict``)."""
        return self._is_restored

    @property
    def py_num_workers(self) -> int | None:
        """Worker processes for parallel external sources (None or 0: none)."""
        return self._py_num_workers

    @property
    def py_start_method(self) -> str:
        """Start method of those workers."""
        return self._py_start_method

    @property
    def py_callback_pickler(self) -> Any:
        """Custom pickler for spawned callbacks."""
        return self._py_callback_pickler

    @property
    def _py_pool(self) -> Any:
        """DALI's name of :attr:`py_pool`, the worker pool of the parallel external sources
        (None until the pipeline has one); DALI programs and tests read it."""
        return self.py_pool

    def external_source_shm_statistics(self) -> dict[str, list[int]]:
        """Shared memory that the parallel external sources' workers hold for their results.

        Returns:
            ``capacities``: the size in bytes of each shared-memory slot; and
            ``per_sample_capacities``: each size divided by the number of samples the slot
            holds (a task's share of the batch), comparable to ``bytes_per_sample_hint``.
            Both are empty when the pipeline has no worker pool.
        """
        if self.py_pool is None:
            return {"capacities": [], "per_sample_capacities": []}
        return self.py_pool.shm_statistics()

    @property
    def on_error(self) -> str:
        """The error policy, ``"raise"`` or ``"skip"`` (operators may override it)."""
        return self._on_error

    @property
    def max_errors(self) -> int | None:
        """How many samples ``"skip"`` may drop before the pipeline raises (None: no limit)."""
        return self._max_errors

    @property
    def max_decoded_bytes(self) -> int | None:
        """The image decoders' default limit on one decoded image, in bytes (None: theirs)."""
        return self._max_decoded_bytes

    @property
    def num_outputs(self) -> int:
        """Number of outputs (builds the graph definition if needed)."""
        self._ensure_defined()
        return len(self._outputs or ())

    @property
    def epoch_idx(self) -> int:
        """Epochs completed through :meth:`reset` after an end of data."""
        return self._epoch_idx

    def output_dtype(self) -> list[DataType | None]:
        """The declared output dtypes (None where not declared)."""
        return self._broadcast_spec(self._output_dtype)

    def output_ndim(self) -> list[int | None]:
        """The declared output ndims (None where not declared)."""
        return self._broadcast_spec(self._output_ndim)

    def output_layout(self) -> list[str | None]:
        """The declared output layouts (None where not declared)."""
        return self._broadcast_spec(self._output_layout)

    def _check_output_lengths(self) -> None:
        """DALI's check when the graph is built or serialized: a list of output dtypes or ndims
        has one entry per output.

        Raises:
            RuntimeError: it has another length (DALI's wording).
        """
        count = self.num_outputs
        dtypes, ndims = (
            list(spec) if isinstance(spec, list | tuple) else [spec] * count
            for spec in (self._output_dtype, self._output_ndim)
        )
        if not len(dtypes) == len(ndims) == count:
            raise RuntimeError(
                f"Lengths of provided output descriptions do not match. \nExpected "
                f"num_outputs={count}.\nReceived:\noutput_dtype={dtypes}\noutput_ndim={ndims}"
            )

    def _broadcast_spec(self, spec: Any) -> list[Any]:
        count = self.num_outputs
        if isinstance(spec, list | tuple):
            if len(spec) != count:
                raise ValueError(f"expected {count} per-output values, got {len(spec)}")
            return list(spec)
        return [spec] * count

    def _validate_outputs(self, outputs: Sequence[TensorListCPU]) -> None:
        checks = (
            ("Data type", self._output_dtype, lambda tl: tl.dtype),
            ("Number of dimensions", self._output_ndim, lambda tl: tl.ndim),
            ("Layout", self._output_layout, lambda tl: tl.layout()),
        )
        for what, spec, getter in checks:
            if spec is None:
                continue
            expected = spec if isinstance(spec, list | tuple) else [spec] * len(outputs)
            for index, (want, tl) in enumerate(zip(expected, outputs, strict=False)):
                if want is None or len(tl) == 0:
                    continue
                got = getter(tl)
                if got != want:
                    shown = want.name if isinstance(want, DataType) else want
                    got_shown = got.name if isinstance(got, DataType) else got
                    raise PipelineError(
                        f"{what} in the output_idx={index} does not match. Expected: {shown}. "
                        f"Received: {got_shown}."
                    )
