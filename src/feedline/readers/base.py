"""The :class:`Reader` base class: sharding, shuffling, padding, epochs, prefetching, checkpoints.

A reader plugin only says what its samples are (:meth:`Reader.index`) and how to load one
(:meth:`Reader.load`); the base class implements every common reader argument (see
``docs/readers.md``) through :class:`~feedline.readers.sampler.Sampler`, prepares whole
batches ahead on its own thread, reports ``reader_meta`` and serves checkpoints.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np

from feedline.core.errors import OperatorError, SkippedSample
from feedline.core.kernel import Batch, Kernel, KernelContext
from feedline.core.schema import ArgSpec, OpSchema
from feedline.core.tensor import TensorListCPU
from feedline.readers.carry import CARRY_KEY, Carry, load_each
from feedline.readers.fileio import SMALL_FILE_BYTES, FileBytes, read_bytes
from feedline.readers.loader import Failure, LoadFailed, Prefetcher, Prepared
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

    decodes_files: ClassVar[bool] = False
    """:meth:`load` decodes each file it reads and keeps none of its bytes (e.g. audio): files
    under :data:`~feedline.readers.fileio.SMALL_FILE_BYTES` are then read rather than
    memory-mapped, which costs less for a mapping that would live only for one load."""

    def __init__(self, ctx: KernelContext) -> None:
        super().__init__(ctx)
        self._sampler: Sampler | None = None
        self._items: Sequence[Any] | None = None
        self._state: dict[str, Any] = {}
        self._carry: Carry | None = None
        self._skipped: list[SkippedSample] = []
        self._loader: Prefetcher | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._file_bytes = FileBytes(
            not self.args["dont_use_mmap"],
            self.args["read_ahead"],
            SMALL_FILE_BYTES if self.decodes_files else 0,
        )

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
        failures: list[Failure] = []
        n_out = len(self.output_names())

        def load_range(lo: int, hi: int) -> None:
            for i in range(lo, hi):
                try:
                    samples[i] = self._load_checked(items[i])
                except Exception as exc:  # each chunk stops at its first failure
                    failures.append(Failure(exc, i, self.source_info(items[i])))
                    return

        self._map_ranges(load_range, len(items))
        if failures:  # the batch's first failure
            raise LoadFailed(min(failures, key=lambda f: f.sample_index or 0))
        return [[s[j] for s in samples] for j in range(n_out)]

    def _load_checked(self, item: Any) -> tuple[np.ndarray, ...]:
        """:meth:`load`, checking that it returns one array per output."""
        out = self.load(item)
        n_out = len(self.output_names())
        if not isinstance(out, tuple) or len(out) != n_out:
            raise TypeError(f"{type(self).__name__}.load() must return a tuple of {n_out} arrays")
        return out

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
        self._carry = None
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
        if self._carry is None:
            prepared = self._next_prepared(batch.iteration)
            if not prepared.failures:
                self._state = prepared.state
                return prepared.outputs
            self._carry = Carry(self._state, len(prepared.outputs))
            self._push(prepared, batch.iteration)
        return self._take(self.ctx.batch_size, batch.iteration)

    def replacement(self, count: int, iteration: int) -> list[TensorListCPU]:
        """The next ``count`` samples of the stream, to replace samples that failed downstream
        under ``on_error="skip"``; later batches continue after them."""
        if self._carry is None:
            self._carry = Carry(self.state_dict(), len(self.output_names()))
        return self._take(count, iteration)

    def take_skipped(self) -> list[SkippedSample]:
        """The samples this reader failed to load and left out since the last call."""
        skipped, self._skipped = self._skipped, []
        return skipped

    def _take(self, count: int, iteration: int) -> list[TensorListCPU]:
        """``count`` samples from the carry, pulling prepared batches into it as needed."""
        carry = self._carry
        assert carry is not None
        limit = self._ensure_indexed().config.num_samples + self.ctx.batch_size
        while carry.drop or len(carry) < count:
            self._push(self._next_prepared(iteration), iteration)
            if carry.bad_streak > limit:
                raise OperatorError(
                    f"{carry.bad_streak} samples in a row failed to load: the reader has no "
                    "good sample left to replace them with",
                    operator=self.ctx.name,
                    iteration=iteration,
                )
        columns, infos = carry.take(count)
        if carry.empty():
            self._carry = None
        layouts = self.output_layouts()
        return [_tensor_list(c, layout, infos) for c, layout in zip(columns, layouts, strict=True)]

    def _push(self, prepared: Prepared, iteration: int) -> None:
        assert self._carry is not None
        outputs = prepared.outputs
        infos = outputs[0].source_infos() if outputs else []
        columns = [tl.samples() for tl in outputs]
        self._skipped += self._carry.push(
            columns, infos, prepared.failures, self.ctx.name, iteration
        )
        self._state = prepared.state

    def _next_prepared(self, iteration: int) -> Prepared:
        """The loader thread's next batch.

        Raises:
            OperatorError: loading a sample failed (names the sample and its source).
        """
        self._ensure_indexed()
        if self._loader is None:
            self._loader = Prefetcher(
                self._prepare, self.args["prefetch_queue_depth"], self.ctx.name
            )
        result = self._loader.get()
        if isinstance(result, Failure):
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
                iteration=iteration,
                sample_index=result.sample_index,
                source_info=result.source_info,
            ) from error
        return result

    def _prepare(self) -> Prepared | Failure:
        """Plan, load and assemble one batch (runs on the loader thread)."""
        sampler = self._sampler
        all_items = self._items
        assert sampler is not None and all_items is not None
        plan = sampler.next_batch()
        state = sampler.state_dict()
        items = [all_items[i] for i in plan.indices]
        n_out = len(self.output_names())
        try:
            columns = self.load_batch(items)
        except Exception as exc:
            if self.ctx.on_error == "skip":
                samples, infos, failures = load_each(items, self._load_checked, self.source_info)
                columns = [[s[j] for s in samples] for j in range(n_out)]
                layouts = self.output_layouts()
                outputs = [
                    _tensor_list(c, lay, infos) for c, lay in zip(columns, layouts, strict=True)
                ]
                return Prepared(outputs, state, failures)
            if isinstance(exc, LoadFailed):
                return exc.failure
            return self._first_failure(items, exc)  # an overriding load_batch: name the sample
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
        return Prepared(outputs, state)

    def _first_failure(self, items: Sequence[Any], error: Exception) -> Failure:
        """The first of ``items`` whose :meth:`load` fails, else ``error`` on its own."""
        for i, item in enumerate(items):
            try:
                self.load(item)
            except Exception as exc:
                return Failure(exc, i, self.source_info(item))
        return Failure(error)

    def _map_ranges(self, fn: Callable[[int, int], None], n: int) -> None:
        """Run ``fn(lo, hi)`` over contiguous chunks of ``range(n)``, in parallel if allowed."""
        loader = self._loader
        wanted = self.parallel_load and (loader is None or loader.behind)
        workers = min(self.ctx.num_threads, n) if wanted else 1
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
        """JSON-able position, epoch and shuffle state after the last batch :meth:`run` returned
        (with a carry, see :mod:`feedline.readers.carry`)."""
        self._ensure_indexed()
        return self._state if self._carry is None else self._carry.position()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Make the next :meth:`run` continue exactly after the batch ``state`` was taken at.

        Raises:
            ValueError: the state is malformed or belongs to a reader with other settings.
        """
        sampler = self._ensure_indexed()
        self._stop_loader()
        carried = state.get(CARRY_KEY) if isinstance(state, dict) else None
        if carried is not None:
            if not isinstance(carried, dict) or set(carried) != {"base", "skip"}:
                raise ValueError(f"malformed reader state: {CARRY_KEY!r} must hold base and skip")
            state = carried["base"]
        sampler.load_state_dict(state)
        self._state = sampler.state_dict()
        skip = int(carried["skip"]) if carried is not None else 0
        self._carry = Carry(self._state, len(self.output_names()), drop=skip) if skip else None
