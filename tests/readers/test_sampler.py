"""Tests of the pure sample-order logic."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.readers.sampler import (
    LIST_SHUFFLE_SEED,
    Sampler,
    SamplerConfig,
    batches_per_epoch,
    epoch_size_padded,
    list_permutation,
    shard_bounds,
)


def stream(n: int, s: int, k: int, bs: int, batches: int, **kw: object) -> list[list[int]]:
    sampler = Sampler(SamplerConfig(num_samples=n, batch_size=bs, num_shards=s, shard_id=k, **kw))
    return [sampler.next_batch().indices for _ in range(batches)]


def parse(text: str) -> list[list[int]]:
    """``"00,01 | 02,02"`` -> ``[[0, 1], [2, 2]]`` (the tables' notation)."""
    return [[int(t) for t in batch.split(",")] for batch in text.split("|")]


@pytest.mark.parametrize(
    ("n", "s", "expected"),
    [
        (10, 3, [(0, 3), (3, 6), (6, 10)]),
        (10, 4, [(0, 2), (2, 5), (5, 7), (7, 10)]),
        (7, 2, [(0, 3), (3, 7)]),
        (5, 5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]),
    ],
)
def test_shard_bounds_spec_examples(n: int, s: int, expected: list[tuple[int, int]]) -> None:
    assert [shard_bounds(n, s, k) for k in range(s)] == expected


# DALI's observed tables (also run through fn.readers.file in test_file.py).
# N=10, S=3, batch 2, no padding: (shard_id, stick_to_shard, batches).
STREAM_TABLE = [
    (0, False, "00,01 | 02,03 | 04,05 | 06,07 | 08,09 | 00,01"),
    (1, False, "03,04 | 05,06 | 07,08 | 09,00 | 01,02"),
    (2, False, "06,07 | 08,09 | 00,01 | 02,03"),
    (0, True, "00,01 | 02,00 | 01,02 | 00,01"),
    (1, True, "03,04 | 05,03 | 04,05"),
    (2, True, "06,07 | 08,09 | 06,07"),
]
# N=10 with pad_last_batch: (num_shards, shard_id, batch size, stick_to_shard, batches).
PAD_TABLE = [
    (3, 0, 2, False, "00,01 | 02,02 | 03,04 | 05,05 | 06,07 | 08,09 | 00,01 | 02,02"),
    (3, 2, 2, False, "06,07 | 08,09 | 00,01 | 02,02"),
    (3, 0, 4, False, "00,01,02,02 | 03,04,05,05 | 06,07,08,09"),
    (4, 0, 4, False, "00,01,01,01 | 02,03,04,04 | 05,06,06,06 | 07,08,09,09"),
    (4, 0, 2, False, "00,01 | 01,01 | 02,03 | 04,04 | 05,06 | 06,06"),
    (4, 1, 2, False, "02,03 | 04,04 | 05,06 | 06,06 | 07,08 | 09,09"),
    (3, 0, 2, True, "00,01 | 02,02 | 00,01 | 02,02"),
    (3, 1, 2, True, "03,04 | 05,05 | 03,04 | 05,05"),
    (3, 2, 2, True, "06,07 | 08,09 | 06,07 | 08,09"),
    (1, 0, 4, False, "00,01,02,03 | 04,05,06,07 | 08,09,09,09 | 00,01,02,03"),
]
# DALI's iterator tables at the reader: N=7 files "1".."7", bs=2, one pipeline per shard:
# (num_shards, shard_id, pad_last_batch, batches of file names).
SEVEN_TABLE = [
    (1, 0, True, "1,2 | 3,4 | 5,6 | 7,7 | 1,2 | 3,4 | 5,6 | 7,7"),
    (1, 0, False, "1,2 | 3,4 | 5,6 | 7,1 | 2,3 | 4,5 | 6,7 | 1,2"),
    (2, 0, True, "1,2 | 3,3 | 4,5 | 6,7 | 1,2 | 3,3 | 4,5 | 6,7"),
    (2, 1, True, "4,5 | 6,7 | 1,2 | 3,3 | 4,5 | 6,7 | 1,2 | 3,3"),
    (2, 0, False, "1,2 | 3,4 | 5,6 | 7,1 | 2,3 | 4,5 | 6,7"),
    (2, 1, False, "4,5 | 6,7 | 1,2 | 3,4 | 5,6 | 7,1 | 2,3"),
]


@pytest.mark.parametrize(("k", "stick", "expected"), STREAM_TABLE)
def test_cyclic_stream_and_stick_to_shard(k: int, stick: bool, expected: str) -> None:
    want = parse(expected)
    assert stream(10, 3, k, 2, len(want), stick_to_shard=stick) == want


@pytest.mark.parametrize(("s", "k", "bs", "stick", "expected"), PAD_TABLE)
def test_pad_last_batch_table(s: int, k: int, bs: int, stick: bool, expected: str) -> None:
    want = parse(expected)
    got = stream(10, s, k, bs, len(want), pad_last_batch=True, stick_to_shard=stick)
    assert got == want


@pytest.mark.parametrize(("s", "k", "pad", "expected"), SEVEN_TABLE)
def test_seven_files_reader_stream(s: int, k: int, pad: bool, expected: str) -> None:
    want = [[v - 1 for v in batch] for batch in parse(expected)]
    assert stream(7, s, k, 2, len(want), pad_last_batch=pad) == want


@pytest.mark.parametrize(
    ("n", "s", "pad", "want"),
    [(10, 3, True, 12), (10, 1, True, 10), (10, 4, True, 12), (10, 3, False, 10), (7, 2, True, 8)],
)
def test_epoch_size_padded(n: int, s: int, pad: bool, want: int) -> None:
    assert epoch_size_padded(n, s, pad) == want


def test_fixed_list_permutation_independent_of_op_seed() -> None:
    perm = list_permutation(10).tolist()
    assert sorted(perm) == list(range(10))
    assert perm != list(range(10))
    for seed in (0, 1, 12345):
        flat = [
            i
            for b in stream(10, 1, 0, 5, 2, random_shuffle=True, initial_fill=1, seed=seed)
            for i in b
        ]
        assert flat == perm
    # Sharding applies to the permuted list: contiguous ranges of it.
    assert stream(10, 2, 0, 5, 1, random_shuffle=True, initial_fill=1)[0] == perm[:5]
    assert stream(10, 2, 1, 5, 1, random_shuffle=True, initial_fill=1)[0] == perm[5:]


def test_shuffle_buffer_depends_on_seed() -> None:
    a = stream(10, 1, 0, 5, 6, random_shuffle=True, initial_fill=4, seed=1)
    b = stream(10, 1, 0, 5, 6, random_shuffle=True, initial_fill=4, seed=2)
    assert a == stream(10, 1, 0, 5, 6, random_shuffle=True, initial_fill=4, seed=1)
    assert a != b


def test_shuffle_after_epoch_reshuffles_globally_every_epoch() -> None:
    n, s = 10, 3
    samplers = [
        Sampler(
            SamplerConfig(
                num_samples=n, batch_size=2, num_shards=s, shard_id=k, shuffle_after_epoch=True
            )
        )
        for k in range(s)
    ]
    epochs = [[sm.epoch_samples(e) for sm in samplers] for e in range(4)]
    orders = []
    for per_shard in epochs:
        flat = [i for shard in per_shard for i in shard]
        assert sorted(flat) == list(range(n))  # disjoint shards covering the data set
        assert [len(x) for x in per_shard] == [3, 3, 4]  # shard index never rotates
        orders.append(flat)
    assert orders[0] != list(range(n))  # the first epoch is shuffled already
    assert len({tuple(o) for o in orders}) == 4
    # Cumulative: each epoch permutes the previous epoch's order.
    prev = list(range(n))
    for e, order in enumerate(orders):
        perm = list_permutation(n, LIST_SHUFFLE_SEED + e + 1)
        assert order == [prev[p] for p in perm]
        prev = order


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_shards": 3, "shard_id": 3}, "num_shards needs to be greater than shard_id"),
        ({"shard_id": -1}, "shard_id must not be negative"),
        ({"num_shards": 0}, "num_shards must be at least 1"),
        (
            {"num_shards": 11},
            "input samples: 10, needs to be at least equal to the requested number of shards: 11",
        ),
        ({"batch_size": 0}, "batch_size"),
        ({"initial_fill": 0}, "initial_fill"),
        ({"shuffle_after_epoch": True, "random_shuffle": True}, "random_shuffle"),
        ({"shuffle_after_epoch": True, "stick_to_shard": True}, "stick_to_shard"),
    ],
)
def test_invalid_config(kwargs: dict[str, object], match: str) -> None:
    base: dict[str, object] = {"num_samples": 10, "batch_size": 2}
    with pytest.raises(ValueError, match=match):
        SamplerConfig(**(base | kwargs))


def test_more_shards_than_samples_is_also_a_runtime_error() -> None:
    """DALI reports it as a RuntimeError when the pipeline is built; both catch it."""
    with pytest.raises(RuntimeError, match="needs to be at least equal"):
        SamplerConfig(num_samples=2, batch_size=1, num_shards=3)


def test_batches_per_epoch() -> None:
    cfg = SamplerConfig(num_samples=10, batch_size=4, num_shards=3, pad_last_batch=True)
    assert batches_per_epoch(cfg) == 1
    with pytest.raises(ValueError, match="pad_last_batch"):
        batches_per_epoch(SamplerConfig(num_samples=10, batch_size=4))


# -- properties -------------------------------------------------------------------------------

configs = (
    st.integers(1, 30)
    .flatmap(
        lambda n: st.builds(
            dict,
            num_samples=st.just(n),
            num_shards=st.integers(1, min(n, 5)),
            batch_size=st.integers(1, 7),
            pad_last_batch=st.booleans(),
            stick_to_shard=st.booleans(),
            random_shuffle=st.booleans(),
            initial_fill=st.integers(1, 40),
            shuffle_after_epoch=st.booleans(),
            seed=st.integers(0, 2**32 - 1),
        )
    )
    .map(
        lambda d: (
            d
            | (
                {"random_shuffle": False, "stick_to_shard": False}
                if d["shuffle_after_epoch"]
                else {}
            )
        )
    )
)

EPOCHS = 3


def run_epochs(cfg: SamplerConfig) -> tuple[Sampler, dict[int, list[tuple[int, bool]]]]:
    """Emit batches until EPOCHS whole epochs are out; items grouped by epoch."""
    sampler = Sampler(cfg)
    per_epoch: dict[int, list[tuple[int, bool]]] = {}
    last_epoch = -1
    while last_epoch <= EPOCHS:
        plan = sampler.next_batch()
        assert len(plan.indices) == cfg.batch_size
        for idx, ep, pad in zip(plan.indices, plan.epochs, plan.padded, strict=True):
            assert ep >= last_epoch  # epochs never interleave
            last_epoch = ep
            per_epoch.setdefault(ep, []).append((idx, pad))
    return sampler, per_epoch


@settings(max_examples=150, deadline=None)
@given(configs)
def test_every_epoch_is_a_permutation_of_its_shard(params: dict[str, int]) -> None:
    n, s = params["num_samples"], params["num_shards"]
    shard_items: dict[int, list[list[int]]] = {}
    for k in range(s):
        cfg = SamplerConfig(shard_id=k, **params)
        sampler, per_epoch = run_epochs(cfg)
        shard_items[k] = []
        for e in range(EPOCHS):
            items = per_epoch[e]
            real = [i for i, pad in items if not pad]
            assert sorted(real) == sorted(sampler.epoch_samples(e))
            if cfg.pad_last_batch:
                padded = [i for i, pad in items if pad]
                assert all(p == real[-1] for p in padded)
                want = math.ceil(math.ceil(n / s) / cfg.batch_size) * cfg.batch_size
                assert len(items) == want
                assert not any(pad for _, pad in items[: len(real)])
            else:
                assert len(real) == len(items)
            shard_items[k].append(real)
    # In every epoch the shards are disjoint and together cover the data set exactly once.
    for e in range(EPOCHS):
        together = sorted(i for k in range(s) for i in shard_items[k][e])
        assert together == list(range(n))


@settings(max_examples=60, deadline=None)
@given(configs, st.integers(0, 12))
def test_same_seed_same_order_and_checkpoint_resume(params: dict[str, int], cut: int) -> None:
    cfg = SamplerConfig(**params)
    a, b = Sampler(cfg), Sampler(cfg)
    first = [a.next_batch().indices for _ in range(cut)]
    assert first == [b.next_batch().indices for _ in range(cut)]
    state = json.loads(json.dumps(a.state_dict()))
    resumed = Sampler(SamplerConfig(**(params | {"seed": params["seed"] + 1})))
    resumed.load_state_dict(state)  # the seed may differ: the random state is restored
    for _ in range(10):
        want = a.next_batch()
        got = resumed.next_batch()
        assert (got.indices, got.epochs, got.padded) == (want.indices, want.epochs, want.padded)
    # the resumed stream is the saved one: its states are the original's, seed included
    assert resumed.state_dict() == a.state_dict()


def general_batch(sampler: Sampler) -> tuple[list[int], list[int], list[bool]]:
    """The next batch by the general slot-by-slot algorithm, whatever the buffer size."""
    if not sampler._filled:
        sampler._fill()
    plan = sampler._next_slot_by_slot()
    return plan.indices, plan.epochs, plan.padded


in_order_configs = st.integers(1, 30).flatmap(
    lambda n: st.builds(
        dict,
        num_samples=st.just(n),
        num_shards=st.integers(1, min(n, 5)),
        shard_id=st.integers(0, 4),
        batch_size=st.integers(1, 70),
        pad_last_batch=st.booleans(),
        stick_to_shard=st.booleans(),
        shuffle_after_epoch=st.booleans(),
    ).map(
        lambda d: (
            d
            | {"shard_id": d["shard_id"] % d["num_shards"]}
            | ({"stick_to_shard": False} if d["shuffle_after_epoch"] else {})
        )
    )
)


@settings(max_examples=150, deadline=None)
@given(in_order_configs, st.integers(0, 8))
def test_in_order_runs_match_the_general_algorithm(params: dict[str, int], cut: int) -> None:
    """Without a shuffle buffer, batches are planned a run at a time: the same batches and
    the same state after each one as one slot at a time, and states carry over both ways."""
    fast, general = Sampler(SamplerConfig(**params)), Sampler(SamplerConfig(**params))
    for i in range(cut + 8):
        plan = fast.next_batch()
        assert (plan.indices, plan.epochs, plan.padded) == general_batch(general)
        assert fast.state_dict() == general.state_dict()
        if i == cut:  # swap the roles through checkpoints
            fast_state, general_state = fast.state_dict(), general.state_dict()
            fast, general = Sampler(SamplerConfig(**params)), Sampler(SamplerConfig(**params))
            fast.load_state_dict(general_state)
            general.load_state_dict(fast_state)


def test_load_state_rejects_other_config_and_garbage() -> None:
    cfg = SamplerConfig(num_samples=10, batch_size=2, num_shards=2)
    state = Sampler(cfg).state_dict()
    other = Sampler(SamplerConfig(num_samples=10, batch_size=2, num_shards=2, shard_id=1))
    with pytest.raises(ValueError, match=r"shard_id=0.*shard_id=1"):
        other.load_state_dict(state)
    with pytest.raises(ValueError, match="version"):
        Sampler(cfg).load_state_dict({"epoch": 3})
    broken = dict(state)
    del broken["current"]
    with pytest.raises(ValueError, match="malformed reader state"):
        Sampler(cfg).load_state_dict(broken)
