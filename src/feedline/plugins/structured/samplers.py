"""Sampler-driven inputs: a sampler picks the indices of every (total) batch.

* :class:`SamplerBase`: the sampler contract. ``get_next_batch_indices()`` returns the indices of
  the whole batch across all shards; an epoch-based sampler raises ``StopIteration`` at the end of
  an epoch and starts the next one on ``reset()``.
* :class:`SequenceSampler`: batch slot ``i`` walks through whole sequences, so slot ``i`` of
  consecutive batches holds consecutive frames of one sequence (temporal models).
* :class:`SamplerInputCallable`: a per-sample callable over a sampler; the indices are drawn up
  front into a table, so the callable stays stateless and can run in worker processes.
* :class:`SamplerInputIterable`: a per-batch iterable over a sampler (one worker, keeps state).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from feedline.plugins.structured.inputs import CallableBase, DataProvider, IterableBase
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.types import SampleInfo

__all__ = [
    "SamplerBase",
    "SamplerInputCallable",
    "SamplerInputIterable",
    "SamplerSetupError",
    "SequenceSampler",
]


class SamplerSetupError(ValueError, AssertionError):
    """A sampler set up with arguments that cannot work (an ``AssertionError`` too, as upstream)."""


class SamplerBase(ABC):
    """Chooses which samples form each batch."""

    @abstractmethod
    def get_next_batch_indices(self) -> Sequence[int]:
        """The sample indices of the next total batch (all shards together).

        Raises:
            StopIteration: an epoch-based sampler reached the end of its epoch.
        """

    @property
    @abstractmethod
    def is_epoch_based(self) -> bool:
        """Whether the sampler has epochs (ends them with ``StopIteration``)."""

    @abstractmethod
    def reset(self) -> None:
        """Start the next epoch."""

    @property
    @abstractmethod
    def length(self) -> int | None:
        """Batches per epoch, or ``None`` when the sampler has no epochs."""


class SequenceSampler(SamplerBase):
    """Consecutive frames of sequences in each batch slot.

    Sequence ``j`` holds the samples that follow sequence ``j - 1`` in the data set, in order.
    Every cycle draws one order of all sequences (from ``seed`` and the cycle number, the same for
    every slot); slot ``i`` takes every ``total_batch_size``-th sequence of it, starting at ``i``,
    and walks through their frames. Slots start new cycles independently, so there are no epochs.

    Args:
        total_batch_size: the batch size over all shards.
        sequence_lengths: the length of every sequence (``sequence_lenghts``, upstream's
            spelling, is accepted too).
        seed: seed of the sequence orders.
        randomize: shuffle the sequences every cycle (else keep their order).
    """

    def __init__(
        self,
        total_batch_size: int,
        sequence_lengths: Sequence[int] | None = None,
        seed: int = 0,
        randomize: bool = True,
        *,
        sequence_lenghts: Sequence[int] | None = None,
    ) -> None:
        if (sequence_lengths is None) == (sequence_lenghts is None):
            raise TypeError("SequenceSampler: give sequence_lengths (exactly once)")
        lengths = [
            int(n) for n in (sequence_lengths if sequence_lengths is not None else sequence_lenghts)
        ]  # type: ignore[union-attr]
        if total_batch_size < 1:
            raise ValueError(
                f"SequenceSampler: total_batch_size must be >= 1, got {total_batch_size}"
            )
        if len(lengths) < total_batch_size:
            raise SamplerSetupError(
                "SequenceSampler: The number of sequences must be at least the total batch size. "
                f"({len(lengths)} sequences, total batch size {total_batch_size})"
            )
        if any(n < 1 for n in lengths):
            raise ValueError("SequenceSampler: every sequence needs at least one sample")
        self._batch = int(total_batch_size)
        self._starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int)
        self._lengths = lengths
        self._seed = seed
        self._randomize = bool(randomize)
        self._slots: list[Iterator[int]] | None = None

    @property
    def length(self) -> None:
        """``None``: the sampler has no epochs."""
        return None

    @property
    def is_epoch_based(self) -> bool:
        """``False``: slots start new cycles at different batches."""
        return False

    def reset(self) -> None:
        """Not supported: the sampler has no epochs.

        Raises:
            RuntimeError: always.
        """
        raise RuntimeError(
            "SequencesSampler is not epoch-based (SequenceSampler has no epochs): reset() "
            "cannot be called"
        )

    def get_next_batch_indices(self) -> list[int]:
        """One index per slot, the frame after the slot's previous one."""
        if self._slots is None:
            self._slots = [self._walk(slot) for slot in range(self._batch)]
        return [next(slot) for slot in self._slots]

    def _walk(self, slot: int) -> Iterator[int]:
        rng = np.random.default_rng(self._seed)
        count = len(self._lengths)
        while True:
            order = rng.permutation(count) if self._randomize else np.arange(count)
            for sequence in order[slot :: self._batch]:
                start = int(self._starts[sequence])
                yield from range(start, start + self._lengths[sequence])


def _check_shards(owner: str, shard_id: int, num_shards: int) -> None:
    if num_shards < 1 or not 0 <= shard_id < num_shards:
        raise ValueError(f"{owner}: shard_id {shard_id} must lie in [0, num_shards={num_shards})")


def _local_batch_size(owner: str, total: int, num_shards: int) -> int:
    if total % num_shards:
        raise ValueError(
            f"{owner}: the total batch size {total} does not divide into {num_shards} shards"
        )
    return total // num_shards


def _input_blueprint(provider: DataProvider) -> SampleDataGroup:
    blueprint = provider.sample_data_structure.get_empty_like_self()
    blueprint.set_apply_mapping(False)
    return blueprint


class SamplerInputCallable(CallableBase):
    """A per-sample input whose batches a sampler chooses, drawn into a table up front.

    The table holds ``max_num_iterations + pre_fetch_queue_length`` batches, split into epochs at
    every ``StopIteration`` of the sampler (which is then reset). Reading past it raises.

    Args:
        data_provider: the data set.
        sampler: chooses the batches.
        max_num_iterations: the most batches the pipeline will be asked for.
        pre_fetch_queue_length: the pipeline's prefetch depth (batches read ahead).
        shard_id: this shard, in ``[0, num_shards)``.
        num_shards: how many shards split each total batch.
    """

    def __init__(
        self,
        data_provider: DataProvider,
        sampler: SamplerBase,
        max_num_iterations: int,
        pre_fetch_queue_length: int,
        shard_id: int = 0,
        num_shards: int = 1,
    ) -> None:
        _check_shards("SamplerInputCallable", shard_id, num_shards)
        self._provider = data_provider
        self._shard_id = shard_id
        self._capacity = int(max_num_iterations) + int(pre_fetch_queue_length)
        self._epochs: list[list[Sequence[int]]] = [[]]
        drawn = 0
        while drawn < self._capacity:
            try:
                self._epochs[-1].append(list(sampler.get_next_batch_indices()))
                drawn += 1
            except StopIteration:
                self._epochs.append([])
                sampler.reset()
        total = len(self._epochs[0][0]) if self._epochs[0] else 0
        self._local = _local_batch_size("SamplerInputCallable", total, num_shards) or 1

    @property
    def used_sample_data_structure(self) -> SampleDataGroup:
        """The provider's blueprint (a copy) with mapping switched off."""
        return _input_blueprint(self._provider)

    @property
    def length(self) -> int:
        """Batches in the first epoch of the table."""
        return len(self._epochs[0])

    def __call__(self, sample_info: SampleInfo) -> tuple[Any, ...]:
        if sample_info.epoch_idx >= len(self._epochs):
            raise RuntimeError(
                f"SamplerInputCallable: epoch {sample_info.epoch_idx} lies past the "
                f"{self._capacity} batches drawn at construction (max_num_iterations + "
                "pre_fetch_queue_length)"
            )
        epoch = self._epochs[sample_info.epoch_idx]
        batch_idx = sample_info.idx_in_epoch // self._local
        if batch_idx >= len(epoch):
            raise StopIteration
        index = epoch[batch_idx][sample_info.idx_in_batch + self._shard_id * self._local]
        return self._provider.get_data(int(index)).get_data()


class SamplerInputIterable(IterableBase):
    """A per-batch input whose batches a sampler chooses; this shard takes its slice of each.

    Every ``iter()`` after the first resets an epoch-based sampler (starts its next epoch).

    Args:
        data_provider: the data set.
        sampler: chooses the batches.
        shard_id: this shard, in ``[0, num_shards)``.
        num_shards: how many shards split each total batch.
    """

    def __init__(
        self,
        data_provider: DataProvider,
        sampler: SamplerBase,
        shard_id: int = 0,
        num_shards: int = 1,
    ) -> None:
        _check_shards("SamplerInputIterable", shard_id, num_shards)
        self._provider = data_provider
        self._sampler = sampler
        self._shard_id = shard_id
        self._num_shards = num_shards
        self._started = False

    @property
    def used_sample_data_structure(self) -> SampleDataGroup:
        """The provider's blueprint (a copy) with mapping switched off."""
        return _input_blueprint(self._provider)

    @property
    def length(self) -> int | None:
        """The sampler's batches per epoch."""
        return self._sampler.length

    def __iter__(self) -> SamplerInputIterable:
        if self._started and self._sampler.is_epoch_based:
            self._sampler.reset()
        self._started = True
        return self

    def __next__(self) -> tuple[list[Any], ...]:
        indices = list(self._sampler.get_next_batch_indices())
        local = _local_batch_size("SamplerInputIterable", len(indices), self._num_shards)
        mine = indices[self._shard_id * local : (self._shard_id + 1) * local]
        samples = [self._provider.get_data(int(i)).get_data() for i in mine]
        return tuple(list(field) for field in zip(*samples, strict=True))
