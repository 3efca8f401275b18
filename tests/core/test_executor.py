"""The executor's plan: per-sample operators chained per sample, serial kernels apart."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest

from feedline import OperatorError, fn, pipeline_def
from feedline.core.plugins import PluginSystem
from tests.core.ops_for_tests import EVENTS, TestOps


@pytest.fixture(autouse=True)
def test_ops(plugin_system: PluginSystem) -> PluginSystem:
    plugin_system.register(TestOps(), "test-ops")
    EVENTS.clear()
    return plugin_system


def run_recorded(batch: int = 8, serial: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """external_source → record "a" → record "b" (reading a serial draw made in between)."""
    data = np.arange(batch, dtype=np.int32).reshape(batch, 1)

    @pipeline_def(batch_size=batch, num_threads=2, device_id=None, seed=3, prefetch_queue_depth=1)
    def pipe():
        first = fn.test.record(fn.external_source(source=lambda: data, batch=True), label="a")
        draw = fn.test.serial_draw(serial=serial)
        return fn.test.record(first, label="b", extra=draw), draw

    p = pipe()
    p.build()
    out, draws = p.run()
    p.close()
    return out.as_array(), draws.as_array()


def test_a_serial_kernel_runs_back_to_back_ahead_of_the_chain() -> None:
    out, _ = run_recorded()
    np.testing.assert_array_equal(out.ravel(), np.arange(8))
    labels = [label for label, _, _ in EVENTS]
    assert labels[:8] == ["draw"] * 8
    assert [index for _, index, _ in EVENTS[:8]] == list(range(8))
    assert len({thread for _, _, thread in EVENTS[:8]}) == 1
    # "a" and "b" stay one chain: some sample's "b" runs before another sample's "a".
    first_b = labels.index("b")
    assert "a" in labels[first_b:]
    for index in range(8):
        a_thread = next(t for label, i, t in EVENTS if label == "a" and i == index)
        b_thread = next(t for label, i, t in EVENTS if label == "b" and i == index)
        assert a_thread == b_thread


def test_serial_draws_equal_the_same_draws_made_on_the_pool() -> None:
    _, serial = run_recorded()
    EVENTS.clear()
    _, pooled = run_recorded(serial=False)
    np.testing.assert_array_equal(serial, pooled)
    labels = [label for label, _, _ in EVENTS]
    assert labels[:8] != ["draw"] * 8  # on the pool, draws interleave with the chain's samples


def recording_source(batch: int = 8, label: str = "source", value: int | None = None):
    """A batch callback that notes (label, call number, thread) in EVENTS and returns the call
    number (or ``value``) in every sample."""
    calls = itertools.count()

    def source() -> np.ndarray:
        call = next(calls)
        EVENTS.append((label, call, threading.get_ident()))
        return np.full((batch, 1), call if value is None else value, dtype=np.int32)

    return source


def overlap_pipeline(depth: int, after: str = ""):
    """source → record "a" (1 ms per sample), then ``after``: nothing, "+ 1" (a batch
    operator) or "+ source" (a second source, created after the chain)."""

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=3, prefetch_queue_depth=depth)
    def pipe():
        out = fn.test.record(fn.external_source(source=recording_source(), batch=True), label="a")
        if after == "+ 1":
            return out + 1
        if after == "+ source":
            ones = recording_source(label="later source", value=1)
            return out + fn.external_source(source=ones, batch=True)
        return out

    p = pipe()
    p.build()
    return p


def started_before_next_source() -> int:
    """How many "a" samples had started when iteration 1's source was called."""
    events = [(label, index) for label, index, _ in EVENTS]
    return [label for label, _ in events[: events.index(("source", 1))]].count("a")


def run_three(depth: int, after: str) -> None:
    """Run three iterations of :func:`overlap_pipeline` and check their outputs."""
    p = overlap_pipeline(depth=depth, after=after)
    outputs = [p.run()[0].as_array().ravel() for _ in range(3)]
    p.close()
    for iteration, values in enumerate(outputs):
        np.testing.assert_array_equal(values, np.full(8, iteration + bool(after)))


@pytest.mark.parametrize("after", ["", "+ 1", "+ source"])
def test_a_requested_iteration_starts_while_the_last_chain_runs(after: str) -> None:
    run_three(depth=2, after=after)
    # Iteration 1 was requested at once (two prefetched), so its source ran while most of
    # iteration 0's samples (1 ms each, two threads) were still to come.
    assert started_before_next_source() < 4
    assert len({thread for label, _, thread in EVENTS if label == "a"}) == 2


@pytest.mark.parametrize("after", ["", "+ source"])
def test_iterations_do_not_overlap_unless_the_next_one_is_requested(after: str) -> None:
    run_three(depth=1, after=after)
    assert started_before_next_source() == 8


def test_sources_run_first_in_each_iteration() -> None:
    p = overlap_pipeline(depth=1, after="+ source")
    p.run()
    p.close()
    labels = [label for label, _, _ in EVENTS]
    assert labels[:2] == ["source", "later source"]  # the later source runs before the chain


def test_only_a_source_can_end_the_epoch() -> None:
    def stop(batch):
        raise StopIteration

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, prefetch_queue_depth=1)
    def pipe():
        data = fn.external_source(source=lambda: np.zeros((4, 1), np.int32), batch=True)
        return fn.python_function(data, function=stop, batch_processing=True, name="stopper")

    p = pipe()
    p.build()
    with pytest.raises(OperatorError, match="stopper.*only a source .* can end the epoch"):
        p.run()
    p.close()


def noisy_draws(depth: int) -> list[np.ndarray]:
    data = np.arange(16, dtype=np.float32).reshape(8, 2)

    @pipeline_def(batch_size=8, num_threads=3, device_id=None, seed=11, prefetch_queue_depth=depth)
    def pipe():
        noisy = fn.test.noise(fn.external_source(source=lambda: data, batch=True), scale=0.5)
        return fn.test.noise(noisy, scale=fn.test.serial_draw()), fn.test.serial_draw()

    p = pipe()
    p.build()
    runs = [np.concatenate([o.as_array().ravel() for o in p.run()]) for _ in range(5)]
    p.close()
    return runs


def test_overlapped_iterations_give_the_outputs_of_sequential_ones() -> None:
    sequential, overlapped = noisy_draws(depth=1), noisy_draws(depth=3)
    for one, other in zip(sequential, overlapped, strict=True):
        np.testing.assert_array_equal(one, other)
    assert not np.array_equal(sequential[0], sequential[1])


def test_an_error_starting_the_next_iteration_is_raised_by_that_iteration() -> None:
    # External-source callbacks run when an iteration is scheduled; a batch operator that the
    # early start of iteration 1 runs (integer division by zero) fails in the background.
    @pipeline_def(batch_size=8, num_threads=2, device_id=None, prefetch_queue_depth=2)
    def pipe():
        data = fn.external_source(name="data")
        divisor = fn.external_source(name="divisor")
        return fn.test.record(data // divisor, label="a")

    p = pipe()
    p.build()
    for value in (1, 0):
        p.feed_input("data", np.ones((8, 1), np.int32))
        p.feed_input("divisor", np.full((8, 1), value, np.int32))
    np.testing.assert_array_equal(p.run()[0].as_array(), np.ones((8, 1), np.int32))
    with pytest.raises(OperatorError, match="iteration 1"):
        p.run()
    p.close()


def test_close_with_the_next_iteration_under_way_stops_every_thread() -> None:
    p = overlap_pipeline(depth=3)
    p.run()
    helpers = list(p._executor.pool._threads)
    p.close()
    assert helpers and not any(thread.is_alive() for thread in helpers)


def test_statistics_add_up_every_samples_time_across_threads() -> None:
    data = np.zeros((8, 1), np.int32)

    @pipeline_def(batch_size=8, num_threads=4, device_id=None, prefetch_queue_depth=1)
    def pipe():
        return fn.test.slow(fn.external_source(source=lambda: data, batch=True), name="slow")

    p = pipe()
    p.build()
    for _ in range(3):
        p.run()
    stats = p.executor_statistics()["slow"]
    p.close()
    assert stats["runs"] == 3
    assert stats["time_s"] >= 3 * 8 * 0.002  # each sample sleeps 2 ms


def test_an_operator_without_inputs_stays_out_of_a_chain_in_a_branch() -> None:
    """A per-sample operator reading nothing makes the whole batch, even when the chain before
    it in the plan runs on one branch of a conditional (the if-branch's samples only)."""

    @pipeline_def(batch_size=6, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe():
        index = fn.external_source(source=lambda info: np.int32(info.idx_in_batch), batch=False)
        if index < 2:
            out = fn.python_function(index, function=lambda x: x * 10)
        else:
            out = fn.python_function(function=lambda: np.int32(-1))
        return out

    p = pipe()
    (out,) = p.run()
    p.close()
    assert out.as_array().tolist() == [0, 10, -1, -1, -1, -1]
