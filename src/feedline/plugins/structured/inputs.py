"""The input side of a structured pipeline: what feeds samples, and who tells their format.

* :class:`CallableBase`: called once per sample with a :class:`~feedline.types.SampleInfo`,
  returns the flat tuple of one sample (``group.get_data()``); stateless and picklable, so it may
  run in worker processes. Raises ``StopIteration`` at the end of an epoch.
* :class:`IterableBase`: yields whole batches, one list of per-sample values per flat field.
* :class:`DataProvider`: loads one sample of a data set as a filled ``SampleDataGroup``.
* :class:`ShuffledShardedInputCallable`: a callable over a provider with per-epoch shuffling and
  sharding.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.types import SampleInfo

__all__ = ["CallableBase", "DataProvider", "IterableBase", "ShuffledShardedInputCallable"]


class CallableBase(ABC):
    """A per-sample input: ``callable(sample_info) -> tuple`` of the sample's flat values."""

    @property
    @abstractmethod
    def used_sample_data_structure(self) -> SampleDataGroup:
        """The blueprint of the samples returned (a fresh copy each time)."""

    @abstractmethod
    def __call__(self, sample_info: SampleInfo) -> tuple[Any, ...]:
        """The flat data of the sample ``sample_info`` describes; StopIteration past the epoch."""

    @property
    @abstractmethod
    def length(self) -> int | None:
        """Batches per epoch, or ``None`` when unknown."""


class IterableBase(ABC):
    """A per-batch input: iterating restarts the epoch; each item is the flat tuple of a batch
    (for every field, the list of its per-sample values)."""

    @property
    @abstractmethod
    def used_sample_data_structure(self) -> SampleDataGroup:
        """The blueprint of the samples returned (a fresh copy each time)."""

    @abstractmethod
    def __iter__(self) -> IterableBase:
        """Start (or restart) an epoch and return the iterator."""

    @abstractmethod
    def __next__(self) -> tuple[list[Any], ...]:
        """The next batch; StopIteration at the end of the epoch."""

    @property
    @abstractmethod
    def length(self) -> int | None:
        """Batches per epoch, or ``None`` when unknown."""


class DataProvider(ABC):
    """Loads samples of one data set for one use case."""

    @abstractmethod
    def get_data(self, sample_index: int) -> SampleDataGroup:
        """The filled sample number ``sample_index``."""

    @abstractmethod
    def get_number_of_samples(self) -> int:
        """How many samples the data set has."""

    @property
    @abstractmethod
    def sample_data_structure(self) -> SampleDataGroup:
        """The blueprint of the samples."""


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(
            f"ShuffledShardedInputCallable: {name} must be an int >= {minimum}, got {value!r}"
        )
    return int(value)


class ShuffledShardedInputCallable(CallableBase):
    """Samples of a :class:`DataProvider` in a per-epoch order, split into shards.

    Every epoch has one global order: a permutation drawn from ``(seed, epoch)`` (the identity
    without ``shuffle``), the same on every rank. Shard ``k`` of ``n`` takes the contiguous slice
    ``[k * N // n, (k + 1) * N // n)`` of the first ``(N // n) * n`` positions of that order, so
    shards never overlap; each epoch yields only full batches (``length`` of them).

    Args:
        data_provider: the data set.
        batch_size: samples per batch (per shard).
        shard_id: this shard, in ``[0, num_shards)``.
        num_shards: how many shards share the data.
        shuffle: draw a new order every epoch.
        seed: the seed of the orders.
    """

    def __init__(
        self,
        data_provider: DataProvider,
        batch_size: int,
        shard_id: int = 0,
        num_shards: int = 1,
        shuffle: bool = False,
        seed: int = 21,
    ) -> None:
        if not isinstance(data_provider, DataProvider):
            raise TypeError(
                "ShuffledShardedInputCallable: data_provider must be a DataProvider, got "
                f"{type(data_provider).__name__}"
            )
        self._provider = data_provider
        self._batch_size = _check_int("batch_size", batch_size, 1)
        self._num_shards = _check_int("num_shards", num_shards, 1)
        self._shard_id = _check_int("shard_id", shard_id, 0)
        if self._shard_id >= self._num_shards:
            raise ValueError(
                f"ShuffledShardedInputCallable: shard_id {shard_id} is not below num_shards "
                f"{num_shards}"
            )
        self._shuffle = bool(shuffle)
        self._seed = _check_int("seed", seed, 0)
        self._num_samples = int(data_provider.get_number_of_samples())
        self._shard_size = self._num_samples // self._num_shards
        self._per_epoch = (self._shard_size // self._batch_size) * self._batch_size
        self._order_epoch = -1
        self._order: np.ndarray | None = None

    @property
    def used_sample_data_structure(self) -> SampleDataGroup:
        """The provider's blueprint (a copy) with mapping switched off (it runs in the graph)."""
        blueprint = self._provider.sample_data_structure.get_empty_like_self()
        blueprint.set_apply_mapping(False)
        return blueprint

    @property
    def length(self) -> int:
        """Full batches per epoch on this shard."""
        return self._shard_size // self._batch_size

    def epoch_order(self, epoch_idx: int) -> np.ndarray:
        """The global sample order of epoch ``epoch_idx`` (identical on every shard)."""
        if self._order_epoch != epoch_idx or self._order is None:
            if self._shuffle:
                rng = np.random.default_rng([self._seed, epoch_idx])
                self._order = rng.permutation(self._num_samples)
            else:
                self._order = np.arange(self._num_samples)
            self._order_epoch = epoch_idx
        return self._order

    def shard_indices(self, epoch_idx: int) -> np.ndarray:
        """The sample indices this shard reads in epoch ``epoch_idx``, in order."""
        start = self._shard_id * self._shard_size
        return self.epoch_order(epoch_idx)[start : start + self._per_epoch]

    def __call__(self, sample_info: SampleInfo) -> tuple[Any, ...]:
        if sample_info.idx_in_epoch >= self._per_epoch:
            raise StopIteration
        index = self.shard_indices(sample_info.epoch_idx)[sample_info.idx_in_epoch]
        sample = self._provider.get_data(int(index))
        return sample.get_data()
