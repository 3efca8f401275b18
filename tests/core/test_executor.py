"""The executor's plan: per-sample operators chained per sample, serial kernels apart."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import fn, pipeline_def
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
