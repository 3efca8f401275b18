"""The kernel contract: how an operator's implementation runs on batches.

A kernel is created once per graph node with the node's resolved arguments (a
:class:`KernelContext`) and runs once per iteration. :class:`Kernel` works on whole batches;
:class:`SampleKernel` only implements one sample and lets the executor map it over the batch on the
pipeline's thread pool (fusing chains of per-sample operators into one task per sample).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from feedline.core.buffers import BufferPool, Slab, unreferenced
from feedline.core.errors import CorruptDataWarning
from feedline.core.tensor import TensorListCPU

if TYPE_CHECKING:
    from feedline.core.schema import OpSchema

__all__ = [
    "Batch",
    "BatchArena",
    "Kernel",
    "KernelContext",
    "SampleContext",
    "SampleKernel",
    "sample_rng",
]

T = TypeVar("T")


_MASK64 = (1 << 64) - 1
_ZEROS = np.zeros(4, np.uint64)  # a fresh Philox counter and buffer (the state setter copies)
_ZEROS.flags.writeable = False


def _philox_key(seed: int, iteration: int, sample_idx: int) -> tuple[int, int]:
    """The Philox key of a sample: the operator seed, then iteration and index (32 bits each)."""
    return seed & _MASK64, ((iteration & 0xFFFFFFFF) << 32) | (sample_idx & 0xFFFFFFFF)


def sample_rng(seed: int, iteration: int, sample_idx: int) -> np.random.Generator:
    """The generator of one sample: a function of (operator seed, iteration, sample index) only.

    A counter-based Philox generator keyed by the three, starting at counter 0 (distinct keys
    give independent streams).
    """
    key = np.array(_philox_key(seed, iteration, sample_idx), dtype=np.uint64)
    return np.random.Generator(np.random.Philox(key=key))


class _GeneratorCache(threading.local):
    """Per-thread generators re-keyed for each sample: setting a Philox state costs ~3 us, a new
    generator ~25 us (numpy seeds every new bit generator from OS entropy first)."""

    def __init__(self) -> None:
        self.free: list[np.random.Generator] = []
        # One state mapping per thread, its key rewritten for each sample (the setter copies).
        self._key = np.zeros(2, np.uint64)
        self._state = {
            "bit_generator": "Philox",
            "state": {"counter": _ZEROS, "key": self._key},
            "buffer": _ZEROS,
            "buffer_pos": 4,
            "has_uint32": 0,
            "uinteger": 0,
        }

    def take(self, seed: int, iteration: int, sample_idx: int) -> np.random.Generator:
        """A generator in exactly the state :func:`sample_rng` would return."""
        if not self.free:
            return sample_rng(seed, iteration, sample_idx)
        generator = self.free.pop()
        self._key[0], self._key[1] = _philox_key(seed, iteration, sample_idx)
        generator.bit_generator.state = self._state
        return generator

    def reclaim(self, context: SampleContext) -> None:
        """Take back the generator of ``context`` unless something else still references it
        (a kernel that kept it keeps it)."""
        holders = [context._rng]
        context._rng = None
        if len(self.free) < 8 and unreferenced(holders, 0):
            self.free.append(holders[0])


_GENERATORS = _GeneratorCache()


@dataclass(frozen=True)
class KernelContext:
    """Everything a kernel knows about its node.

    Attributes:
        name: the node's unique name.
        schema: the operator's schema.
        args: validated static arguments with defaults filled in (deprecated names renamed).
        tensor_args: arguments that arrive per sample, in :attr:`Batch.arg_inputs`.
        device: ``cpu``, ``mixed`` or ``gpu``.
        batch_size: the pipeline's maximum batch size.
        num_threads: size of the pipeline's thread pool.
        seed: this operator's seed.
        device_id: the CUDA device, or None for CPU-only pipelines.
        pipeline: the owning pipeline (for services such as the Python worker pool).
        num_outputs: how many outputs the node has.
        used_outputs: the indices of the outputs that the built graph reads (pipeline outputs
            or other operators' inputs); None when not known (all may be read).
        num_inputs: how many positional inputs the node has.
        on_error: the node's error policy, ``raise`` or ``skip`` (see ``docs/errors.md``); a
            reader under ``skip`` replaces a sample it fails to load by the next one.
        stream: the pipeline's device stream for ``mixed``/``gpu`` kernels (a
            :class:`~feedline.core.execution.device.DeviceStream`: the CUDA stream, pinned and
            device memory, asynchronous copies); None on the CPU. It is also the current CuPy
            stream while the kernel runs.
    """

    name: str
    schema: OpSchema
    args: Mapping[str, Any]
    tensor_args: frozenset[str]
    device: str
    batch_size: int
    num_threads: int
    seed: int
    device_id: int | None
    pipeline: Any = None
    num_outputs: int = 1
    used_outputs: frozenset[int] | None = None
    num_inputs: int = 0
    on_error: str = "raise"
    stream: Any = None


class Batch:
    """The inputs of one iteration, handed to :meth:`Kernel.run`."""

    __slots__ = ("_map", "_seed", "arg_inputs", "inputs", "iteration", "size")

    def __init__(
        self,
        inputs: list[TensorListCPU],
        arg_inputs: dict[str, TensorListCPU],
        iteration: int,
        size: int,
        seed: int,
        mapper: Callable[[Callable[[int], Any], int], list[Any]],
    ) -> None:
        self.inputs = inputs
        self.arg_inputs = arg_inputs
        self.iteration = iteration
        self.size = size
        self._seed = seed
        self._map = mapper

    def rng(self, sample_idx: int) -> np.random.Generator:
        """The random generator of sample ``sample_idx`` in this iteration."""
        return sample_rng(self._seed, self.iteration, sample_idx)

    def map(self, fn: Callable[[int], T], n: int) -> list[T]:
        """Run ``fn(i)`` for ``i < n`` on the pipeline's thread pool; results in order."""
        return self._map(fn, n)


class BatchArena:
    """One output's batch buffer that per-sample kernels can write into directly.

    The first sample that asks for an output buffer fixes the batch's sample shape and dtype;
    samples of that shape get a view of row ``index`` of one contiguous ``(n, *shape)`` array, so
    the executor hands the batch on without stacking (copying) it. Other shapes get their own
    array and the batch becomes ragged. With a ``pool``, the batch array is a recycled one when
    an earlier batch's array is no longer referenced; with ``ragged_bytes`` too (the room the
    samples took in an earlier, ragged batch), every sample is carved from one recycled
    :class:`~feedline.core.buffers.Slab` of that size instead, whatever its shape.
    """

    __slots__ = ("_lock", "_pool", "_rows", "buffer", "size", "slab")

    def __init__(self, size: int, pool: BufferPool | None = None, ragged_bytes: int = 0) -> None:
        self.size = size
        self.buffer: np.ndarray | None = None
        self._rows: list[np.ndarray | None] = [None] * size
        self._pool = pool
        self._lock = threading.Lock()
        self.slab = Slab(pool, ragged_bytes) if pool is not None and ragged_bytes > 0 else None

    def allocate(self, index: int, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A writable array for sample ``index``: a batch-buffer row when the shape agrees."""
        dtype = np.dtype(dtype)
        if self.slab is not None:
            return self.slab.empty(shape, dtype)
        if self.buffer is None:
            with self._lock:
                if self.buffer is None:
                    full = (self.size, *shape)
                    pool = self._pool
                    self.buffer = np.empty(full, dtype) if pool is None else pool.empty(full, dtype)
        buffer = self.buffer
        same_type = buffer.dtype == dtype and buffer.dtype.metadata == dtype.metadata
        if buffer.shape[1:] == tuple(shape) and same_type:
            row = buffer[index, ...]  # a 0-D sample stays an array (writable view)
            if 0 <= index < self.size:
                self._rows[index] = row
            return row
        return np.empty(shape, dtype)

    def dense(self, samples: Sequence[np.ndarray]) -> np.ndarray | None:
        """The batch buffer if every sample is its own row of it (else None)."""
        buffer = self.buffer
        if buffer is None or len(samples) != self.size:
            return None
        if all(sample is row for sample, row in zip(samples, self._rows, strict=True)):
            return buffer  # the very rows handed out
        base = buffer.__array_interface__["data"][0]
        stride = buffer.strides[0] if buffer.ndim else 0
        for i, sample in enumerate(samples):
            if (
                sample.base is not buffer
                or sample.__array_interface__["data"][0] != base + i * stride
            ):
                return None
        return buffer


_ACTIVE = threading.local()


def set_active_source(source_info: str) -> None:
    """Record the source of the sample this thread is processing (set by the executor)."""
    _ACTIVE.source_info = source_info


def active_source() -> str:
    """The source (file path) of the sample this thread is processing, or ``""``: lets a
    kernel's helpers name the sample in a warning without passing the context down."""
    return getattr(_ACTIVE, "source_info", "")


def warn_corrupt_data(message: str) -> None:
    """Warn (:class:`~feedline.core.errors.CorruptDataWarning`) that the active sample was
    decoded despite recoverable damage described by ``message``; the warning names the sample."""
    where = active_source() or "a sample without source information"
    warnings.warn(CorruptDataWarning(f"{where}: {message}"), stacklevel=3)


class SampleContext:
    """What a per-sample kernel knows about the sample it is processing."""

    __slots__ = (
        "_arenas",
        "_rng",
        "_seed",
        "arg_layouts",
        "index",
        "iteration",
        "layouts",
        "source_info",
    )

    def __init__(
        self,
        index: int,
        iteration: int,
        source_info: str,
        layouts: tuple[str, ...],
        seed: int,
        arenas: Sequence[BatchArena] | None = None,
        arg_layouts: Mapping[str, str] | None = None,
    ) -> None:
        self.index = index
        self.iteration = iteration
        self.source_info = source_info
        self.layouts = layouts
        self.arg_layouts: Mapping[str, str] = arg_layouts or {}
        """The layout of each argument given per sample (a DataNode); ``F`` first marks an
        argument given per frame (``fn.per_frame``)."""
        self._seed = seed
        self._arenas = arenas
        self._rng: np.random.Generator | None = None

    def output(self, shape: Sequence[int], dtype: Any, output_index: int = 0) -> np.ndarray:
        """An uninitialised array to write output ``output_index`` into (saves a batch copy).

        Return this array (filled) from ``run_sample``. When every sample of the batch has the
        same shape, the executor hands the batch on without stacking it.
        """
        shape = tuple(int(s) for s in shape)
        if self._arenas is None:
            return np.empty(shape, dtype)
        return self._arenas[output_index].allocate(self.index, shape, dtype)

    @property
    def rng(self) -> np.random.Generator:
        """This sample's random generator (created on first use; see :func:`sample_rng`)."""
        if self._rng is None:
            self._rng = _GENERATORS.take(self._seed, self.iteration, self.index)
        return self._rng

    def release(self) -> None:
        """Called by the executor when ``run_sample`` has returned: the generator goes back to
        this thread's cache for the next sample, unless the kernel kept a reference to it."""
        if self._rng is not None:
            _GENERATORS.reclaim(self)


class Kernel:
    """Base class of operator implementations: runs on whole batches."""

    is_reader: ClassVar[bool] = False
    """Readers also provide ``reader_meta()``, ``state_dict()``/``load_state_dict()`` and, for
    ``on_error="skip"``, ``replacement(count, iteration)`` (the next ``count`` samples of their
    stream, one TensorList per output) and ``take_skipped()`` (the ``SkippedSample`` records of
    the samples they failed to load); ``feedline.readers.base.Reader`` implements them all."""

    resizes_batch: ClassVar[bool] = False
    """Set by kernels whose outputs hold other numbers of samples than their inputs (the split
    of a conditional): per-sample operators that read those outputs never share a chain with
    operators that read the inputs."""

    batch_like: ClassVar[str | None] = None
    """The argument input whose batch the outputs match sample for sample, when it is not the
    positional inputs' (the merge of a conditional: its ``predicate``)."""

    fetches_input: bool = False
    """Set (in :meth:`setup`) by a source whose data comes from user Python code that DALI runs
    on the thread scheduling the iteration (``external_source`` callbacks). For each scheduled
    iteration the pipeline then calls :meth:`fetch_input` on that thread, in order, and hands the
    result back through :meth:`accept_input` once every source of the iteration succeeded;
    :meth:`run` of that iteration returns it."""

    def __init__(self, ctx: KernelContext) -> None:
        self.ctx = ctx
        self.args = ctx.args

    def setup(self) -> None:
        """Prepare once, at ``Pipeline.build()``."""

    def fetch_input(self) -> Any:
        """The input of the next scheduled iteration (see :attr:`fetches_input`).

        Raises:
            StopIteration: the input ended (the epoch ends after the iterations before it).
        """
        raise NotImplementedError(f"{type(self).__name__} does not fetch its input")

    def accept_input(self, iteration: int, data: Any) -> None:
        """Keep ``data`` (from :meth:`fetch_input`) for :meth:`run` of iteration ``iteration``."""
        raise NotImplementedError(f"{type(self).__name__} does not fetch its input")

    def drop_inputs(self) -> None:
        """Forget the inputs kept for iterations that will not run (they were abandoned)."""

    def run(self, batch: Batch) -> Sequence[TensorListCPU]:
        """Compute one iteration: one TensorList per output."""
        raise NotImplementedError(f"{type(self).__name__} does not implement run()")

    def abort(self) -> None:
        """Stop waiting: the pipeline is closing. Called from another thread, before
        :meth:`close`; a kernel whose :meth:`run` can block (on input fed from Python, say)
        wakes it up and makes it raise, so that closing never waits for input that will not come.
        """

    def close(self) -> None:
        """Release resources (threads, files); called when the pipeline closes."""


class SampleKernel(Kernel):
    """A kernel that processes one sample at a time; the executor maps it over the batch."""

    serial: bool = False
    """Set (in :meth:`setup`) by kernels whose samples take microseconds, such as a scalar
    random draw: the executor then runs the whole batch back to back on the pipeline's thread,
    ahead of the other per-sample operators, instead of interleaving it with their samples on
    the thread pool. Right after a large sample (a decode) the caches are cold and such Python
    runs several times slower, holding the GIL that the pool's other threads need."""

    implied_layouts: ClassVar[Mapping[int, str]] = {}
    """Layouts by number of dimensions that the kernel takes data without a layout to have (as
    DALI's image operators take 3-D data as HWC): an output left without a layout is labelled
    with the one for its samples' number of dimensions, as DALI labels it."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """Output layouts given input layouts (default: input 0's layout for every output)."""
        layout = input_layouts[0] if input_layouts else ""
        return (layout,) * self.ctx.num_outputs

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray | tuple[np.ndarray, ...]:
        """Process one sample; return one array per output (a bare array for one output)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement run_sample()")
