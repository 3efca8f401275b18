"""The :class:`Reader` base class: sharding, shuffling, padding, epochs, prefetching, checkpoints.

A reader plugin only says what its samples are (:meth:`Reader.index`) and how to load one
(:meth:`Reader.load`); the base class implements every common reader argument (see
``docs/readers.md``) through :class:`~feedline.readers.sampler.Sampler`, prepares whole
batches ahead on its own thread, reports ``reader_meta`` and serves checkpoints.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from feedline.core.errors import OperatorError
from feedline.core.kernel import Batch, Kernel, KernelContext
from feedline.core.schema import ArgSpec, OpSchema
from feedline.core.tensor import TensorListCPU
from feedline.readers.fileio import FileBytes, read_bytes
from feedline.readers.sampler import (
    LIST_SHUFFLE_SEED,
    Sampler,
    SamplerConfig,
    check_order_settings,
    epoch_size_padded,
)

__all__ = ["READER_ARGS", "SHARDING_DOC", "Reader", "read_bytes", "reader_schema"]

GATHER_LIMIT = 64 * 1024
"""Samples larger than this (encoded files) are not copied into one batch buffer: decoders read
them one by one, so each stays a zero-copy view of its file until someone asks for the whole
batch (``TensorListCPU.as_array``)."""

READER_ARGS: tuple[ArgSpec, ...] = (
    ArgSpec("num_shards", "int", 1, "Split the data set into this many shards (one per pipeline "
            "or process); shard k holds samples [floor(k*N/S), floor((k+1)*N/S))."),
    ArgSpec("shard_id", "int", 0, "The shard this reader starts on, in [0, num_shards)."),
    ArgSpec("random_shuffle", "bool", False, "Permute the sample list once with a fixed seed "
            "before sharding, and pick samples at random from a buffer of initial_fill samples."),
    ArgSpec("initial_fill", "int", 1024, "Size of the shuffle buffer (used only with "
            "random_shuffle); an epoch's samples never mix with the next epoch's."),
    ArgSpec("shuffle_after_epoch", "bool", False, "Re-permute the whole sample list at every "
            "epoch, the first one too (epoch e, counted from 1, uses the seed "
            "shuffle_after_epoch_seed + e); the reader keeps its shard index. Excludes "
            "random_shuffle and stick_to_shard."),
    ArgSpec("shuffle_after_epoch_seed", "int", LIST_SHUFFLE_SEED, "Base seed of the "
            "shuffle_after_epoch permutations; every shard must use the same one."),
    ArgSpec("stick_to_shard", "bool", False, "Read only shard shard_id, epoch after epoch, "
            "instead of moving on to the next shard."),
    ArgSpec("pad_last_batch", "bool", False, "Pad every epoch of a shard with copies of its last "
            "sample up to ceil(N/num_shards) samples and a full batch, so that all shards emit "
            "the same number of batches and batches never straddle epochs."),
    ArgSpec("lazy_init", "bool", False, "Index the data set at the first read or the first "
            "reader_meta/epoch_size query instead of at build (errors surface there)."),
    ArgSpec("prefetch_queue_depth", "int", 1, "Number of whole batches the reader prepares ahead "
            "on its own thread (never changes the sample order)."),
    ArgSpec("read_ahead", "bool", False, "Populate each memory-mapped file completely when it is "
            "opened instead of on first access."),
    ArgSpec("dont_use_mmap", "bool", False, "Read files with plain reads into new buffers instead "
            "of memory-mapping them (mapped samples are read-only arrays)."),
    ArgSpec("bytes_per_sample_hint", "int_vec", (0,), "Expected output size per sample, per "
            "output (a hint; feedline sizes buffers exactly, so it has no visible effect)."),
    ArgSpec("tensor_init_bytes", "int", 1048576, "Expected bytes per sample (a hint; feedline "
            "sizes buffers exactly, so it has no visible effect)."),
    ArgSpec("skip_cached_images", "bool", False, "Return empty data for samples that an image "
            "decoder has cached (feedline's decoders keep no cache, so nothing is skipped)."),
)  # fmt: skip
"""The common reader arguments, appended to every reader's schema by :func:`reader_schema`."""

SHARDING_DOC = f"""\
Sharding and epochs:
    N samples are split into num_shards contiguous shards, shard k = [floor(k*N/S),
    floor((k+1)*N/S)) (after the random_shuffle permutation, if any). A reader is an endless
    stream: Pipeline.run() never ends because of it and Pipeline.reset() does not rewind it.
    Epoch e of a reader started on shard k reads shard (k + e) mod S; with stick_to_shard (or
    shuffle_after_epoch) it reads shard k every epoch. Without pad_last_batch, batches run
    across epoch boundaries. With pad_last_batch, each epoch is padded with copies of its last
    sample up to ceil(N/S) samples and then to a full batch. random_shuffle permutes the list
    once with the fixed seed {LIST_SHUFFLE_SEED} and shuffles through a buffer of
    initial_fill samples drawn from the operator seed; every epoch is still an exact
    permutation of its shard. reader_meta: epoch_size = N, epoch_size_padded = ceil(N/S)*S
    with padding (else N), number_of_shards, shard_id, pad_last_batch and stick_to_shard
    (0/1)."""


def reader_schema(
    name: str,
    doc: str,
    args: Sequence[ArgSpec],
    outputs: tuple[str, ...] | Callable[[Mapping[str, Any]], tuple[str, ...]],
    **kwargs: Any,
) -> OpSchema:
    """The schema of a reader: its own ``args`` plus :data:`READER_ARGS` and the sharding docs.

    Args:
        name: dotted operator name, e.g. ``"readers.file"``.
        doc: the reader's description.
        args: the reader's own arguments.
        outputs: output names, or a function of the resolved arguments returning them.
        **kwargs: further :class:`~feedline.core.schema.OpSchema` fields (``deprecated``, …).
    """
    text = f"{doc.rstrip()}\n\n{SHARDING_DOC}"
    return OpSchema(name, text, outputs=outputs, args=(*args, *READER_ARGS), **kwargs)


@dataclass
class _Prepared:
    """A batch made by the loader thread, with the sampler state right after it."""

    outputs: list[TensorListCPU]
    state: dict[str, Any]


@dataclass
class _Failure:
    """A failure of the loader thread, delivered to :meth:`Reader.run` in order."""

    error: BaseException
    sample_index: int | None = None
    source_info: str = ""


class _LoadFailed(Exception):
    """Raised by the default :meth:`Reader.load_batch`: it knows the batch's first failure."""

    def __init__(self, failure: _Failure) -> None:
        super().__init__(failure.error)
        self.failure = failure


class _Prefetcher:
    """A daemon thread that keeps up to ``depth`` prepared batches in a queue.

    It holds its producer weakly, so a reader that is dropped without ``close()`` still ends it.
    """

    def __init__(self, produce: Callable[[], _Prepared | _Failure], depth: int, name: str) -> None:
        self._produce = weakref.WeakMethod(produce)  # type: ignore[arg-type]
        self._queue: queue.Queue[_Prepared | _Failure] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"feedline-{name}", daemon=True)
        self._thread.start()

    def _running(self) -> bool:
        return not self._stop.is_set() and self._produce() is not None

    def _loop(self) -> None:
        while self._running():
            produce = self._produce()
            if produce is None:
                return
            try:
                item = produce()
            except BaseException as exc:  # delivered to run(), never lost in this thread
                item = _Failure(exc)
            del produce
            while self._running():
                try:
                    self._queue.put(item, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if isinstance(item, _Failure):
                return

    def get(self) -> _Prepared | _Failure:
        while True:
            try:
                return self._queue.get(timeout=0.5)
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    return _Failure(RuntimeError("the reader's loader thread stopped"))

    def stop(self) -> None:
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._queue.get_nowait()
            except queue.Empty:
                self._thread.join(timeout=0.05)


def _tensor_list(
    column: Sequence[np.ndarray] | np.ndarray, layout: str, infos: list[str]
) -> TensorListCPU:
    """One output of a batch: a dense array as is, a list of samples gathered if small."""
    if isinstance(column, np.ndarray):
        return TensorListCPU.from_dense(column, layout, infos)
    stack = column[0].nbytes <= GATHER_LIMIT if len(column) else True
    return TensorListCPU.from_samples(column, layout, infos, stack=stack)


class Reader(Kernel):
    """Base class of readers.

    Subclasses implement :meth:`index` and :meth:`load` (and usually :meth:`source_info`; if
    whole batches load faster, :meth:`load_batch`); the outputs are the schema's outputs.
    Everything else — the common reader arguments, batching, the loader thread,
    ``reader_meta`` and checkpoints — is done here.
    """

    is_reader: ClassVar[bool] = True
    parallel_load: ClassVar[bool] = False
    """Spread each batch's :meth:`load` calls over ``num_threads`` threads. Worth it only when
    loading mostly runs code that releases the GIL (decoding, large reads); memory-mapping small
    files is faster on the loader thread alone."""

    def __init__(self, ctx: KernelContext) -> None:
        super().__init__(ctx)
        self._sampler: Sampler | None = None
        self._items: Sequence[Any] | None = None
        self._state: dict[str, Any] = {}
        self._loader: _Prefetcher | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._file_bytes = FileBytes(not self.args["dont_use_mmap"], self.args["read_ahead"])

    # -- subclass API ----------------------------------------------------------------------------
    def output_names(self) -> tuple[str, ...]:
        """Names of the outputs (default: the schema's, which may depend on the arguments)."""
        return self.ctx.schema.output_names(self.args)

    def output_layouts(self) -> tuple[str, ...]:
        """Layout of each output (default: ``""`` for every output)."""
        return ("",) * len(self.output_names())

    def index(self) -> Sequence[Any]:
        """The samples, in canonical order (before sharding and shuffling)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement index()")

    def load(self, item: Any) -> tuple[np.ndarray, ...]:
        """The outputs of one sample (called on worker threads)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement load()")

    def load_batch(self, items: Sequence[Any]) -> Sequence[Sequence[np.ndarray] | np.ndarray]:
        """The outputs of ``items``, output by output: a list with one array per item, or one
        array whose rows are the items' samples.

        The default calls :meth:`load` for each item (spread over ``num_threads`` threads with
        :attr:`parallel_load`). Override it to load a whole batch at once; :meth:`load` must
        still work: when ``load_batch`` raises, the reader calls :meth:`load` item by item to
        name the first sample that fails.
        """
        samples: list[Any] = [None] * len(items)
        failures: list[_Failure] = []
        n_out = len(self.output_names())

        def load_range(lo: int, hi: int) -> None:
            for i in range(lo, hi):
                try:
                    out = self.load(items[i])
                    if not isinstance(out, tuple) or len(out) != n_out:
                        raise TypeError(
                            f"{type(self).__name__}.load() must return a tuple of {n_out} arrays"
                        )
                    samples[i] = out
                except Exception as exc:  # each chunk stops at its first failure
                    failures.append(_Failure(exc, i, self.source_info(items[i])))
                    return

        self._map_ranges(load_range, len(items))
        if failures:  # the batch's first failure
            raise _LoadFailed(min(failures, key=lambda f: f.sample_index or 0))
        return [[s[j] for s in samples] for j in range(n_out)]

    def source_info(self, item: Any) -> str:
        """Where the sample comes from (its path), attached to every output."""
        return ""

    def read_bytes(self, path: str) -> np.ndarray:
        """Read a file as ``uint8`` honouring ``dont_use_mmap`` and ``read_ahead``.

        A file still mapped for an earlier sample that is alive is not mapped again (see
        :class:`~feedline.readers.fileio.FileBytes`).
        """
        return self._file_bytes(path)

    # -- lifecycle -------------------------------------------------------------------------------
    def setup(self) -> None:
        """Check the common arguments; index the data set unless ``lazy_init``.

        Raises:
            ValueError: a conflicting or out-of-range argument, or indexing errors.
        """
        args = self.args
        check_order_settings(**self._order_settings())
        if args["prefetch_queue_depth"] < 1:
            raise ValueError(
                f"prefetch_queue_depth must be at least 1, got {args['prefetch_queue_depth']}"
            )
        for key in ("tensor_init_bytes", "bytes_per_sample_hint"):
            values = args[key] if isinstance(args[key], tuple) else (args[key],)
            if any(v < 0 for v in values):
                raise ValueError(f"{key} must not be negative, got {args[key]}")
        if not args["lazy_init"]:
            self._ensure_indexed()

    def _order_settings(self) -> dict[str, Any]:
        """The arguments checked by :func:`check_order_settings`."""
        keys = ("num_shards", "shard_id", "initial_fill", "random_shuffle", "shuffle_after_epoch",
                "stick_to_shard")  # fmt: skip
        return {"batch_size": self.ctx.batch_size} | {key: self.args[key] for key in keys}

    def _ensure_indexed(self) -> Sampler:
        with self._lock:
            if self._sampler is None:
                items = self.index()
                config = SamplerConfig(
                    num_samples=len(items),
                    shuffle_after_epoch_seed=self.args["shuffle_after_epoch_seed"],
                    pad_last_batch=self.args["pad_last_batch"],
                    seed=self.ctx.seed,
                    **self._order_settings(),
                )
                self._items = items
                self._sampler = Sampler(config)
                self._state = self._sampler.state_dict()
            return self._sampler

    def close(self) -> None:
        """Stop the loader thread and its helpers."""
        self._stop_loader()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _stop_loader(self) -> None:
        loader, self._loader = self._loader, None
        if loader is not None:
            loader.stop()

    # -- running ---------------------------------------------------------------------------------
    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Return the next prepared batch of ``max_batch_size`` samples (``docs/readers.md``).

        Raises:
            OperatorError: loading a sample failed (names the sample and its source).
        """
        self._ensure_indexed()
        if self._loader is None:
            self._loader = _Prefetcher(
                self._prepare, self.args["prefetch_queue_depth"], self.ctx.name
            )
        result = self._loader.get()
        if isinstance(result, _Failure):
            # Forget what was prepared after the last delivered batch: a retry reads it again.
            self._stop_loader()
            assert self._sampler is not None
            self._sampler.load_state_dict(self._state)
            error = result.error
            if isinstance(error, OperatorError):
                raise error
            raise OperatorError(
                f"{type(error).__name__}: {error}",
                operator=self.ctx.name,
                iteration=batch.iteration,
                sample_index=result.sample_index,
                source_info=result.source_info,
            ) from error
        self._state = result.state
        return result.outputs

    def _prepare(self) -> _Prepared | _Failure:
        """Plan, load and assemble one batch (runs on the loader thread)."""
        sampler = self._sampler
        all_items = self._items
        assert sampler is not None and all_items is not None
        plan = sampler.next_batch()
        state = sampler.state_dict()
        items = [all_items[i] for i in plan.indices]
        try:
            columns = self.load_batch(items)
        except _LoadFailed as failed:
            return failed.failure
        except Exception as exc:  # an overriding load_batch: name the failing sample if possible
            return self._first_failure(items, exc)
        n_out = len(self.output_names())
        if len(columns) != n_out or any(len(column) != len(items) for column in columns):
            raise TypeError(
                f"{type(self).__name__}.load_batch() must return {n_out} outputs of "
                f"{len(items)} samples each"
            )
        infos = [self.source_info(item) for item in items]
        layouts = self.output_layouts()
        outputs = [
            _tensor_list(column, layout, infos)
            for column, layout in zip(columns, layouts, strict=True)
        ]
        return _Prepared(outputs, state)

    def _first_failure(self, items: Sequence[Any], error: Exception) -> _Failure:
        """The first of ``items`` whose :meth:`load` fails, else ``error`` on its own."""
        for i, item in enumerate(items):
            try:
                self.load(item)
            except Exception as exc:
                return _Failure(exc, i, self.source_info(item))
        return _Failure(error)

    def _map_ranges(self, fn: Callable[[int, int], None], n: int) -> None:
        """Run ``fn(lo, hi)`` over contiguous chunks of ``range(n)``, in parallel if allowed."""
        workers = min(self.ctx.num_threads, n) if self.parallel_load else 1
        if workers <= 1:
            fn(0, n)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                self.ctx.num_threads - 1, thread_name_prefix=f"feedline-{self.ctx.name}"
            )
        bounds = [n * w // workers for w in range(workers + 1)]
        futures = [self._pool.submit(fn, bounds[w], bounds[w + 1]) for w in range(1, workers)]
        fn(bounds[0], bounds[1])
        for future in futures:
            future.result()

    # -- metadata and checkpoints ----------------------------------------------------------------
    def reader_meta(self) -> dict[str, int]:
        """``epoch_size``, ``epoch_size_padded``, ``number_of_shards``, ``shard_id``,
        ``pad_last_batch``, ``stick_to_shard`` (flags as 0/1). Forces indexing."""
        config = self._ensure_indexed().config
        return {
            "epoch_size": config.num_samples,
            "epoch_size_padded": epoch_size_padded(
                config.num_samples, config.num_shards, config.pad_last_batch
            ),
            "number_of_shards": config.num_shards,
            "shard_id": config.shard_id,
            "pad_last_batch": int(config.pad_last_batch),
            "stick_to_shard": int(config.sticky),
        }

    def state_dict(self) -> dict[str, Any]:
        """JSON-able position, epoch and shuffle state after the last batch :meth:`run` returned."""
        self._ensure_indexed()
        return self._state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Make the next :meth:`run` continue exactly after the batch ``state`` was taken at.

        Raises:
            ValueError: the state is malformed or belongs to a reader with other settings.
        """
        sampler = self._ensure_indexed()
        self._stop_loader()
        sampler.load_state_dict(state)
        self._state = sampler.state_dict()
