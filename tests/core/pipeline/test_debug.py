"""Debug mode: the pipeline function re-runs every iteration with the batches in hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import fn, pipeline_def, types
from feedline.core.pipeline.debug import DataNodeDebug, DebugPipeline


def _graph(scale: float, seen: list | None = None):
    draw = fn.random.uniform(range=[0.0, 1.0])
    if seen is not None:
        seen.append(draw)
    scaled = draw * scale + 1.0
    data = fn.external_source(source=lambda i: [np.full(2, i, np.int32)] * 3, batch=True)
    return scaled, fn.random.coin_flip(), data + 1, 7


@settings(max_examples=10)
@given(seed=st.integers(0, 2**31 - 1))
def test_debug_mode_returns_what_the_graph_run_returns(seed: int) -> None:
    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=seed)
    def pipe():
        return _graph(4.0)

    debug, graph = pipe(debug=True), pipe()
    assert isinstance(debug, DebugPipeline) and not isinstance(graph, DebugPipeline)
    for _ in range(3):
        for got, expected in zip(debug.run(), graph.run(), strict=True):
            np.testing.assert_array_equal(got.as_array(), expected.as_array())
    debug.close()
    graph.close()


def test_the_function_sees_each_iterations_batch(capsys) -> None:
    seen: list = []

    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=2, debug=True)
    def pipe():
        scaled, *rest = _graph(1.0, seen)
        print(scaled)
        return (scaled, *rest)

    p = pipe()
    outputs = [p.run()[0].as_array() for _ in range(2)]
    draws = [node for node in seen if isinstance(node, DataNodeDebug)]
    assert len(draws) == 2  # the definition run saw a symbolic node, then one per iteration
    for node, out in zip(draws, outputs, strict=True):
        np.testing.assert_allclose(node.get().as_array() + 1.0, out)
        assert node.shape() == [(), (), ()]
    printed = capsys.readouterr().out
    assert printed.count("DataNodeDebug(") == 2
    assert f"{outputs[1][0]:.4f}"[:5] in printed
    p.close()


def test_output_checks_count_the_functions_outputs() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, debug=True)
    def pipe():
        return fn.random.uniform() * 2.0, fn.random.coin_flip()

    p = pipe(output_dtype=[types.FLOAT, types.INT32], output_ndim=[0, 0])
    assert p.num_outputs == 2 and len(p.run()) == 2
    p.close()


def test_operators_must_come_in_the_same_order() -> None:
    calls = iter(range(10))

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, debug=True)
    def pipe():
        if next(calls) == 0:
            return fn.random.uniform()
        return fn.random.coin_flip()

    p = pipe()
    with pytest.raises(RuntimeError, match="does not support changing the order"):
        p.run()


def test_a_debug_pipeline_is_not_a_context_manager_and_debug_params_stay_the_functions() -> None:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.random.uniform()

    with pytest.raises(RuntimeError, match="works only with `pipeline_def`"), pipe(debug=True):
        pass

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def own(debug):
        return fn.constant(idata=[int(debug)])

    p = own(debug=True)
    assert not isinstance(p, DebugPipeline)
    assert p.run()[0].as_array().ravel().tolist() == [1]
    p.close()


def _conditional_graph(seen: list | None = None):
    draw = fn.random.uniform(range=[0.0, 1.0])
    if draw > 0.5:
        if draw > 0.75:  # noqa: SIM108 (a statement is what the conditionals convert)
            out = draw * 100.0
        else:
            out = draw + fn.random.uniform(range=[10.0, 11.0])
        if seen is not None:
            seen.append(out)
    else:
        out = draw - fn.random.coin_flip(dtype=types.FLOAT) * 10.0
    return draw, out


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_debug_mode_with_conditionals_returns_what_the_graph_run_returns(seed: int) -> None:
    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=seed, enable_conditionals=True)
    def pipe():
        return _conditional_graph()

    debug, graph = pipe(debug=True), pipe()
    for _ in range(3):
        (draw, out), (ref_draw, ref_out) = debug.run(), graph.run()
        np.testing.assert_array_equal(draw.as_array(), ref_draw.as_array())
        np.testing.assert_array_equal(out.as_array(), ref_out.as_array())
    debug.close()
    graph.close()


def test_a_branch_sees_the_batch_of_the_samples_that_take_it() -> None:
    seen: list = []

    @pipeline_def(batch_size=16, num_threads=1, device_id=None, seed=5, enable_conditionals=True)
    def pipe():
        return _conditional_graph(seen)

    p = pipe(debug=True)
    (draw, _out) = p.run()
    branch = seen[-1]  # the inner branch's merge, as the replay of this iteration saw it
    assert isinstance(branch, DataNodeDebug)
    values = draw.as_array()
    assert len(branch.get()) == int(np.count_nonzero(values > 0.5))
    p.close()


@pytest.mark.parametrize(
    ("extra", "ignored"),
    [
        ({"parallel": True, "prefetch_queue_depth": 3}, "'parallel', 'prefetch_queue_depth'"),
        ({"colour": "blue"}, "'colour'"),
    ],
)
def test_debug_mode_drops_source_arguments_without_effect_with_a_warning(extra, ignored) -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, debug=True)
    def pipe():
        return fn.external_source(np.arange(6).reshape(3, 2, 1), **extra)

    debug = pipe()
    with pytest.warns(UserWarning, match=f"debug mode ignores {ignored}"):
        (out,) = debug.run()
    assert out.as_array().ravel().tolist() == [0, 1]
    debug.close()


def test_outside_debug_mode_the_same_arguments_are_checked() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.external_source(np.arange(6).reshape(3, 2, 1), colour="blue")

    with pytest.raises(TypeError, match="unexpected argument 'colour'"):
        pipe()
