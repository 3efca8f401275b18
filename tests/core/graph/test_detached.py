"""Operators called outside any pipeline (DALI's classic style): detached nodes, the graph a
pipeline collects from its outputs, names, seeds, and the foreign operators DALI refuses."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import Pipeline, fn, pipeline_def, types
from feedline.core.names import class_name


def _pipe(**kwargs) -> Pipeline:
    return Pipeline(batch_size=3, num_threads=1, device_id=None, **kwargs)


def _random_graph():
    draw = fn.random.uniform(range=[0.0, 1.0])
    flip = fn.random.coin_flip()
    return draw * 10.0, flip


def test_a_call_outside_a_pipeline_makes_a_detached_node() -> None:
    node = fn.random.uniform(range=[0.0, 1.0])
    assert node.source.graph is None and node.source.position is None
    assert node.name.startswith("__Uniform_detached_")


def test_detached_names_count_per_process_and_never_repeat() -> None:
    names = [fn.constant(idata=[i]).name for i in range(5)]
    numbers = [int(name.rsplit("_", 1)[1]) for name in names]
    assert numbers == sorted(numbers) and len(set(numbers)) == 5


@given(seed=st.integers(0, 2**31 - 1))
def test_the_classic_style_draws_what_the_scoped_style_draws(seed: int) -> None:
    classic = _pipe(seed=seed)
    classic.set_outputs(*_random_graph())
    scoped = _pipe(seed=seed)
    with scoped:
        scoped.set_outputs(*_random_graph())
    for got, expected in zip(classic.run(), scoped.run(), strict=True):
        np.testing.assert_array_equal(got.as_array(), expected.as_array())
    classic.close()
    scoped.close()


def test_define_graph_may_use_nodes_made_before_the_pipeline() -> None:
    reader = fn.constant(idata=[4, 5])

    class Classic(Pipeline):
        def define_graph(self):
            return reader + 1

    pipe = Classic(batch_size=2, num_threads=1, device_id=None)
    (out,) = pipe.run()
    assert out.as_array().tolist() == [[5, 6], [5, 6]]
    pipe.close()


def test_unused_detached_operators_are_not_built() -> None:
    used = fn.constant(idata=[1])
    unused = fn.constant(idata=[2])
    pipe = _pipe()
    pipe.set_outputs(used)
    pipe.build()
    names = [op.name for op in pipe._built_ops]
    assert used.name in names and unused.name not in names
    pipe.close()


def test_one_detached_node_feeds_two_pipelines() -> None:
    shared = fn.constant(idata=[7])
    first, second = _pipe(), _pipe()
    first.set_outputs(shared)
    second.set_outputs(shared * 2)
    assert first.run()[0].as_array().ravel().tolist() == [7, 7, 7]
    assert second.run()[0].as_array().ravel().tolist() == [14, 14, 14]
    first.close()
    second.close()


def test_side_effects_outside_a_pipeline_are_refused_as_in_dali() -> None:
    with pytest.raises(RuntimeError, match="Current Pipeline not set"):
        fn.constant(idata=[1], preserve=True)
    with pytest.raises(RuntimeError, match="Current Pipeline not set"):
        fn.python_function(function=lambda: np.zeros(1), num_outputs=1)


def test_scoped_names_count_per_pipeline_and_skip_explicit_names() -> None:
    with _pipe():
        first = fn.constant(idata=[1])
        named = fn.constant(idata=[2], name="mine")
        second = fn.random.uniform()
    assert (first.name, named.name, second.name) == ("__Constant_0", "mine", "__Uniform_1")


def test_a_node_of_another_pipeline_is_accepted_unless_names_clash() -> None:
    other = _pipe()
    with other:
        foreign = fn.constant(idata=[3])
    pipe = _pipe()
    with pipe:
        pipe.set_outputs(foreign * foreign)
    assert pipe.run()[0].as_array().ravel().tolist() == [9, 9, 9]
    pipe.close()

    clash = _pipe()
    with clash:
        clash.set_outputs(foreign + fn.constant(idata=[1]))  # both are __Constant_0
    with pytest.raises(RuntimeError, match="non-unique names.*different pipeline"):
        clash.build()


def test_a_checkpointing_pipeline_refuses_operators_it_did_not_define() -> None:
    detached = fn.random.uniform()
    pipe = _pipe(enable_checkpointing=True)
    pipe.set_outputs(detached)
    with pytest.raises(RuntimeError, match="checkpointing.*outside the pipeline scope"):
        pipe.build()


def test_constants_are_outputs_outside_a_pipeline() -> None:
    pipe = _pipe()
    pipe.set_outputs(
        types.Constant([1, 2], dtype=types.INT16),
        fn.constant(fdata=[0.5]),
        3,
        types.Constant(4, dtype=types.UINT8),
    )
    vector, half, three, four = pipe.run()
    assert vector.as_array().dtype == np.int16 and vector.as_array()[0].tolist() == [1, 2]
    assert four.as_array().dtype == np.uint8 and four.as_array().tolist() == [4] * 3
    assert half.as_array().ravel().tolist() == [0.5] * 3
    assert three.as_array().ravel().tolist() == [3] * 3
    pipe.close()


def test_identical_pipelines_without_seeds_serialize_identically() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def graph():
        return _random_graph()

    first, second = graph().serialize(), graph().serialize()
    assert first == second
    assert all(op["seed"] is None for op in json.loads(first)["ops"])


def test_seeded_pipelines_store_the_seeds_they_draw_with() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=11)
    def graph():
        return _random_graph()

    pipe = graph()
    document = json.loads(pipe.serialize())
    copy = Pipeline.deserialize(pipe.serialize())
    assert all(isinstance(op["seed"], int) for op in document["ops"])
    for got, expected in zip(copy.run(), pipe.run(), strict=True):
        np.testing.assert_array_equal(got.as_array(), expected.as_array())
    copy.close()
    pipe.close()


@pytest.mark.parametrize(
    ("op_name", "expected"),
    [
        ("readers.file", "File"),
        ("readers.coco", "COCO"),
        ("random.coin_flip", "CoinFlip"),
        ("crop_mirror_normalize", "CropMirrorNormalize"),
        ("bb_flip", "BbFlip"),
        ("bbox_paste", "BBoxPaste"),
        ("random_bbox_crop", "RandomBBoxCrop"),
        ("roi_random_crop", "ROIRandomCrop"),
        ("ssd_random_crop", "SSDRandomCrop"),
        ("readers.tfrecord", "TFRecord"),
        ("hsv", "Hsv"),
        ("dl_tensor_python_function", "DLTensorPythonFunction"),
    ],
)
def test_class_names_follow_dali(op_name: str, expected: str) -> None:
    assert class_name(op_name) == expected
