"""Common subgraph elimination: a repeated computation runs once and its outputs are shared."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from feedline import fn, pipeline_def
from feedline.core.plugins import PluginSystem
from feedline.core.tensor import TensorListCPU
from tests.operators.cpu.families import use_families

BATCH = 4


@pytest.fixture(autouse=True)
def plugins(empty_plugin_system: PluginSystem) -> Iterator[PluginSystem]:
    use_families(empty_plugin_system, "tensor", "random", "math", "python", "conditional")
    yield empty_plugin_system


def run_once(graph_fn, **pipe_args) -> tuple[list[str], tuple[TensorListCPU, ...]]:
    """The names of the operators that were built, and the outputs of one iteration."""
    pipe = pipeline_def(graph_fn, batch_size=BATCH, num_threads=1, device_id=None, **pipe_args)()
    outputs = pipe.run()
    names = [op.name for op in pipe._prepared]
    pipe.close()
    return names, outputs


def test_equal_seeded_random_operators_run_once() -> None:
    def graph():
        a = fn.random.uniform(range=[0, 1], shape=(2,), seed=7)
        b = fn.random.uniform(range=[0, 1], shape=(2,), seed=7)
        return a, b

    names, (a, b) = run_once(graph)
    assert len(names) == 1
    assert a.data_ptr() == b.data_ptr()


@pytest.mark.parametrize(
    "second",
    [
        {"seed": 8},  # another seed draws other numbers
        {"seed": 7, "range": [0, 2]},  # another argument
        {"seed": 7, "name": "mine"},  # a name the user gave is kept
        {},  # no explicit seed: a seed of its own
    ],
)
def test_operators_that_differ_are_kept_apart(second: dict) -> None:
    def graph():
        a = fn.random.uniform(range=[0, 1], shape=(2,), seed=7)
        b = fn.random.uniform(**{"range": [0, 1], "shape": (2,), **second})
        return a, b

    names, (a, b) = run_once(graph)
    assert len(names) == 2
    assert a.data_ptr() != b.data_ptr()


def test_without_seeds_nothing_random_is_merged() -> None:
    def graph():
        return fn.random.uniform(range=[0, 1]), fn.random.uniform(range=[0, 1])

    names, (a, b) = run_once(graph)
    assert len(names) == 2
    assert not np.array_equal(a.as_array(), b.as_array())


def test_whole_expressions_collapse_once_their_inputs_did() -> None:
    def graph():
        a = fn.random.uniform(range=[0, 1], shape=(3,), seed=1)
        c = fn.random.uniform(range=[0, 1], shape=(3,), seed=1)  # the same as a
        g = a[0] + a[1] * c[2]
        h = c[0] + c[1] * a[2]  # the same once c is a
        return g, h, a

    names, (g, h, a) = run_once(graph)
    assert g.data_ptr() == h.data_ptr()
    assert len(names) == 1 + 3 + 2  # one uniform, three subscripts, mul and add
    values = a.as_array()
    np.testing.assert_allclose(g.as_array(), values[:, 0] + values[:, 1] * values[:, 2])


def test_external_sources_and_python_functions_are_never_merged() -> None:
    data = [np.arange(3, dtype=np.float32)]

    def graph():
        es1 = fn.external_source(source=data, cycle=True, batch=False)
        es2 = fn.external_source(source=data, cycle=True, batch=False)
        p1 = fn.python_function(es1, function=np.negative)
        p2 = fn.python_function(es1, function=np.negative)
        return es1, es2, p1, p2

    names, (es1, es2, p1, p2) = run_once(graph, exec_async=False, exec_pipelined=False)
    assert len(names) == 4
    assert es1.data_ptr() != es2.data_ptr() and p1.data_ptr() != p2.data_ptr()


def test_a_batch_split_and_merged_back_whole_is_not_copied() -> None:
    def graph():
        a = fn.random.uniform(range=[0, 1], shape=(2,), seed=3)
        b = fn.random.uniform(range=[0, 1], shape=(2,), seed=3)
        if a[0] > 0.5:  # noqa: SIM108 (a statement is what the conditionals convert)
            d = a
        else:
            d = b
        return a, d

    _, (a, d) = run_once(graph, enable_conditionals=True)
    np.testing.assert_array_equal(a.as_array(), d.as_array())
    assert d.data_ptr() == a.data_ptr()


def test_samples_back_to_back_in_one_buffer_are_gathered_without_a_copy() -> None:
    dense = np.arange(24, dtype=np.int16).reshape(4, 2, 3)
    in_order = TensorListCPU.from_samples(list(dense), stack=False)
    assert np.shares_memory(in_order.as_array(), dense)
    np.testing.assert_array_equal(in_order.as_array(), dense)
    shuffled = TensorListCPU.from_samples([dense[1], dense[0], dense[2]], stack=False)
    assert not np.shares_memory(shuffled.as_array(), dense)
    np.testing.assert_array_equal(shuffled.as_array(), dense[[1, 0, 2]])
    skipping = TensorListCPU.from_samples([dense[0], dense[2]], stack=False)
    np.testing.assert_array_equal(skipping.as_array(), dense[[0, 2]])
    assert not np.shares_memory(skipping.as_array(), dense)
