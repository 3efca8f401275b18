"""DALI's ways of defining a pipeline: ``define_graph`` (member or ``build(define_graph=)``),
``set_outputs``, ``add_sink``, ``deserialize_and_build``, ``start_py_workers``, the ``-1``
parameter values and ``DataNode(name, device, source)``."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import Pipeline, fn, pipeline_def, types
from feedline.pipeline import DataNode


def ramp(iteration: int) -> np.ndarray:
    return np.arange(2, dtype=np.int32).reshape(2, 1) + 10 * iteration


class Legacy(Pipeline):
    def define_graph(self):
        return fn.cast(fn.external_source(source=ramp, batch=True), dtype=types.FLOAT)


def first(outputs) -> list:
    return outputs[0].as_array().ravel().tolist()


def test_define_graph_member_and_build_argument() -> None:
    pipe = Legacy(batch_size=2, num_threads=1, prefetch_queue_depth=1)
    pipe.build()
    assert first(pipe.run()) == [0.0, 1.0]
    pipe.close()

    plain = Pipeline(batch_size=2, num_threads=1, prefetch_queue_depth=1)
    plain.build(define_graph=lambda: fn.external_source(source=ramp, batch=True))
    assert first(plain.run()) == [0, 1]
    with pytest.raises(RuntimeError, match="Duplicate graph definition"):
        plain.build(define_graph=lambda: None)
    plain.close()


def test_build_define_graph_refused_with_set_outputs_or_pipeline_def() -> None:
    with Pipeline(batch_size=2, num_threads=1) as pipe:
        pipe.set_outputs(fn.external_source(source=ramp, batch=True))
    with pytest.raises(RuntimeError, match="Duplicate graph definition"):
        pipe.build(define_graph=lambda: None)

    @pipeline_def(batch_size=2, num_threads=1)
    def decorated():
        return fn.external_source(source=ramp, batch=True)

    with pytest.raises(RuntimeError, match="Duplicate graph definition"):
        decorated().build(define_graph=lambda: None)
    with pytest.raises(TypeError, match="callable"):
        Pipeline(batch_size=2, num_threads=1).build(define_graph="graph")


def test_serialize_with_define_graph_and_a_mistaken_filename(tmp_path) -> None:
    pipe = Pipeline(batch_size=2, num_threads=1)
    text = pipe.serialize(lambda: fn.external_source(name="src"), filename=str(tmp_path / "p"))
    assert (tmp_path / "p").read_text() == text
    with pytest.raises(TypeError, match="filename="):
        Pipeline(batch_size=2, num_threads=1).serialize(str(tmp_path / "q"))


def test_add_sink_keeps_an_unused_operator() -> None:
    def graph(with_sink: bool) -> Pipeline:
        pipe = Pipeline(batch_size=2, num_threads=1, prefetch_queue_depth=1)
        with pipe:
            data = fn.external_source(source=ramp, batch=True)
            side = fn.cast(data, dtype=types.FLOAT, name="side")
            if with_sink:
                pipe.add_sink(side)
            pipe.set_outputs(data)
        return pipe

    pruned, kept = graph(False), graph(True)
    pruned.run()
    kept.run()
    assert "side" not in pruned.executor_statistics()
    assert kept.executor_statistics()["side"]["runs"] == 1
    copy = Pipeline.deserialize(kept.serialize())
    copy.build()
    assert "side" in [op.name for op in copy._built_ops]
    with pytest.raises(TypeError, match="DataNode"):
        kept.add_sink("side")
    with pytest.raises(RuntimeError, match="already built"):
        kept.add_sink(kept._outputs[0])
    for pipe in (pruned, kept, copy):
        pipe.close()


def serialized(batch_size: int = 4, num_threads: int = 2) -> str:
    @pipeline_def(batch_size=batch_size, num_threads=num_threads, seed=9)
    def graph():
        return fn.cast(fn.external_source(name="src"), dtype=types.FLOAT)

    return graph().serialize()


def test_deserialize_and_build_takes_stored_values_where_none_were_given() -> None:
    text = serialized()
    pipe = Pipeline(batch_size=-1, num_threads=-1, prefetch_queue_depth=1)
    pipe.deserialize_and_build(text)
    assert (pipe.max_batch_size, pipe.num_threads, pipe.seed) == (4, 2, 9)
    pipe.feed_input("src", np.ones((4, 1), np.int32))
    assert first(pipe.run()) == [1.0] * 4
    own = Pipeline(batch_size=2, num_threads=1, prefetch_queue_depth=1)
    own.deserialize_and_build(text)
    assert (own.max_batch_size, own.num_threads) == (2, 1)
    with pytest.raises(RuntimeError, match="already defined"):
        own.deserialize_and_build(text)
    defaults = Pipeline()
    defaults.deserialize_and_build(text)
    assert defaults.max_batch_size == 4
    for p in (pipe, own, defaults):
        p.close()


def test_minus_one_keeps_the_stored_value_in_deserialize() -> None:
    text = serialized()
    pipe = Pipeline.deserialize(text, batch_size=-1, num_threads=-1, device_id=-1, seed=-1)
    assert (pipe.max_batch_size, pipe.num_threads, pipe.device_id, pipe.seed) == (4, 2, None, 9)
    pipe.close()


def test_minus_one_defaults_outside_deserialization() -> None:
    with pytest.raises(ValueError, match="only valid for a deserialized pipeline"):
        Legacy(batch_size=-1, num_threads=1).build()
    with pytest.raises(ValueError, match="batch_size"):
        Pipeline(batch_size=-2, num_threads=1)
    with pytest.raises(ValueError, match="serialization"):
        Legacy(batch_size=2, num_threads=-1).build()
    assert '"num_threads": -1' in Legacy(batch_size=2, num_threads=-1).serialize()
    current = Pipeline(batch_size=1, num_threads=1, device_id=-1)
    assert current.device_id == -1  # the current CUDA device, as in DALI
    with pytest.raises(ValueError, match="device_id"):
        Pipeline(batch_size=1, num_threads=1, device_id=-2)


def parallel_ramp(info: types.SampleInfo) -> np.ndarray:
    return np.array([info.idx_in_epoch], np.int32)


def test_start_py_workers_before_build() -> None:
    class Parallel(Pipeline):
        def define_graph(self):
            return fn.external_source(source=parallel_ramp, parallel=True)

    pipe = Parallel(batch_size=2, num_threads=1, py_num_workers=1)
    pipe.start_py_workers()
    assert pipe.py_pool is not None and pipe.py_pool.pids() and not pipe._built
    with pytest.raises(RuntimeError, match="Duplicate graph definition"):
        pipe.build(define_graph=lambda: None)
    pipe.build()
    assert first(pipe.run()) == [0, 1]
    pipe.close()


def test_data_node_constructed_as_in_dali() -> None:
    node = DataNode("x")
    assert (node.name, node.device, node.source) == ("x", "cpu", None)
    assert DataNode("y", device="gpu").device == "gpu"
    with pytest.raises(ValueError, match="device"):
        DataNode("z", device="tpu")
    with Pipeline(batch_size=1, num_threads=1) as pipe:
        with pytest.raises(ValueError, match="without a source operator"):
            fn.cast(node, dtype=types.FLOAT)
        with pytest.raises(ValueError, match="no source operator"):
            pipe.set_outputs(node)
        with pytest.raises(ValueError, match="no source operator"):
            pipe.add_sink(node)
        pipe.set_outputs(fn.external_source(name="src"))
    with pytest.raises(ValueError, match="feed_input: DataNode 'x' has no source operator"):
        pipe.feed_input(node, np.zeros((1, 1), np.int32))
    pipe.close()


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (lambda: ("text",), r"The output 0 is a `<class 'str'>`\. Allowed types are ``DataNode``"),
        (lambda: (1, None), r"The output 1 is a `<class 'NoneType'>`"),
        (
            lambda: (1, (2, [fn.constant(idata=[3])])),
            r"Illegal pipeline output type\. The output 1 contains a nested `DataNode`",
        ),
    ],
)
def test_illegal_outputs_are_reported_by_build_in_dalis_words(outputs, message: str) -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(*outputs())
    with pytest.raises(TypeError, match=message):
        pipe.build()


def test_legal_constant_outputs_still_build() -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    pipe.set_outputs(7, [1, 2], np.float32(0.5))
    seven, pair, half = pipe.run()
    assert (seven.as_array().tolist(), pair.at(0).tolist()) == ([7], [1, 2])
    assert half.dtype is types.FLOAT
