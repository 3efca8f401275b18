"""Epoch accounting shared by every framework iterator, run through the NumPy iterator
on fake pipelines that emit DALI's reader streams."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.core.tensor import TensorListCPU
from feedline.plugins.iterator import (
    BaseIterator,
    EpochNotFinishedWarning,
    IteratorError,
    LastBatchPolicy,
    check_output_types,
)
from feedline.plugins.numpy import GenericIterator
from tests.plugins.fake_pipeline import FakePipeline, OneBatch, reader_stream
from tests.plugins.spec_tables import (
    BATCH,
    ONE_PIPELINE,
    TWO_PIPELINES,
    N,
    batch_values,
    parse_epoch,
)

POLICIES = list(LastBatchPolicy)


def readers(n: int, bs: int, shards: int, pipes: int, pad: bool, stick: bool = False) -> list:
    return [FakePipeline.reader(n, bs, shards, k, pad, stick) for k in range(pipes)]


def drain(it: Any) -> list:
    """next() until StopIteration."""
    batches = []
    while True:
        try:
            batches.append(next(it))
        except StopIteration:
            return batches


def run_epochs(it: Any, epochs: int, flow: str) -> list[tuple[int, list]]:
    """(len() at the epoch's start, batches) per epoch, driving the iterator as ``flow`` says."""
    result = []
    for _ in range(epochs):
        if flow == "for":
            it = iter(it)
            length = len(it)
            batches = list(it)
        else:
            length = len(it)
            batches = drain(it)
            if flow == "manual":
                it.reset()
        result.append((length, [batch_values(b) for b in batches]))
    return result


def ended_epoch_stream(it: Any) -> list[list[list[int]]]:
    return [batch_values(b) for b in drain(it)]


# ------------------------------------------------------------------------- DALI's tables


@pytest.mark.parametrize("flow", ["manual", "auto", "for"])
@pytest.mark.parametrize(("policy", "pad"), list(ONE_PIPELINE))
def test_one_pipeline_table(policy: str, pad: bool, flow: str) -> None:
    first_len, epochs = ONE_PIPELINE[(policy, pad)]
    it = GenericIterator(
        readers(N, BATCH, 1, 1, pad),
        ["data"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy[policy],
        auto_reset=flow == "auto",
    )
    got = run_epochs(it, len(epochs), flow)
    assert [batches for _, batches in got] == [parse_epoch(e) for e in epochs]
    assert got[0][0] == first_len
    assert [n for n, _ in got] == [len(parse_epoch(e)) for e in epochs]  # len() follows read-ahead


@pytest.mark.parametrize("flow", ["manual", "auto", "for"])
@pytest.mark.parametrize(("policy", "pad"), list(TWO_PIPELINES))
def test_two_pipelines_table(policy: str, pad: bool, flow: str) -> None:
    epochs = TWO_PIPELINES[(policy, pad)]
    it = GenericIterator(
        readers(N, BATCH, 2, 2, pad),
        ["data"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy[policy],
        auto_reset=flow == "auto",
    )
    got = run_epochs(it, len(epochs), flow)
    assert [batches for _, batches in got] == [parse_epoch(e) for e in epochs]
    assert [n for n, _ in got] == [len(parse_epoch(e)) for e in epochs]


@pytest.mark.parametrize(("policy", "pad"), list(ONE_PIPELINE))
def test_legacy_size_mode_gives_the_same_batches(policy: str, pad: bool) -> None:
    _, epochs = ONE_PIPELINE[(policy, pad)]
    with pytest.warns(UserWarning, match="reader_name"):
        it = GenericIterator(
            readers(N, BATCH, 1, 1, pad),
            ["data"],
            size=N,
            last_batch_padded=pad,
            last_batch_policy=LastBatchPolicy[policy],
        )
    got = run_epochs(it, len(epochs), "manual")
    assert [batches for _, batches in got] == [parse_epoch(e) for e in epochs]


def test_legacy_size_mode_partial_with_two_pipelines_cuts_the_global_count() -> None:
    # size=7 over 2 pipelines x bs 2: the 2nd batch overshoots by 1 -> pipeline 1 keeps 1 sample.
    with pytest.warns(UserWarning, match="legacy"):
        it = GenericIterator(
            readers(N, BATCH, 2, 2, pad=False),
            ["data"],
            size=N,
            last_batch_policy=LastBatchPolicy.PARTIAL,
        )
    assert len(it) == 2
    assert ended_epoch_stream(it) == [[[1, 2], [4, 5]], [[3, 4], [6]]]


def test_legacy_size_mode_partial_drops_whole_pipelines() -> None:
    # size=5 over 3 pipelines x bs 2: the 1st batch already holds 6 -> only the first 5 samples.
    with pytest.warns(UserWarning, match="legacy"):
        it = GenericIterator(
            readers(9, 2, 3, 3, pad=False),
            ["data"],
            size=5,
            last_batch_policy=LastBatchPolicy.PARTIAL,
        )
    assert ended_epoch_stream(it) == [[[1, 2], [4, 5], [7]]]


# ------------------------------------------------------------------------- invariants


@st.composite
def configs(draw: Any) -> dict:
    n = draw(st.integers(2, 13))
    shards = draw(st.integers(1, min(n, 4)))
    return {
        "n": n,
        "shards": shards,
        "pipes": draw(st.sampled_from(sorted({1, shards}))),
        "bs": draw(st.integers(1, 5)),
        "pad": draw(st.booleans()),
        "stick": draw(st.booleans()),
        "policy": draw(st.sampled_from(POLICIES)),
    }


def make(cfg: dict, **kwargs: Any) -> GenericIterator:
    pipes = readers(cfg["n"], cfg["bs"], cfg["shards"], cfg["pipes"], cfg["pad"], cfg["stick"])
    return GenericIterator(
        pipes, ["data"], reader_name="Reader", last_batch_policy=cfg["policy"], **kwargs
    )


@settings(max_examples=150, deadline=None)
@given(configs())
def test_first_len_follows_the_formulas(cfg: dict) -> None:
    n, s, bs = cfg["n"], cfg["shards"], cfg["bs"]
    if cfg["policy"] is LastBatchPolicy.DROP:
        size = n // s
    elif cfg["pad"]:
        size = math.ceil(n / s) * s // s
    else:
        size = math.ceil(math.ceil(n / s) / bs) * bs
    expected = size // bs if cfg["policy"] is LastBatchPolicy.DROP else math.ceil(size / bs)
    it = make(cfg, prepare_first_batch=False)
    assert it.size == size
    assert len(it) == expected


@settings(max_examples=150, deadline=None)
@given(configs())
def test_epochs_have_len_batches_and_respect_the_policy(cfg: dict) -> None:
    if cfg["policy"] is LastBatchPolicy.DROP and cfg["bs"] > cfg["n"] // cfg["shards"]:
        with pytest.raises(RuntimeError, match=r"no data in the pipeline.*PARTIAL"):
            make(cfg)
        return
    it = make(cfg)
    streams = [
        reader_stream(cfg["n"], cfg["shards"], k, cfg["bs"], cfg["pad"], cfg["stick"])
        for k in range(cfg["pipes"])
    ]
    read: list[list[int]] = [[] for _ in streams]
    for epoch in range(4):
        it = iter(it)
        length = len(it)
        batches = [batch_values(b) for b in it]
        assert len(batches) == length
        for batch in batches:
            for k, samples in enumerate(batch):
                read[k].extend(samples)
                if cfg["policy"] is not LastBatchPolicy.PARTIAL:
                    assert len(samples) == cfg["bs"]
        if cfg["policy"] is LastBatchPolicy.FILL:
            # FILL returns every sample the readers produced, in order: nothing is skipped.
            for k, stream in enumerate(streams):
                assert read[k] == [next(stream) + 1 for _ in read[k]]
                read[k] = []
        if cfg["policy"] is LastBatchPolicy.PARTIAL and cfg["pad"]:
            # A padded PARTIAL epoch is exactly the pipeline's current shard, padding removed.
            n, s = cfg["n"], cfg["shards"]
            for k in range(cfg["pipes"]):
                shard = k if cfg["stick"] else (k + epoch) % s
                expected = list(range(shard * n // s + 1, (shard + 1) * n // s + 1))
                assert read[k] == expected
                read[k] = []


# ------------------------------------------------------------------------- reset and epochs


def test_reset_in_the_middle_of_an_epoch_is_ignored_with_a_warning() -> None:
    it = GenericIterator(readers(N, BATCH, 1, 1, False), ["data"], reader_name="Reader")
    assert batch_values(next(it)) == [[1, 2]]
    with pytest.warns(EpochNotFinishedWarning, match="not finished"):
        it.reset()
    assert batch_values(next(it)) == [[3, 4]]


def test_a_new_for_loop_mid_epoch_continues_the_epoch() -> None:
    it = GenericIterator(readers(N, BATCH, 1, 1, False), ["data"], reader_name="Reader")
    for _ in it:
        break
    with pytest.warns(EpochNotFinishedWarning):
        rest = [batch_values(b) for b in it]
    assert rest == parse_epoch("34 56 71")


def test_iter_on_a_fresh_iterator_does_not_reset() -> None:
    pipe = FakePipeline.reader(N, BATCH)
    it = GenericIterator([pipe], ["data"], reader_name="Reader")
    assert iter(it) is it  # no reset, hence no EpochNotFinishedWarning (warnings are errors)
    assert iter(it) is it
    assert batch_values(next(it)) == [[1, 2]]


@pytest.mark.parametrize("pad", [True, False])
def test_drop_reset_after_len_batches_drains_the_tail(pad: bool) -> None:
    # A caller that reads exactly len() batches and resets must see the same next epoch as one
    # that ran into StopIteration.
    def epochs(stop_early: bool) -> list:
        it = GenericIterator(
            readers(N, BATCH, 1, 1, pad),
            ["data"],
            reader_name="Reader",
            last_batch_policy=LastBatchPolicy.DROP,
        )
        out = []
        for _ in range(3):
            batches = [next(it) for _ in range(len(it))] if stop_early else drain(it)
            it.reset()
            out.append([batch_values(b) for b in batches])
        return out

    expected = [parse_epoch(e) for e in ONE_PIPELINE[("DROP", pad)][1]]
    assert epochs(stop_early=True) == expected
    assert epochs(stop_early=False) == expected


def test_stop_iteration_keeps_being_raised_until_reset() -> None:
    it = GenericIterator(readers(N, BATCH, 1, 1, True), ["data"], reader_name="Reader")
    assert len(drain(it)) == 4
    for _ in range(2):
        with pytest.raises(StopIteration):
            next(it)
    it.reset()
    assert batch_values(next(it)) == [[1, 2]]


def test_prepare_first_batch_false_schedules_nothing_until_next() -> None:
    pipe = FakePipeline.reader(N, BATCH)
    it = GenericIterator([pipe], ["data"], reader_name="Reader", prepare_first_batch=False)
    assert pipe.empty() and pipe.state_dict() == {"delivered": 0}
    assert batch_values(next(it)) == [[1, 2]]


def test_pipelines_are_built_once() -> None:
    pipe = FakePipeline.reader(N, BATCH)
    GenericIterator(pipe, ["data"], reader_name="Reader")
    assert pipe.build_calls == 1


# ------------------------------------------------------------------------- external source


def source(batches: int, bs: int = 2, sizes: list[int] | None = None) -> Any:
    """An external-source-like callback pipeline: ``batches`` batches, then StopIteration."""

    def make_source() -> Any:
        for i in range(batches):
            count = sizes[i] if sizes else bs
            yield [10 * i + j - 1 for j in range(count)]

    return FakePipeline(make_source, bs)


def test_external_source_stop_iteration_ends_the_epoch() -> None:
    it = GenericIterator(source(3), ["data"])
    assert len(it) == 0
    for _ in range(3):
        assert [batch_values(b) for b in it] == [[[0, 1]], [[10, 11]], [[20, 21]]]


def test_external_source_with_auto_reset() -> None:
    it = GenericIterator(source(2), ["data"], auto_reset=True)
    for _ in range(3):
        assert len(drain(it)) == 2


def test_external_source_variable_batch_sizes_are_allowed_without_size() -> None:
    it = GenericIterator(source(3, bs=4, sizes=[4, 1, 3]), ["data"])
    assert [len(b[0]["data"]) for b in it] == [4, 1, 3]


def test_external_source_empty_at_once_fails_in_the_constructor() -> None:
    with pytest.raises(RuntimeError, match="no data in the pipeline"):
        GenericIterator(source(0), ["data"])


def test_variable_batch_size_is_rejected_with_size() -> None:
    with pytest.warns(UserWarning, match="legacy"):
        it = GenericIterator(
            source(3, bs=4, sizes=[4, 1, 3]), ["data"], size=8, prepare_first_batch=False
        )
    next(it)
    with pytest.raises(AssertionError, match="'data' of pipeline 0 has 1 samples"):
        next(it)


# ------------------------------------------------------------------------- errors


def one_reader() -> FakePipeline:
    return FakePipeline.reader(N, BATCH)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"output_map": ["a", "a"]}, IteratorError, "distinct.*'a'"),
        ({"output_map": "data"}, TypeError, "output_map must be a list"),
        ({"output_map": ["data", 3]}, TypeError, "strings, got 3"),
        ({"size": 0}, IteratorError, "Size cannot be 0"),
        ({"size": "7"}, TypeError, "size must be an int"),
        ({"size": 7, "reader_name": "Reader"}, IteratorError, "cannot be given together"),
        ({"reader_name": "Reader", "last_batch_padded": True}, IteratorError, "pad_last_batch"),
        ({"reader_name": "Nope"}, RuntimeError, "reader_name='Nope'.*no reader"),
        ({"auto_reset": "sometimes"}, ValueError, "auto_reset must be"),
        ({"auto_reset": 1}, ValueError, "auto_reset must be"),
        ({"last_batch_policy": "FILL"}, ValueError, "Wrong type for `last_batch_policy`"),
        ({"pipelines": None}, IteratorError, "got None"),
        ({"pipelines": []}, IteratorError, "empty"),
    ],
)
def test_constructor_errors(kwargs: dict, error: type, match: str) -> None:
    args = {"pipelines": [one_reader()], "output_map": ["data"]} | kwargs
    with pytest.raises(error, match=match):
        GenericIterator(**args)


def test_assertion_errors_are_value_errors_too() -> None:
    with pytest.raises(AssertionError):
        GenericIterator([one_reader()], ["a", "a"])
    with pytest.raises(ValueError):
        GenericIterator([one_reader()], ["a", "a"])


def test_several_pipelines_need_reader_name_or_size() -> None:
    with pytest.raises(IteratorError, match="with 2 pipelines give reader_name="):
        GenericIterator([one_reader(), one_reader()], ["data"])


def test_pipelines_must_share_the_batch_size() -> None:
    with pytest.raises(IteratorError, match=r"same batch size.*\[2, 3\]"):
        GenericIterator(
            [FakePipeline.reader(N, 2), FakePipeline.reader(N, 3)], ["data"], reader_name="Reader"
        )


def test_reader_metadata_must_agree_across_pipelines() -> None:
    pipes = [FakePipeline.reader(N, 2, 2, 0), FakePipeline.reader(N, 2, 3, 1)]
    with pytest.raises(IteratorError, match=r"same number_of_shards.*\[2, 3\]"):
        GenericIterator(pipes, ["data"], reader_name="Reader")
    pipes = [FakePipeline.reader(N, 2, 2, 0, pad=True), FakePipeline.reader(N, 2, 2, 1)]
    with pytest.raises(IteratorError, match="same pad_last_batch"):
        GenericIterator(pipes, ["data"], reader_name="Reader")


def test_output_map_must_name_every_output() -> None:
    with pytest.raises(KeyError, match="3 names"):
        GenericIterator([one_reader()], ["a", "b", "c"])
    with pytest.raises(IndexError, match=r"1 names .* 2 outputs"):
        GenericIterator([FakePipeline.reader(N, 2, num_outputs=2)], ["a"])


def test_drop_with_a_batch_larger_than_the_shard_fails_in_the_constructor() -> None:
    with pytest.raises(RuntimeError, match=r"no data in the pipeline.*PARTIAL"):
        GenericIterator(
            [FakePipeline.reader(N, 8)],
            ["data"],
            reader_name="Reader",
            last_batch_policy=LastBatchPolicy.DROP,
        )


@pytest.mark.parametrize(
    ("pad", "epochs"), [(True, ["1234567", "1234567"]), (False, ["1234567", "2345671"])]
)
def test_partial_with_a_batch_larger_than_the_data_set_gives_one_short_batch(
    pad: bool, epochs: list[str]
) -> None:
    it = GenericIterator(
        [FakePipeline.reader(N, 8, pad=pad)],
        ["data"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy.PARTIAL,
    )
    assert [[batch_values(b) for b in it] for _ in epochs] == [parse_epoch(e) for e in epochs]


def test_fill_last_batch_is_deprecated_and_maps_to_a_policy() -> None:
    with pytest.warns(DeprecationWarning, match="fill_last_batch"):
        it = GenericIterator([one_reader()], ["data"], reader_name="Reader", fill_last_batch=False)
    assert ended_epoch_stream(it) == parse_epoch("12 34 56 7")
    with pytest.warns(DeprecationWarning, match="fill_last_batch"):
        it = GenericIterator([one_reader()], ["data"], reader_name="Reader", fill_last_batch=True)
    assert ended_epoch_stream(it) == parse_epoch("12 34 56 71")


def test_policy_without_size_or_reader_name_is_reported_not_ignored() -> None:
    with pytest.warns(UserWarning, match="no effect without size= or reader_name="):
        GenericIterator(source(2), ["data"], last_batch_policy=LastBatchPolicy.DROP)


def ragged_pipeline() -> OneBatch:
    return OneBatch(TensorListCPU.from_samples([np.zeros((3, 4)), np.zeros((1, 4))]))


def test_ragged_output_names_the_output_and_suggests_the_ragged_iterator() -> None:
    with pytest.raises(RuntimeError, match=r"'boxes' of pipeline 0 is ragged.*\(3, 4\), \(1, 4\)"):
        GenericIterator([ragged_pipeline()], ["boxes"])
    with pytest.raises(RuntimeError, match=r"numpy\.RaggedIterator"):
        GenericIterator([ragged_pipeline()], ["boxes"])


def test_check_output_types() -> None:
    assert check_output_types(None, ["a"], ("dense",)) is None
    assert check_output_types(["list", "dense"], ["a", "b"], ("dense", "list")) == {
        "a": "list",
        "b": "dense",
    }
    with pytest.raises(IteratorError, match="2 tags but output_map has 1"):
        check_output_types(["dense", "dense"], ["a"], ("dense",))
    with pytest.raises(IteratorError, match="'coo' for output 'a'"):
        check_output_types(["coo"], ["a"], ("dense",))
    with pytest.raises(TypeError, match="list of tags"):
        check_output_types("dense", ["a"], ("dense",))


def test_base_iterator_needs_a_convert() -> None:
    with pytest.raises(NotImplementedError, match="_convert"):
        BaseIterator([one_reader()], ["data"], reader_name="Reader")


# ------------------------------------------------------------------------- state


@settings(max_examples=60, deadline=None)
@given(configs(), st.integers(0, 12), st.sampled_from([True, False]))
def test_state_dict_resumes_exactly(cfg: dict, taken: int, prepare: bool) -> None:
    if cfg["policy"] is LastBatchPolicy.DROP and cfg["bs"] > cfg["n"] // cfg["shards"]:
        return

    def timeline(it: Any, epochs: int) -> list:
        out = []
        for _ in range(epochs):
            out.append([batch_values(b) for b in drain(it)])
            it.reset()
        return out

    reference = timeline(make(cfg), 6)
    flat = [(e, b) for e, batches in enumerate(reference[:4]) for b in range(len(batches))]
    taken = min(taken, len(flat))
    it = make(cfg, prepare_first_batch=prepare)
    epoch, got = 0, []
    while len(got) < taken:
        try:
            got.append(batch_values(next(it)))
        except StopIteration:
            it.reset()
            epoch += 1
    state = json.loads(json.dumps(it.state_dict()))  # JSON-able
    resumed = make(cfg, prepare_first_batch=False)
    resumed.load_state_dict(state)
    rest = [batch_values(b) for b in drain(resumed)]
    done_in_epoch = sum(1 for e, _ in flat[:taken] if e == epoch)
    assert rest == reference[epoch][done_in_epoch:]
    resumed.reset()
    assert [batch_values(b) for b in drain(resumed)] == reference[epoch + 1]


def test_state_before_the_first_batch_is_the_initial_one() -> None:
    it = GenericIterator([one_reader()], ["data"], reader_name="Reader")
    state = it.state_dict()
    assert state["pipelines"] == [{"delivered": 0}]
    assert state["iterator"]["counter"] == 0
    next(it)
    assert it.state_dict()["pipelines"] == [{"delivered": 1}]


def test_state_saved_at_the_end_of_an_epoch_starts_the_next_one_in_a_for_loop() -> None:
    it = GenericIterator([one_reader()], ["data"], reader_name="Reader")
    drain(it)
    resumed = GenericIterator(
        [one_reader()], ["data"], reader_name="Reader", prepare_first_batch=False
    )
    resumed.load_state_dict(it.state_dict())
    assert [batch_values(b) for b in resumed] == parse_epoch("23 45 67")


def test_load_state_dict_errors() -> None:
    it = GenericIterator([one_reader()], ["data"], reader_name="Reader")
    state = it.state_dict()
    with pytest.raises(RuntimeError, match="prepare_first_batch=False"):
        it.load_state_dict(state)

    def fresh(**kwargs: Any) -> GenericIterator:
        return GenericIterator([one_reader()], ["data"], prepare_first_batch=False, **kwargs)

    with pytest.raises(ValueError, match="not an iterator state"):
        fresh(reader_name="Reader").load_state_dict({"format": "other"})
    with pytest.raises(ValueError, match="not an iterator state"):
        fresh(reader_name="Reader").load_state_dict([1, 2])
    with pytest.warns(UserWarning, match="legacy"):
        legacy = fresh(size=7)
    with pytest.raises(ValueError, match="another reader_name, size or number of shards"):
        legacy.load_state_dict(state)
    with pytest.raises(ValueError, match="holds 2 pipeline states"):
        fresh(reader_name="Reader").load_state_dict(state | {"pipelines": [{}, {}]})
