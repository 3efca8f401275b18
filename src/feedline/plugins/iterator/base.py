"""The shared base of the framework iterators: DALI's epoch, length and last-batch rules.

Every rule of the iterator lives here, once: the epoch size taken from a reader's metadata,
``len()``, the three last-batch policies, the read-ahead that a FILL epoch carries into the next
one, shard rotation and ``reset()`` (the resumable state is in
:mod:`~feedline.plugins.iterator.state`, the argument checks in
:mod:`~feedline.plugins.iterator.options`). A framework plugin (PyTorch, JAX, NumPy, or a third
party's: see ``docs/iterators.md``) subclasses :class:`BaseIterator` and only turns one pipeline
output into its own array type (``_convert``).
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from feedline.plugins.iterator.options import (
    EpochNotFinishedWarning,
    IteratorError,
    LastBatchPolicy,
    check_output_map,
    check_output_types,
    parse_auto_reset,
    parse_policy,
    shard_sizes,
)
from feedline.plugins.iterator.state import ResumableState

__all__ = ["BaseIterator", "TaggedOutputs"]


class BaseIterator(ResumableState):
    """Iterates over one or several pipelines (one per shard) with DALI's epoch semantics.

    Args:
        pipelines: one pipeline or a list of them (one per shard/device), all with the same
            ``max_batch_size``; they are built here.
        output_map: a name for each pipeline output, in order.
        size: samples per epoch summed over the pipelines (legacy; prefer ``reader_name``).
            ``-1`` with no ``reader_name``: the epoch ends when the pipeline raises
            ``StopIteration`` (an exhausted external source); single pipeline only.
        reader_name: the reader whose metadata (``reader_meta``) gives the epoch size, the
            sharding and the padding. Excludes ``size`` and ``last_batch_padded``.
        auto_reset: ``True``/``"yes"`` to reset at the end of every epoch by itself;
            ``False``/``None``/``"no"`` to need :meth:`reset` (or a new ``for`` loop).
        fill_last_batch: deprecated; ``True`` means FILL and ``False`` PARTIAL.
        last_batch_padded: legacy (with ``size``): whether the reader pads its last batch.
        last_batch_policy: a :class:`LastBatchPolicy`.
        prepare_first_batch: fetch the first batch in the constructor.

    Raises:
        IteratorError: inconsistent arguments (see the messages).
        ValueError: a bad ``auto_reset`` or ``last_batch_policy``.
        RuntimeError: an unknown ``reader_name``; no data for the first batch.
    """

    #: The framework's name, used in messages.
    framework: ClassVar[str] = "feedline"
    #: What to use instead for ragged outputs, used in messages.
    ragged_hint: ClassVar[str] = "read the samples one by one from the pipeline"

    def __init__(
        self,
        pipelines: Any,
        output_map: Sequence[str],
        size: int = -1,
        reader_name: str | None = None,
        auto_reset: bool | str | None = False,
        fill_last_batch: bool | None = None,
        last_batch_padded: bool = False,
        last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
        prepare_first_batch: bool = True,
    ) -> None:
        if pipelines is None:
            raise IteratorError("pipelines: give one pipeline or a list of them, got None")
        self._pipes = list(pipelines) if isinstance(pipelines, list | tuple) else [pipelines]
        if not self._pipes:
            raise IteratorError("pipelines: the list is empty; give at least one pipeline")
        self.output_map = check_output_map(output_map)
        sizes = [p.max_batch_size for p in self._pipes]
        if any(s != sizes[0] for s in sizes):
            raise IteratorError(
                f"all pipelines should have the same batch size; max_batch_size per pipeline: "
                f"{sizes}"
            )
        self.batch_size: int = sizes[0]
        if len({bool(getattr(p, "enable_checkpointing", False)) for p in self._pipes}) > 1:
            raise IteratorError(
                "All wrapped pipelines must have the same value for `enable_checkpointing`."
            )
        self._auto_reset = parse_auto_reset(auto_reset)
        self._policy = parse_policy(fill_last_batch, last_batch_policy)
        self._padded = bool(last_batch_padded)
        self._reader_name = reader_name
        self._size = self._check_size(size)
        self._counter = 0
        self._ever_scheduled = False
        self._consumed = False  # a batch was handed out since the last reset
        self._first_batch: Any = None
        for pipe in self._pipes:
            pipe.build()
        if reader_name is not None:
            self._init_from_reader(reader_name)
        self._restore_from_pipelines()
        self._initial_state = self._capture_state()
        restored = any(getattr(p, "is_restored_from_checkpoint", False) for p in self._pipes)
        self._consumed = False
        if prepare_first_batch:
            try:
                self._first_batch = self._produce()
            except StopIteration:
                if restored:
                    return
                raise RuntimeError(
                    "It seems that there is no data in the pipeline. This may happen if "
                    "`last_batch_policy` is set to PARTIAL and the requested batch size is "
                    "greater than the shard size. (The first batch found the epoch empty: "
                    f"last_batch_policy={self._policy.name}, batch_size={self.batch_size}; "
                    "use LastBatchPolicy.PARTIAL or FILL, or a smaller batch, or check that "
                    "the pipeline's source does not raise StopIteration at once.)"
                ) from None

    # ---------------------------------------------------------------- configuration

    def _check_size(self, size: Any) -> int:
        try:
            size = operator.index(size)
        except TypeError:
            raise TypeError(f"size must be an int, got {size!r}") from None
        if size == 0:
            raise IteratorError("Size cannot be 0 (use -1 for 'until the pipeline stops')")
        reader_name = self._reader_name
        if reader_name is not None:
            if size > 0:
                raise IteratorError(
                    f"size={size} and reader_name={reader_name!r} cannot be given together: "
                    "the reader's metadata gives the epoch size"
                )
            if self._padded:
                raise IteratorError(
                    f"last_batch_padded cannot be set with reader_name={reader_name!r}: the "
                    "reader's pad_last_batch is used"
                )
        elif size < 0:
            if len(self._pipes) > 1:
                raise IteratorError(
                    "Negative size is supported only for a single pipeline: with "
                    f"{len(self._pipes)} pipelines give reader_name= (or size=)"
                )
            if self._policy is not LastBatchPolicy.FILL or self._padded:
                warnings.warn(
                    f"last_batch_policy={self._policy.name} and last_batch_padded="
                    f"{self._padded} have no effect without size= or reader_name=: the epoch "
                    "ends when the pipeline raises StopIteration",
                    UserWarning,
                    stacklevel=4,
                )
            self._policy, self._padded = LastBatchPolicy.FILL, False
        else:
            warnings.warn(
                "size= without reader_name= is the legacy mode: give reader_name= and leave "
                "size and last_batch_padded unset where possible, or some samples may be "
                "missed or duplicated at epoch ends",
                UserWarning,
                stacklevel=4,
            )
        return size

    def _init_from_reader(self, reader_name: str) -> None:
        metas = []
        for index, pipe in enumerate(self._pipes):
            try:
                metas.append(pipe.reader_meta(reader_name))
            except (KeyError, ValueError, RuntimeError) as exc:
                raise RuntimeError(
                    f"reader_name={reader_name!r}: pipeline {index} has no reader of that name "
                    f"({exc})"
                ) from exc

        def same(key: str, all_or_none: bool = False) -> int:
            values = [int(meta[key]) for meta in metas]
            ok = (all(values) or not any(values)) if all_or_none else len(set(values)) == 1
            if not ok:
                raise IteratorError(
                    f"reader {reader_name!r} should have the same {key} in all the pipelines, "
                    f"got {values}"
                )
            return values[0]

        self._size_no_pad = same("epoch_size")
        self._num_shards = same("number_of_shards")
        self._padded = bool(same("pad_last_batch", all_or_none=True))
        self._stick_to_shard = bool(same("stick_to_shard", all_or_none=True))
        self._shards_id = np.array([int(meta["shard_id"]) for meta in metas], dtype=np.int64)
        if self._policy is LastBatchPolicy.DROP:
            self._size = self._size_no_pad // self._num_shards
        elif self._padded:
            self._size = int(metas[0]["epoch_size_padded"]) // self._num_shards
        else:
            largest = math.ceil(self._size_no_pad / self._num_shards)
            self._size = math.ceil(largest / self.batch_size) * self.batch_size
        # Per shard slot: samples of the current epoch already read ahead, and the shard size
        # read in this epoch (shards have different sizes, and they rotate every epoch).
        self._counter_per_gpu = np.zeros(self._num_shards, dtype=np.int64)
        self._shard_sizes_per_gpu = shard_sizes(self._size_no_pad, self._num_shards)
        self._shard_sizes_initial = self._shard_sizes_per_gpu.copy()

    # ---------------------------------------------------------------- framework hooks

    def _convert(self, batch: Any, name: str, pipe_index: int) -> Any:
        """Convert one pipeline output (a TensorList) to the framework's type."""
        raise NotImplementedError(f"{type(self).__name__} must implement _convert()")

    def _trim(self, value: Any, count: int) -> Any:
        """The first ``count`` samples of a converted output (PARTIAL policy)."""
        return value[:count]

    def _assemble(self, batches: list[dict[str, Any]]) -> Any:
        """Combine the per-pipeline dicts into what ``next()`` returns (default: the list)."""
        return batches

    def _dense(self, batch: Any, name: str, pipe_index: int) -> Any:
        """``batch.as_tensor()``, or a clear error when the batch is ragged."""
        if not batch.is_dense_tensor():
            shapes = list(dict.fromkeys(batch.shape()))
            shown = ", ".join(map(str, shapes[:4])) + (", ..." if len(shapes) > 4 else "")
            raise RuntimeError(
                f"output {name!r} of pipeline {pipe_index} is ragged (sample shapes {shown}): "
                f"{type(self).__name__} returns one dense {self.framework} array per output. "
                f"Pad or resize the samples to one shape in the pipeline (e.g. fn.pad), or "
                f"{self.ragged_hint}"
            )
        return batch.as_tensor()

    # ---------------------------------------------------------------- iteration

    def __iter__(self) -> BaseIterator:
        if self._consumed:
            self.reset()
        return self

    def __next__(self) -> Any:
        if self._first_batch is not None:
            batch, self._first_batch = self._first_batch, None
        else:
            batch = self._produce()
        self._consumed = True
        return batch

    def next(self) -> Any:
        """The next batch (same as ``next(iterator)``)."""
        return self.__next__()

    def _produce(self) -> Any:
        outputs = self._share()
        batches = [self._convert_pipeline(index, outs) for index, outs in enumerate(outputs)]
        self._schedule(release=True)
        self._advance()
        keep = self._samples_to_keep()
        if keep is not None:
            # zip() stops at len(keep): in legacy PARTIAL mode the trailing pipelines are dropped.
            batches = [
                b if n >= self.batch_size else {k: self._trim(v, n) for k, v in b.items()}
                for b, n in zip(batches, keep, strict=False)
            ]
        return self._assemble(batches)

    def _convert_pipeline(self, pipe_index: int, outputs: Sequence[Any]) -> dict[str, Any]:
        names = self.output_map
        if len(names) != len(outputs):
            # DALI's exception types: KeyError for too many names, IndexError for too few.
            error = KeyError if len(names) > len(outputs) else IndexError
            raise error(
                f"output_map has {len(names)} names {names} but pipeline {pipe_index} has "
                f"{len(outputs)} outputs: give one name per output"
            )
        pairs = zip(names, outputs, strict=True)
        return {name: self._convert(out, name, pipe_index) for name, out in pairs}

    def _share(self) -> list[Sequence[Any]]:
        if not self._ever_scheduled:
            self._schedule(release=False)
        if 0 < self._size <= self._counter:
            self._end_epoch()
        try:
            outputs = [tuple(pipe.share_outputs()) for pipe in self._pipes]
        except StopIteration:
            if self._size < 0 and self._auto_reset:
                self.reset()
            raise
        if self._reader_name is not None or self._size > 0:
            for index, outs in enumerate(outputs):
                for name, out in zip(self.output_map, outs, strict=False):
                    if len(out) != self.batch_size:
                        raise IteratorError(
                            f"output {name!r} of pipeline {index} has {len(out)} samples but "
                            f"batch_size is {self.batch_size}: variable batch sizes are not "
                            "supported with reader_name= or size= (leave both unset)"
                        )
        return outputs

    def _schedule(self, release: bool) -> None:
        self._ever_scheduled = True
        for pipe in self._pipes:
            if release:
                pipe.release_outputs()
            pipe.schedule_run()

    def _end_epoch(self) -> None:
        if self._auto_reset:
            self.reset()
        raise StopIteration

    def _advance(self, dry_run: bool = False, end_epoch: bool = True) -> bool:
        """Count the batch just read; with DROP, tell (and act on) whether it overflows."""
        should_end = False
        if self._reader_name is not None:
            counter = self._counter + self.batch_size
            if self._policy is LastBatchPolicy.DROP:
                should_end = bool(
                    np.any(self._counter_per_gpu + counter > self._shard_sizes_per_gpu)
                )
        else:
            counter = self._counter + len(self._pipes) * self.batch_size
            if self._policy is LastBatchPolicy.DROP:
                should_end = counter > self._size
        if not dry_run:
            self._counter = counter
            if should_end and end_epoch:
                self._end_epoch()
        return should_end

    def _samples_to_keep(self) -> list[int] | None:
        """PARTIAL: how many samples of each pipeline's batch belong to this epoch."""
        if self._policy is not LastBatchPolicy.PARTIAL:
            return None
        bs = self.batch_size
        if self._reader_name is not None:
            left = bs - (self._counter - self._shard_sizes_initial[self._shards_id])
            return [max(0, int(n)) for n in left] if np.any(left < bs) else None
        if self._size <= 0 or self._counter <= self._size:
            return None
        wanted = len(self._pipes) * bs - (self._counter - self._size)
        full, rest = divmod(wanted, bs)
        return [bs] * full + ([rest] if rest else [])

    # ---------------------------------------------------------------- epochs

    def reset(self) -> None:
        """Start the next epoch; ignored (with a warning) in the middle of an epoch."""
        if self._policy is LastBatchPolicy.DROP:
            # A user who read exactly len() batches has not yet pulled the incomplete tail
            # batch out of the pipelines: drain and drop it before starting the next epoch.
            ended = 0 < self._size <= self._counter
            if self._advance(dry_run=True) and not ended:
                self._share()
                self._schedule(release=True)
                self._advance(end_epoch=False)
        if not (self._counter >= self._size or self._size < 0):
            warnings.warn(
                f"reset() ignored: the epoch is not finished ({self._counter} of {self._size} "
                "samples read); iterators reset only at the end of an epoch",
                EpochNotFinishedWarning,
                stacklevel=2,
            )
            return
        self._next_epoch_counters()
        for pipe in self._pipes:
            pipe.reset()
            if pipe.empty():
                pipe.schedule_run()
                self._ever_scheduled = True
        self._consumed = False

    def _next_epoch_counters(self) -> None:
        fill_carry = self._policy is LastBatchPolicy.FILL and not self._padded
        if not fill_carry:
            self._counter = 0
        elif self._reader_name is None:
            self._counter %= self._size
        else:
            # Samples of the next epoch each shard slot has already read: the epoch started at
            # min(read-ahead), every slot read the same number of samples since.
            self._counter -= int(self._counter_per_gpu.min())
            self._counter_per_gpu = (
                self._counter_per_gpu + self._counter - self._shard_sizes_per_gpu
            )
            self._counter = int(self._counter_per_gpu.min())
        if self._reader_name is None:
            return
        if not self._stick_to_shard:
            self._shards_id = (self._shards_id + 1) % self._num_shards
        if not fill_carry:
            return
        if not self._stick_to_shard:
            self._shard_sizes_per_gpu = np.roll(self._shard_sizes_per_gpu, 1)
        still_to_read = int((self._shard_sizes_per_gpu - self._counter_per_gpu).max())
        self._size = math.ceil(still_to_read / self.batch_size) * self.batch_size
        if self._size == 0:
            # The read-ahead covered the whole next epoch: skip it.
            self._counter_per_gpu[:] = 0
            self._counter = 0
            self._shard_sizes_per_gpu = np.roll(self._shard_sizes_per_gpu, 1)
            largest = int(self._shard_sizes_per_gpu.max())
            self._size = math.ceil(largest / self.batch_size) * self.batch_size

    # ---------------------------------------------------------------- queries

    @property
    def size(self) -> int:
        """Samples in the current epoch (per shard with ``reader_name``), ``-1`` if unknown."""
        return self._size

    def __len__(self) -> int:
        if self._size < 0:
            return 0
        per_batch = self.batch_size * (1 if self._reader_name is not None else len(self._pipes))
        if self._policy is LastBatchPolicy.DROP:
            return self._size // per_batch
        return math.ceil(self._size / per_batch)


class TaggedOutputs:
    """Mixin for a ragged iterator: ``output_types``, one tag per output, after ``reader_name``.

    Put it before the iterator class (``class RaggedIterator(TaggedOutputs, GenericIterator)``)
    and list the tags in :attr:`TAGS`, the dense one first; the arguments after
    ``output_types`` are the iterator's own, in its order from ``auto_reset`` on.
    """

    #: The accepted tags; the first one is what untagged outputs (``output_types=None``) get.
    TAGS: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        pipelines: Any,
        output_map: Sequence[str],
        size: int = -1,
        reader_name: str | None = None,
        output_types: Sequence[str] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        self._output_types = check_output_types(output_types, output_map, self.TAGS)
        super().__init__(pipelines, output_map, size, reader_name, *args, **kwargs)

    def _tag(self, name: str) -> str:
        """The tag of output ``name``."""
        return self.TAGS[0] if self._output_types is None else self._output_types[name]
