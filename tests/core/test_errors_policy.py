"""The error policy: ``on_error="skip"`` with a budget, per-operator overrides, and recovery
after an error under ``"raise"``."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feedline import fn, pipeline_def
from feedline.core.errors import OperatorError, PipelineError, SkippedSample
from feedline.core.execution.errors_policy import ErrorLog, check_policy, substitute
from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import Batch, Kernel, SampleKernel
from feedline.core.pipeline import Pipeline
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.tensor import TensorListCPU
from feedline.readers.base import Reader, reader_schema


class CountReader(Reader):
    """Sample i is ``[i]`` (item ``i`` of ``range(n)``); loading an item in ``bad_load`` fails."""

    def index(self) -> Sequence[int]:
        return range(self.args["n"])

    def load(self, item: int) -> tuple[np.ndarray, ...]:
        if item in self.args["bad_load"]:
            raise ValueError(f"cannot read item {item}")
        return (np.array([item], dtype=np.int64),)

    def source_info(self, item: int) -> str:
        return f"item-{item}"


class Check(SampleKernel):
    """Fails on samples whose value is in ``bad``; else value * 100 plus a random draw."""

    def run_sample(self, inputs: Any, args: Any, sample: Any) -> np.ndarray:
        value = int(inputs[0][0])
        if value in args["bad"]:
            raise ValueError(f"bad value {value}")
        return np.array([value * 100 + int(sample.rng.integers(0, 100))], dtype=np.int64)


class BatchFail(Kernel):
    """A batch kernel that fails on every batch, naming no sample."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        raise RuntimeError("the whole batch is wrong")


class BareReader(Kernel):
    """A reader kernel that cannot hand out replacement samples."""

    is_reader = True

    def run(self, batch: Batch) -> list[TensorListCPU]:
        return [TensorListCPU.from_samples([np.zeros(1)] * batch.size)]


COUNT = reader_schema(
    "testing.count",
    "Integers 0..n-1.",
    (
        ArgSpec("n", "int", 20, "Number of samples."),
        ArgSpec("bad_load", "int_vec", (-1,), "Items whose load fails."),
    ),
    outputs=("data",),
)
CHECK = OpSchema(
    "testing.check",
    "Fail on the values in bad.",
    inputs=(InputSpec("data"),),
    args=(ArgSpec("bad", "int_vec", (-1,), "The bad values."),),
)
BATCH_FAIL = OpSchema("testing.batch_fail", "Always fails.", inputs=(InputSpec("data"),))
BARE = OpSchema("testing.bare", "A bare reader.")


class Plugin:
    @staticmethod
    @hookimpl
    def feedline_register_operators(registry: Any) -> None:
        registry.add_operator(COUNT, kernels={"cpu": CountReader})
        registry.add_operator(CHECK, kernels={"cpu": Check})
        registry.add_operator(BATCH_FAIL, kernels={"cpu": BatchFail})
        registry.add_operator(BARE, kernels={"cpu": BareReader})


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(Plugin, "testing-errors")
    with use_plugin_system(system):
        yield


def make(
    bad: Sequence[int] = (-1,),
    bad_load: Sequence[int] = (-1,),
    check_on: str | None = None,
    reader_on: str | None = None,
    threads: int = 2,
    bs: int = 4,
    **kwargs: Any,
) -> Pipeline:
    @pipeline_def(batch_size=bs, num_threads=threads, device_id=None, seed=5)
    def pipe() -> Any:
        data = fn.testing.count(name="Reader", bad_load=bad_load, on_error=reader_on)
        return fn.testing.check(data, bad=bad, name="check", on_error=check_on), data

    return pipe(**kwargs)


def run(pipe: Pipeline, batches: int) -> tuple[list[list[int]], list[list[int]]]:
    pipe.build()
    checked, read = [], []
    for _ in range(batches):
        out, data = pipe.run()
        checked.append([int(v) for v in out.as_array().ravel()])
        read.append([int(v) for v in data.as_array().ravel()])
    return checked, read


def stream_without(bad: set[int], n: int = 20) -> Iterator[int]:
    while True:
        yield from (i for i in range(n) if i not in bad)


def test_skip_keeps_batches_full_in_stream_order(caplog: pytest.LogCaptureFixture) -> None:
    pipe = make(bad=(2, 5, 6), bad_load=(9,), on_error="skip", prefetch_queue_depth=1)
    with caplog.at_level(logging.WARNING, logger="feedline"):
        checked, read = run(pipe, 4)  # one epoch: 16 good samples
    expected = stream_without({2, 5, 6, 9})
    assert read == [[next(expected) for _ in range(4)] for _ in range(4)]
    assert [[v // 100 for v in batch] for batch in checked] == read
    errors = pipe.executor_statistics()["errors"]
    assert [(e["operator"], e["source_info"]) for e in errors] == [
        ("check", "item-2"),
        ("Reader", "item-9"),
        ("check", "item-5"),
        ("check", "item-6"),
    ]
    assert errors[0] == {
        "operator": "check",
        "iteration": 0,
        "sample_index": 2,
        "source_info": "item-2",
        "error": "ValueError: bad value 2",
    }
    logged = [r.getMessage() for r in caplog.records if r.name == "feedline"]
    assert len(logged) == 4
    assert "item-2" in logged[0] and "'check'" in logged[0] and "bad value 2" in logged[0]
    pipe.close()


def test_skip_outputs_do_not_depend_on_threads_or_queue_depth() -> None:
    results = []
    for threads, depth in ((1, 1), (2, 2), (3, 3)):
        pipe = make(bad=(1, 7, 8, 15), threads=threads, on_error="skip", prefetch_queue_depth=depth)
        results.append(run(pipe, 8))
        pipe.close()
    assert results[0] == results[1] == results[2]


def test_samples_before_the_failed_one_keep_their_random_draws() -> None:
    clean, _ = run(make(on_error="skip"), 1)
    skipped, _ = run(make(bad=(2,), on_error="skip"), 1)
    assert skipped[0][:2] == clean[0][:2]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bad=st.sets(st.integers(0, 19), max_size=6),
    bad_load=st.sets(st.integers(0, 19), max_size=4),
    bs=st.integers(1, 5),
)
def test_skip_is_the_stream_without_bad_samples(bad: set[int], bad_load: set[int], bs: int) -> None:
    pipe = make(bad=(-1, *bad), bad_load=(-1, *bad_load), bs=bs, on_error="skip")
    _, read = run(pipe, 6)
    pipe.close()
    expected = stream_without(bad | bad_load)
    assert read == [[next(expected) for _ in range(bs)] for _ in range(6)]


def test_budget_exceeded_lists_every_skipped_sample() -> None:
    ok = make(bad=(2, 5), on_error="skip", max_errors=2)
    run(ok, 3)
    ok.close()
    pipe = make(bad=(2, 5, 6), on_error="skip", max_errors=2)
    pipe.build()
    pipe.run()
    with pytest.raises(PipelineError, match="3 samples failed, more than max_errors=2") as info:
        pipe.run()
    for source in ("item-2", "item-5", "item-6"):
        assert source in str(info.value)
    pipe.close()


def test_operator_override_raise_under_pipeline_skip() -> None:
    pipe = make(bad=(2,), check_on="raise", on_error="skip")
    pipe.build()
    with pytest.raises(OperatorError, match="bad value 2") as info:
        pipe.run()
    assert info.value.operator == "check" and info.value.sample_index == 2
    pipe.close()


def test_operator_override_skip_under_pipeline_raise() -> None:
    pipe = make(bad=(2,), check_on="skip")
    _, read = run(pipe, 1)
    assert read == [[0, 1, 3, 4]]
    assert [e["source_info"] for e in pipe.executor_statistics()["errors"]] == ["item-2"]
    pipe.close()
    # the reader keeps "raise": its own load failure still fails the pipeline
    failing = make(bad_load=(1,), check_on="skip")
    failing.build()
    with pytest.raises(OperatorError, match="cannot read item 1"):
        failing.run()
    failing.close()


def test_reader_override_skip_alone() -> None:
    pipe = make(bad_load=(0, 3), reader_on="skip")
    _, read = run(pipe, 2)
    assert read == [[1, 2, 4, 5], [6, 7, 8, 9]]
    assert [e["operator"] for e in pipe.executor_statistics()["errors"]] == ["Reader", "Reader"]
    pipe.close()


def test_batch_level_failure_raises_under_skip() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, on_error="skip")
    def pipe() -> Any:
        return fn.testing.batch_fail(fn.testing.count())

    p = pipe()
    p.build()
    with pytest.raises(OperatorError, match="the whole batch is wrong"):
        p.run()
    p.close()


def test_skip_without_a_reader_is_rejected_at_build() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, on_error="skip")
    def no_reader() -> Any:
        return fn.external_source(source=lambda: [np.zeros(1)] * 2, batch=True)

    system = PluginSystem()
    with use_plugin_system(system):
        pipe = no_reader()
        with pytest.raises(PipelineError, match="needs a reader"):
            pipe.build()


def test_operator_skip_not_fed_by_a_reader_is_rejected() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe() -> Any:
        data = fn.external_source(source=lambda: [np.zeros(1, np.int64)] * 2, batch=True)
        return fn.testing.check(data, name="lonely", on_error="skip"), fn.testing.count()

    with use_plugin_system(PluginSystem()) as system:
        system.register(Plugin, "testing-errors")
        with pytest.raises(PipelineError, match="'lonely' has on_error='skip' but reads no"):
            pipe().build()


def test_skip_needs_readers_that_can_replace_samples() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, on_error="skip")
    def pipe() -> Any:
        return fn.testing.bare(name="bare")

    with pytest.raises(PipelineError, match="reader 'bare' .* cannot hand out replacement"):
        pipe().build()


def test_policy_arguments_are_validated() -> None:
    with pytest.raises(ValueError, match="on_error must be one of raise, skip"):
        Pipeline(batch_size=1, num_threads=1, on_error="ignore")
    with pytest.raises(ValueError, match="max_errors must not be negative"):
        check_policy("skip", -1)
    with pytest.raises(TypeError, match="max_errors must be an int or None"):
        Pipeline(batch_size=1, num_threads=1, max_errors=1.5)
    with pytest.raises(ValueError, match="'on_error' must be one of raise, skip, got 'drop'"):
        make(check_on="drop").build()
    pipe = make(on_error="skip", max_errors=3)
    assert (pipe.on_error, pipe.max_errors) == ("skip", 3)
    assert Pipeline(batch_size=1, num_threads=1).on_error == "raise"


def test_on_error_is_documented_and_in_the_signature() -> None:
    import inspect

    assert "on_error (str, optional)" in fn.testing.check.__doc__
    assert "on_error" in inspect.signature(fn.testing.check).parameters
    assert "on_error" in inspect.signature(Pipeline).parameters


def test_serialization_keeps_the_policies() -> None:
    pipe = make(bad=(2,), check_on="raise", on_error="skip", max_errors=4)
    document = json.loads(pipe.serialize())
    assert document["params"]["on_error"] == "skip"
    assert document["params"]["max_errors"] == 4
    assert {op["name"]: op["on_error"] for op in document["ops"]}["check"] == "raise"


def test_checkpoint_resume_across_a_skip_is_exact() -> None:
    original = make(bad=(2, 5, 6, 13), bad_load=(9,), on_error="skip", enable_checkpointing=True)
    _, before = run(original, 1)
    state = original.checkpoint()
    assert "carry" in json.loads(state)["readers"]["Reader"]
    checked_after, read_after = run(original, 6)
    original.close()
    resumed = make(bad=(2, 5, 6, 13), bad_load=(9,), on_error="skip", checkpoint=state)
    assert run(resumed, 6) == (checked_after, read_after)
    expected = stream_without({2, 5, 6, 9, 13})
    assert before + read_after == [[next(expected) for _ in range(4)] for _ in range(7)]
    resumed.close()


def test_raise_reports_once_then_reset_starts_a_clean_epoch() -> None:
    pipe = make(bad=(5,), prefetch_queue_depth=1)  # nothing computed ahead is dropped
    pipe.build()
    assert pipe.run()[1].as_array().ravel().tolist() == [0, 1, 2, 3]
    with pytest.raises(OperatorError, match="bad value 5"):
        pipe.run()
    with pytest.raises(PipelineError, match="stopped after an earlier error"):
        pipe.run()
    pipe.reset()
    assert pipe.epoch_idx == 1
    assert pipe.run()[1].as_array().ravel().tolist() == [8, 9, 10, 11]
    pipe.close()


def test_close_and_build_after_an_error_give_a_working_pipeline() -> None:
    pipe = make(bad=(1,))
    pipe.build()
    with pytest.raises(OperatorError):
        pipe.run()
    pipe.close()
    pipe.build()
    with pytest.raises(OperatorError, match="bad value 1"):  # the reader starts over
        pipe.run()
    pipe.close()
    loading = make(bad_load=(0,))
    loading.build()
    with pytest.raises(OperatorError):
        loading.run()
    loading.close()
    loading.build()
    with pytest.raises(OperatorError, match="cannot read item 0"):
        loading.run()
    loading.close()


def test_a_reader_with_no_good_sample_fails_instead_of_looping() -> None:
    pipe = make(bad_load=tuple(range(20)), on_error="skip", bs=2)
    pipe.build()
    with pytest.raises(OperatorError, match="in a row failed to load"):
        pipe.run()
    pipe.close()


def test_error_log_and_substitute() -> None:
    log = ErrorLog(max_errors=1)
    first = SkippedSample("dec", 0, 1, "a.jpg", "ValueError: broken")
    log.record([first])
    with pytest.raises(PipelineError, match="2 samples failed, more than max_errors=1") as info:
        log.record([SkippedSample("dec", 3, 0, "", "OSError: gone")])
    assert "operator 'dec', iteration 0, sample 1 (a.jpg): ValueError: broken" in str(info.value)
    assert log.as_list()[0] == first.as_dict()
    batch = TensorListCPU.from_samples([np.array([i]) for i in range(4)], "", list("abcd"))
    fresh = TensorListCPU.from_samples([np.array([9]), np.array([8])], "", ["x", "y"])
    out = substitute(batch, [0, 2], fresh)
    assert out.as_array().ravel().tolist() == [1, 3, 9, 8]
    assert out.source_infos() == ["b", "d", "x", "y"]
