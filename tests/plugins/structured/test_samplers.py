"""Samplers and the sampler-driven inputs."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline.plugins.structured.samplers import (
    SamplerBase,
    SamplerInputCallable,
    SamplerInputIterable,
    SamplerSetupError,
    SequenceSampler,
)
from feedline.types import SampleInfo
from tests.plugins.structured.helpers import CountingProvider


@given(
    lengths=st.lists(st.integers(1, 6), min_size=2, max_size=8),
    batch=st.integers(1, 2),
    seed=st.integers(0, 100),
    steps=st.integers(1, 30),
)
def test_each_slot_walks_whole_sequences_in_order(
    lengths: list[int], batch: int, seed: int, steps: int
) -> None:
    sampler = SequenceSampler(batch, lengths, seed)
    starts = [sum(lengths[:i]) for i in range(len(lengths))]
    first_of = set(starts)
    batches = [sampler.get_next_batch_indices() for _ in range(steps)]
    for slot in range(batch):
        walk = [b[slot] for b in batches]
        assert walk[0] in first_of
        for previous, current in itertools.pairwise(walk):
            # Either the next frame of the same sequence, or the first frame of a sequence.
            assert (current == previous + 1 and current not in first_of) or current in first_of


def test_sequence_sampler_is_seeded_and_has_no_epochs() -> None:
    draw = [SequenceSampler(2, [3, 2, 4], 7).get_next_batch_indices() for _ in range(2)]
    assert draw[0] == draw[1]
    sampler = SequenceSampler(2, sequence_lenghts=[3, 2, 4], seed=7)
    assert sampler.length is None and not sampler.is_epoch_based
    with pytest.raises(RuntimeError, match="not epoch-based"):
        sampler.reset()
    with pytest.raises(SamplerSetupError, match="at least the total batch size"):
        SequenceSampler(3, [1, 1], 0)
    with pytest.raises(AssertionError):
        SequenceSampler(3, [1, 1], 0)


class _Epochs(SamplerBase):
    """Two batches of two per epoch; epoch ``e`` starts at index ``10 * e``."""

    def __init__(self) -> None:
        self.epoch, self.batch = 0, 0

    @property
    def is_epoch_based(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return 2

    def reset(self) -> None:
        self.epoch, self.batch = self.epoch + 1, 0

    def get_next_batch_indices(self) -> list[int]:
        if self.batch == 2:
            raise StopIteration
        self.batch += 1
        base = 10 * self.epoch + 2 * (self.batch - 1)
        return [base, base + 1]


def _info(epoch: int, idx_in_epoch: int, local: int) -> SampleInfo:
    return SampleInfo(idx_in_epoch, idx_in_epoch % local, idx_in_epoch // local, epoch)


def test_sampler_callable_reads_its_shard_from_the_drawn_table() -> None:
    provider = CountingProvider(40)
    shard1 = SamplerInputCallable(provider, _Epochs(), 4, 0, shard_id=1, num_shards=2)
    assert shard1.length == 2
    picked = [shard1(_info(e, i, 1))[0] for e in (0, 1) for i in range(2)]
    assert [int(p) for p in picked] == [1, 3, 11, 13]
    with pytest.raises(StopIteration):
        shard1(_info(0, 2, 1))
    with pytest.raises(RuntimeError, match="max_num_iterations"):
        shard1(_info(5, 0, 1))


def test_sampler_iterable_resets_on_every_later_iter() -> None:
    iterable = SamplerInputIterable(CountingProvider(40), _Epochs())
    epochs = []
    for _ in range(2):
        it = iter(iterable)
        epochs.append([[int(v) for v in next(it)[0]] for _ in range(2)])
        with pytest.raises(StopIteration):
            next(it)
    assert epochs == [[[0, 1], [2, 3]], [[10, 11], [12, 13]]]
    assert iterable.length == 2
    with pytest.raises(ValueError, match="shard_id"):
        SamplerInputIterable(CountingProvider(4), _Epochs(), shard_id=2, num_shards=2)
