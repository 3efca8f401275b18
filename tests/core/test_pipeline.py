"""Pipeline lifecycle, pruning, pipeline_def, determinism, serialization."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from feedline import OperatorError, Pipeline, PipelineError, fn, pipeline_def, types
from feedline.core.plugins import PluginSystem
from tests.core.ops_for_tests import TestOps


@pytest.fixture(autouse=True)
def test_ops(plugin_system: PluginSystem) -> PluginSystem:
    plugin_system.register(TestOps(), "test-ops")
    return plugin_system


def counter_source(limit: int | None = None, batch: int = 2):
    calls: list[int] = []

    def source(iteration: int) -> np.ndarray:
        if limit is not None and iteration >= limit:
            raise StopIteration
        calls.append(iteration)
        return np.arange(batch, dtype=np.int32).reshape(batch, 1) + 10 * iteration

    return source, calls


def make_pipe(source, depth: int = 2, **kwargs) -> Pipeline:
    @pipeline_def(batch_size=2, num_threads=2, device_id=None, prefetch_queue_depth=depth, **kwargs)
    def graph():
        return fn.external_source(source=source, batch=True)

    return graph()


def values(outputs) -> list[int]:
    return outputs[0].as_array().ravel().tolist()


def test_build_is_idempotent_and_checks_threads() -> None:
    source, _ = counter_source()
    pipe = make_pipe(source)
    pipe.build()
    pipe.build()
    with pytest.raises(TypeError, match="num_threads"):
        Pipeline(batch_size=1).build()
    with pytest.raises(ValueError, match="serialization"):
        Pipeline(batch_size=1, num_threads=0).build()
    pipe.close()


@pytest.mark.parametrize("exec_async", [True, False])
def test_first_schedule_runs_queue_depth_iterations_ahead(exec_async: bool) -> None:
    source, calls = counter_source()
    pipe = make_pipe(source, depth=3, exec_async=exec_async)
    pipe.schedule_run()
    assert values(pipe.share_outputs()) == [0, 1]
    deadline = time.monotonic() + 10
    while len(calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert calls == [0, 1, 2]
    pipe.release_outputs()
    pipe.schedule_run()
    assert values(pipe.outputs()) == [10, 11]
    pipe.close()


def test_run_equals_schedule_plus_outputs_and_api_mixing_fails() -> None:
    source, _ = counter_source()
    pipe = make_pipe(source)
    assert values(pipe.run()) == [0, 1]
    assert values(pipe.run()) == [10, 11]
    with pytest.raises(RuntimeError, match="Mixing pipeline API type"):
        pipe.schedule_run()
    pipe.close()


def test_outputs_with_nothing_scheduled_raise_stop_iteration() -> None:
    source, _ = counter_source()
    pipe = make_pipe(source)
    pipe.build()
    assert pipe.empty()
    with pytest.raises(StopIteration):
        pipe.share_outputs()
    pipe.close()


@pytest.mark.parametrize("pipelined", [True, False])
def test_stop_iteration_ends_epoch_and_reset_restarts(pipelined: bool) -> None:
    source, _ = counter_source(limit=3)
    pipe = make_pipe(source, exec_pipelined=pipelined)
    assert values(pipe.run()) == [0, 1]
    assert values(pipe.run()) == [10, 11]
    assert values(pipe.run()) == [20, 21]
    for _ in range(2):
        with pytest.raises(StopIteration):
            pipe.run()
    pipe.reset()
    assert pipe.epoch_idx == 1
    assert values(pipe.run()) == [0, 1]  # iteration counter restarted
    pipe.close()


def test_reset_without_end_is_a_no_op() -> None:
    source, _ = counter_source()
    pipe = make_pipe(source)
    pipe.run()
    pipe.reset()
    assert pipe.epoch_idx == 0
    assert values(pipe.run()) == [10, 11]
    pipe.close()


def test_run_with_named_inputs_needs_depth_one() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def pushed():
        return fn.external_source(name="src")

    pipe = pushed()
    out = pipe.run(src=np.array([[1], [2]], np.int32))
    assert values(out) == [1, 2]
    pipe.close()
    deep = make_pipe(
        None,
        depth=2,
    )
    with pytest.raises(RuntimeError, match="prefetch_queue_depth=1"):
        deep.run(anything=np.zeros((1, 1)))
    deep.close()


def test_pruning_and_preserve() -> None:
    source, _ = counter_source()

    # No iteration computed ahead, so the run counts below are exact.
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def graph():
        data = fn.external_source(source=source, batch=True)
        fn.copy(data, name="unused")
        fn.copy(data, name="kept", preserve=True)
        return fn.cast(data, dtype=types.FLOAT, name="out")

    pipe = graph()
    pipe.build()
    names = [op.name for op in pipe._built_ops]
    assert "unused" not in names and "kept" in names and "out" in names
    pipe.run()
    assert pipe.executor_statistics()["kept"]["runs"] == 1
    pipe.close()


def test_names_unique_and_auto() -> None:
    with Pipeline(batch_size=1, num_threads=1):
        a = fn.constant(idata=[1])
        b = fn.constant(idata=[2])
        assert a.name == "__Constant_0" and b.name == "__Constant_1"
        fn.constant(idata=[3], name="c")
        with pytest.raises(ValueError, match="already used"):
            fn.constant(idata=[3], name="c")


def test_bool_of_datanode() -> None:
    with Pipeline(batch_size=1, num_threads=1):
        node = fn.constant(idata=[1])
        with pytest.raises(TypeError, match="truth value"):
            bool(node)


def test_pipeline_def_keyword_routing_and_returns() -> None:
    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def graph(batch_size_of_data=2, seed=None):
        return fn.constant(idata=[batch_size_of_data]), fn.constant(fdata=[1.5])

    pipe = graph(batch_size_of_data=5, batch_size=2)
    assert pipe.max_batch_size == 2 and pipe.num_outputs == 2
    a, b = pipe.run()
    assert a.as_array().tolist() == [[5], [5]] and b.dtype is types.FLOAT
    pipe.close()
    with pytest.warns(UserWarning, match="shadows"):
        shadowed = graph(seed=3)
    assert shadowed.seed is None
    takes_kwargs = pipeline_def(lambda **options: None)
    with pytest.raises(TypeError, match=r"`\*\*options`.*not allowed"):
        takes_kwargs(batch_size=1)

    @pipeline_def(batch_size=1, num_threads=1)
    def constant_output():
        return 5

    (five,) = constant_output().run()
    assert five.dtype is types.INT32 and five.as_array().tolist() == [5]

    @pipeline_def(batch_size=2, num_threads=1)
    def scalar_constant_output():
        return types.ScalarConstant(6)

    (six,) = scalar_constant_output().run()
    assert six.dtype is types.INT32 and six.as_array().tolist() == [6, 6]

    @pipeline_def(batch_size=1, num_threads=1)
    def nested():
        node = fn.constant(idata=[1])
        return [node, node]

    pipe = nested()  # as in DALI, the illegal output is reported by build()
    with pytest.raises(TypeError, match=r"The output 0 contains a nested `DataNode`\. Missing"):
        pipe.build()
    # enable_conditionals is the decorator's (tests/core/conditionals), never the Pipeline's.
    a, _ = graph(enable_conditionals=True, batch_size_of_data=4).run()
    assert a.as_array().tolist() == [[4]] * 3


def noisy_pipeline(num_threads: int, seed: int = 7) -> Pipeline:
    @pipeline_def(batch_size=8, num_threads=num_threads, device_id=None, seed=seed)
    def graph():
        data = fn.external_source(source=lambda: np.zeros((8, 4), np.float32))
        scale = fn.external_source(source=lambda: np.arange(8, dtype=np.float32) + 1)
        noisy = fn.test.noise(data, scale=scale)
        return fn.test.noise(fn.test.slow(noisy))

    return graph()


def test_same_seed_same_outputs_for_any_thread_count() -> None:
    results = []
    for threads in (1, 2, 4):
        pipe = noisy_pipeline(threads)
        results.append([pipe.run()[0].as_array().copy() for _ in range(3)])
        pipe.close()
    for other in results[1:]:
        for a, b in zip(results[0], other, strict=True):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(results[0][0], results[0][1])
    different = noisy_pipeline(1, seed=8)
    assert not np.array_equal(different.run()[0].as_array(), results[0][0])
    different.close()


def test_error_names_operator_iteration_sample_and_source() -> None:
    @pipeline_def(batch_size=3, num_threads=2, device_id=None)
    def graph():
        data = fn.external_source(
            source=lambda i: np.arange(3, dtype=np.int32).reshape(3, 1) + 3 * i, batch=True
        )
        return fn.test.fail_on(data, value=4, name="checker")

    pipe = graph()
    pipe.run()
    with pytest.raises(OperatorError) as info:
        pipe.run()
    error = info.value
    assert error.operator == "checker" and error.iteration == 1 and error.sample_index == 1
    assert "poisoned sample" in str(error)
    # the kernel raised a ValueError: the error is one too (DALI raises ValueError for values it
    # cannot use, such as a layout), besides a RuntimeError
    assert isinstance(error, ValueError) and isinstance(error, RuntimeError)
    with pytest.raises(PipelineError, match="earlier error"):
        pipe.run()
    pipe.close()


def test_output_checks() -> None:
    source, _ = counter_source()
    pipe = make_pipe(source, output_dtype=types.FLOAT)
    with pytest.raises(
        PipelineError,
        match="Data type in the output_idx=0 does not match. Expected: FLOAT. Received: INT32.",
    ):
        pipe.run()
    pipe.close()


def test_serialize_round_trip_reproduces_seeded_outputs(tmp_path) -> None:
    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=3)
    def graph():
        data = fn.external_source(name="src")
        return fn.test.noise(fn.cast(data, dtype=types.FLOAT))

    feed = np.arange(8, dtype=np.int32).reshape(4, 2)
    original = graph(prefetch_queue_depth=1)
    original.feed_input("src", feed)
    expected = original.run()[0].as_array().copy()
    text = original.serialize()
    document = json.loads(text)
    assert document["params"]["batch_size"] == 4
    assert (
        document["ops"][0]["args"]["source"] == {"__omitted__": "callable"}
        or document["ops"][0]["args"]["source"] is None
    )
    copy = Pipeline.deserialize(text)
    copy.feed_input("src", feed)
    np.testing.assert_array_equal(copy.run()[0].as_array(), expected)
    path = tmp_path / "pipe.json"
    original.serialize(filename=str(path))
    overridden = Pipeline.deserialize(filename=str(path), batch_size=2, seed=5)
    assert overridden.max_batch_size == 2 and overridden.seed == 5
    with pytest.raises(ValueError, match="not a serialized"):
        Pipeline.deserialize("{}")
    original.close()


def test_python_function_like_ops_are_not_serializable_and_dot_export(tmp_path) -> None:
    source, _ = counter_source()
    pipe = make_pipe(source)
    dot = tmp_path / "g.dot"
    pipe.save_graph_to_dot_file(str(dot), show_tensors=True, use_colors=True)
    text = dot.read_text()
    assert text.startswith("digraph") and "__ExternalSource_0" in text
    pipe.close()


def test_properties_and_argument_errors() -> None:
    pipe = Pipeline(
        batch_size=4, num_threads=2, prefetch_queue_depth={"cpu_size": 3, "gpu_size": 1}
    )
    assert pipe.exec_separated and pipe.cpu_queue_size == 3 and pipe.gpu_queue_size == 1
    assert pipe.seed is None and pipe.device_id is None and pipe.max_batch_size == 4
    with pytest.raises(ValueError, match="exec_async"):
        Pipeline(
            batch_size=1,
            num_threads=1,
            exec_async=False,
            prefetch_queue_depth={"cpu_size": 1, "gpu_size": 1},
        )
    with pytest.raises(ValueError, match="cpu_size"):
        Pipeline(batch_size=1, num_threads=1, prefetch_queue_depth={"cpu": 1, "gpu": 1})
    with pytest.warns(DeprecationWarning, match="negative"):
        assert Pipeline(batch_size=1, num_threads=1, seed=-1).seed is None
    with pytest.raises(ValueError, match="batch_size"):
        Pipeline(batch_size=0, num_threads=1)


def test_gpu_operator_in_cpu_pipeline_fails_at_build() -> None:
    with Pipeline(batch_size=1, num_threads=1) as pipe:
        pipe.set_outputs(fn.constant(idata=[1]).gpu())
    with pytest.raises(PipelineError, match="CPU-only"):
        pipe.build()
    with Pipeline(batch_size=1, num_threads=1, device_id=0):
        on_gpu = fn.constant(idata=[1]).gpu()
        with pytest.raises(ValueError, match="incompatible device gpu"):
            fn.cast(on_gpu, dtype=types.FLOAT, device="cpu")
        with pytest.raises(ValueError, match="Invalid device \"gpu\" for argument 'scale'"):
            fn.test.noise(fn.constant(fdata=[1.0]), scale=on_gpu)  # DALI's words, then ours


@pytest.mark.parametrize(("shapes", "dense"), [([3, 3, 3], True), ([3, 2, 3], False)])
def test_sample_kernels_write_into_one_batch_buffer(shapes: list[int], dense: bool) -> None:
    @pipeline_def(batch_size=3, num_threads=2, device_id=None)
    def graph():
        data = fn.external_source(
            source=lambda: [np.full((n,), i, np.float32) for i, n in enumerate(shapes)]
        )
        return fn.test.double_into(data)

    pipe = graph()
    (out,) = pipe.run()
    assert out.is_dense_tensor() is dense
    assert [s.tolist() for s in out.samples()] == [[2.0 * i] * n for i, n in enumerate(shapes)]
    if dense:
        rows = out.samples()
        assert all(np.shares_memory(rows[0].base, r) for r in rows)
    pipe.close()


def test_sources_with_different_batch_sizes_clash() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def graph():
        a = fn.external_source(source=lambda: np.zeros((2, 1), np.int32))
        b = fn.external_source(source=lambda: np.zeros((1, 1), np.int32), name="short")
        return a, b

    pipe = graph()
    with pytest.raises(OperatorError, match="Batch size clash") as info:
        pipe.run()
    assert info.value.operator == "short"
    pipe.close()


def test_outputs_of_one_source_with_different_batch_sizes_are_refused() -> None:
    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def graph():
        full, short = fn.external_source(
            source=lambda: (np.zeros((4, 1), np.uint8), np.zeros((3, 1), np.uint8)),
            num_outputs=2,
        )
        return full, short

    pipe = graph()
    with pytest.raises(OperatorError, match="Output 1 has batch size = 3, previous batch size = 4"):
        pipe.run()
    pipe.close()
