"""external_source callbacks and ``iter_setup`` run when an iteration is scheduled, on the
scheduling thread, as DALI runs them: the recorded call sequences are DALI's."""

from __future__ import annotations

import threading
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, Pipeline, PipelineError, fn
from feedline.core.plugins import PluginSystem
from tests.core import ops_for_tests
from tests.core.ops_for_tests import TestOps


@pytest.fixture(autouse=True)
def test_ops(plugin_system: PluginSystem) -> PluginSystem:
    plugin_system.register(TestOps(), "test-ops")
    return plugin_system


class Traced(Pipeline):
    """A legacy-style pipeline (``define_graph`` + ``iter_setup``) that records every call.

    Its source returns iteration ``i`` as a batch ``[[i]]`` and raises StopIteration from
    iteration ``limit`` on; ``trace`` gets ``("cb", i)``, ``("setup",)``, ``("out", i)`` and
    ``("stop",)`` entries, and ``threads`` the thread of every callback and hook call.
    """

    def __init__(self, limit: int | None = None, **kwargs) -> None:
        super().__init__(batch_size=1, num_threads=1, **kwargs)
        self.limit = limit
        self.trace: list[tuple] = []
        self.threads: set[int] = set()

    def source(self, iteration: int) -> np.ndarray:
        self.trace.append(("cb", iteration))
        self.threads.add(threading.get_ident())
        if self.limit is not None and iteration >= self.limit:
            raise StopIteration
        return np.array([[iteration]], np.int32)

    def define_graph(self):
        return fn.external_source(source=self.source, batch=True)

    def iter_setup(self) -> None:
        self.trace.append(("setup",))
        self.threads.add(threading.get_ident())

    def consume(self, call) -> None:
        try:
            (out,) = call()
        except StopIteration:
            self.trace.append(("stop",))
            return
        self.trace.append(("out", int(out.as_array()[0, 0])))


def dali_trace(depth: int, limit: int | None, calls: list[str]) -> list[tuple]:
    """What DALI 2.4's Python ``Pipeline`` records for the same calls (``"run"`` or
    ``"reset"``): the first ``run()`` of an epoch runs ``_iter_setup`` (callbacks, then
    ``iter_setup``) for ``depth`` iterations, later ones for one, none once a callback raised
    StopIteration; ``outputs()`` raises StopIteration when nothing is left to consume. One
    deliberate difference: ``reset()`` waits until the batches before the end were consumed."""
    trace: list[tuple] = []
    queued: deque[int] = deque()
    first, last, counter = True, False, 0
    for call in calls:
        if call == "reset":
            if last and not queued:  # DALI: `if last` (see the test above)
                first, last, counter = True, False, 0
            continue
        for _ in range(depth if first else 1):
            first = False
            if last:
                break
            trace.append(("cb", counter))
            if limit is not None and counter >= limit:
                last = True
                break
            trace.append(("setup",))
            queued.append(counter)
            counter += 1
        trace.append(("out", queued.popleft()) if queued else ("stop",))
    return trace


@pytest.mark.parametrize("exec_async", [True, False])
def test_first_run_calls_the_callback_for_the_queue_depth_then_one_per_run(exec_async) -> None:
    pipe = Traced(limit=3, prefetch_queue_depth=2, exec_async=exec_async)
    for _ in range(5):
        pipe.consume(pipe.run)
    pipe.reset()
    pipe.consume(pipe.run)
    assert pipe.trace == [
        ("cb", 0), ("setup",), ("cb", 1), ("setup",), ("out", 0),
        ("cb", 2), ("setup",), ("out", 1),
        ("cb", 3), ("out", 2),
        ("stop",),
        ("stop",),
        ("cb", 0), ("setup",), ("cb", 1), ("setup",), ("out", 0),
    ]  # fmt: skip
    assert pipe.threads == {threading.get_ident()}
    pipe.close()


@settings(max_examples=25, deadline=None)
@given(
    depth=st.integers(1, 4),
    limit=st.one_of(st.none(), st.integers(0, 6)),
    calls=st.lists(st.sampled_from(["run", "run", "run", "reset"]), max_size=14),
    pipelined=st.booleans(),
)
def test_call_sequence_matches_dali(depth, limit, calls, pipelined) -> None:
    pipe = Traced(limit=limit, prefetch_queue_depth=depth, exec_pipelined=pipelined)
    for call in calls:
        if call == "reset":
            pipe.reset()
        else:
            pipe.consume(pipe.run)
    assert pipe.trace == dali_trace(depth if pipelined else 1, limit, calls)
    pipe.close()


def test_scheduled_api_trace_and_mixing() -> None:
    pipe = Traced(limit=2, prefetch_queue_depth=3)
    pipe.schedule_run()
    assert pipe.trace == [("cb", 0), ("setup",), ("cb", 1), ("setup",), ("cb", 2)]
    assert not pipe.empty()
    pipe.consume(pipe.share_outputs)
    pipe.release_outputs()
    pipe.schedule_run()  # the input ended: nothing is called
    pipe.consume(pipe.outputs)
    pipe.consume(pipe.outputs)
    assert pipe.trace[5:] == [("out", 0), ("out", 1), ("stop",)]
    assert pipe.empty()
    with pytest.raises(RuntimeError, match="Mixing pipeline API type"):
        pipe.run()
    pipe.close()
    other = Traced(prefetch_queue_depth=2)
    other.run()
    for call in (other.schedule_run, other.share_outputs, other.release_outputs, other.outputs):
        with pytest.raises(RuntimeError, match="Mixing pipeline API type"):
            call()
    other.close()


def test_enable_api_check_false_allows_mixing() -> None:
    pipe = Traced(prefetch_queue_depth=1)
    pipe.enable_api_check(False)
    pipe.consume(pipe.run)
    pipe.schedule_run()
    pipe.consume(pipe.outputs)
    pipe.enable_api_check(True)
    pipe.consume(pipe.run)  # no API type was recorded while the check was off
    assert pipe.trace[-1] == ("out", 2)
    with pytest.raises(RuntimeError, match="Mixing"):
        pipe.schedule_run()
    pipe.close()


def test_reset_waits_until_the_batches_before_the_end_are_consumed() -> None:
    # DALI would start the new epoch at once and hand out iteration 0 of the old one in it.
    pipe = Traced(limit=1, prefetch_queue_depth=2)
    pipe.schedule_run()  # iteration 0 queued, the callback of 1 ended the input
    pipe.reset()
    assert pipe.epoch_idx == 0
    pipe.consume(pipe.share_outputs)
    pipe.reset()  # every batch before the end was consumed: a new epoch
    assert pipe.epoch_idx == 1
    pipe.schedule_run()
    pipe.consume(pipe.outputs)
    epoch = [("cb", 0), ("setup",), ("cb", 1), ("out", 0)]
    assert pipe.trace == epoch * 2
    pipe.close()


class Feeding(Pipeline):
    """DALI's classic pattern: ``iter_setup`` feeds an unnamed-callback external source."""

    def __init__(self, batches: list[np.ndarray], **kwargs) -> None:
        super().__init__(batch_size=2, num_threads=2, **kwargs)
        self.batches = list(batches)
        self.fed: list[int] = []

    def define_graph(self):
        self.src = fn.external_source(name="src")
        return fn.test.record(self.src, label="rest")

    def iter_setup(self) -> None:
        if not self.batches:
            raise StopIteration
        batch = self.batches.pop(0)
        self.fed.append(int(batch[0, 0]))
        self.feed_input(self.src, batch)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_iter_setup_feeds_external_source(depth: int) -> None:
    batches = [np.full((2, 1), i, np.int32) for i in range(4)]
    pipe = Feeding(batches, prefetch_queue_depth=depth)
    ops_for_tests.EVENTS.clear()
    got = []
    (out,) = pipe.run()
    assert pipe.fed == list(range(depth))  # fed ahead by the first run()
    got.append(out.as_array()[:, 0].tolist())
    while True:
        try:
            (out,) = pipe.run()
        except StopIteration:
            break
        got.append(out.as_array()[:, 0].tolist())
    assert got == [[i, i] for i in range(4)]
    with pytest.raises(StopIteration):
        pipe.run()
    # The operators after the source ran on the pool, not on this thread.
    assert threading.get_ident() not in {thread for _, _, thread in ops_for_tests.EVENTS}
    pipe.close()


def test_readers_and_operators_still_run_ahead_in_the_background() -> None:
    release = threading.Event()
    calls: list[int] = []

    def source(i: int) -> np.ndarray:
        calls.append(i)
        return np.full((2, 1), i, np.int32)

    class Gated(Pipeline):
        def define_graph(self):
            data = fn.external_source(source=source, batch=True)
            return fn.python_function(data, function=lambda x: release.wait(10) and x)

    pipe = Gated(batch_size=2, num_threads=1, prefetch_queue_depth=2)
    pipe.build()
    pipe.schedule_run()  # returns although the operator waits: it runs in the background
    assert calls == [0, 1]
    release.set()
    assert pipe.outputs()[0].as_array()[:, 0].tolist() == [0, 0]
    pipe.close()


def test_batch_larger_than_max_batch_size_fails_when_scheduled() -> None:
    class Big(Pipeline):
        def define_graph(self):
            sizes = iter([1, 1, 3])
            return fn.external_source(
                source=lambda: np.zeros((next(sizes), 1), np.int32), name="big_src"
            )

    pipe = Big(batch_size=2, num_threads=1, prefetch_queue_depth=2)
    pipe.run()  # iterations 0 and 1 fetched
    with pytest.raises(OperatorError, match="more than the pipeline's batch size") as info:
        pipe.run()  # fetching iteration 2 fails before iteration 1 is handed out
    assert info.value.operator == "big_src" and info.value.iteration == 2
    with pytest.raises(PipelineError, match="earlier error"):
        pipe.run()
    pipe.close()


def test_callback_error_is_raised_by_the_scheduling_call() -> None:
    def source(i: int) -> np.ndarray:
        if i == 1:
            raise ValueError("bad sample file")
        return np.zeros((1, 1), np.int32)

    class Failing(Pipeline):
        def define_graph(self):
            return fn.external_source(source=source, batch=True, name="reader_cb")

    pipe = Failing(batch_size=1, num_threads=1, prefetch_queue_depth=2)
    with pytest.raises(OperatorError, match="ValueError: bad sample file") as info:
        pipe.schedule_run()
    assert info.value.operator == "reader_cb" and info.value.iteration == 1
    assert isinstance(info.value.__cause__, ValueError)
    pipe.close()


def test_stop_in_one_source_calls_the_others_and_drops_the_iteration() -> None:
    seen: list[tuple[str, int]] = []

    def make(label: str, limit: int):
        def source(i: int) -> np.ndarray:
            seen.append((label, i))
            if i >= limit:
                raise StopIteration
            return np.full((1, 1), i, np.int32)

        return source

    class Two(Pipeline):
        def define_graph(self):
            a = fn.external_source(source=make("a", 1), batch=True)
            b = fn.external_source(source=make("b", 5), batch=True)
            return a, b

    pipe = Two(batch_size=1, num_threads=1, prefetch_queue_depth=2)
    a, b = pipe.run()
    assert a.as_array().tolist() == b.as_array().tolist() == [[0]]
    assert seen == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]
    with pytest.raises(StopIteration):
        pipe.run()
    pipe.close()


def test_feed_input_on_a_source_with_a_callback_is_refused() -> None:
    pipe = Traced(prefetch_queue_depth=1)
    pipe.build()
    with pytest.raises(RuntimeError, match="Cannot use feed_input"):
        pipe.feed_input("__ExternalSource_0", np.zeros((1, 1), np.int32))
    pipe.close()


@pytest.mark.parametrize("kind", [AssertionError, KeyError, LookupError, ZeroDivisionError])
def test_a_callback_error_keeps_its_own_type(kind: type[Exception]) -> None:
    def failing():
        raise kind("from the callback")

    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(source=failing, name="src"))
    with pytest.raises(kind, match="from the callback") as caught:
        pipe.run()
    assert isinstance(caught.value, OperatorError) and caught.value.operator == "src"


def test_a_callback_error_whose_type_has_its_own_text_is_a_plain_operator_error() -> None:
    def failing():
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad byte")

    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(source=failing))
    with pytest.raises(OperatorError, match="UnicodeDecodeError: .*bad byte"):
        pipe.run()
