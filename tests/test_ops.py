"""``feedline.ops``: DALI's object API generated from the registry (names, arguments at
construction and call, one node per call, the subclass style with ``define_graph``)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from feedline import Pipeline, fn, ops, pipeline_def
from feedline.core.names import class_name
from feedline.core.plugins import PluginSystem, get_registry
from tests.core.ops_for_tests import TestOps


@pytest.fixture(autouse=True)
def test_ops(plugin_system: PluginSystem) -> PluginSystem:
    plugin_system.register(TestOps(), "test-ops")
    return plugin_system


def _pipe(**kwargs) -> Pipeline:
    return Pipeline(batch_size=2, num_threads=1, device_id=None, **kwargs)


def _resolve(namespace, dotted: str):
    target = namespace
    for part in dotted.split("."):
        target = getattr(target, part)
    return target


@pytest.mark.parametrize(
    ("path", "op_name"),
    [
        ("readers.File", "readers.file"),
        ("readers.COCO", "readers.coco"),
        ("decoders.Image", "decoders.image"),
        ("random.CoinFlip", "random.coin_flip"),
        ("Resize", "resize"),
        ("CropMirrorNormalize", "crop_mirror_normalize"),
        ("ExternalSource", "external_source"),
        ("BbFlip", "bb_flip"),
        ("RandomBBoxCrop", "random_bbox_crop"),
    ],
)
def test_dali_class_names(path: str, op_name: str) -> None:
    cls = _resolve(ops, path)
    assert cls.schema_name == op_name
    assert cls.__name__ == path.rsplit(".", 1)[-1]
    assert cls.__module__ == "feedline.ops" + "".join("." + p for p in path.split(".")[:-1])


def test_every_registered_operator_is_in_fn_and_in_ops() -> None:
    for name, entry in get_registry().operators.items():
        if entry.schema.hidden:
            continue
        cls = _resolve(ops, ".".join([*name.split(".")[:-1], class_name(name)]))
        assert cls.schema_name == name
        assert callable(_resolve(fn, name))
    assert ops.test.Noise.schema_name == "test.noise"  # a plugin's operator
    assert "Noise" in dir(ops.test) and "test" in dir(ops)


def test_a_class_is_generated_once_and_carries_the_schema_docs() -> None:
    assert ops.Flip is ops.Flip
    assert "Keyword Args" in ops.Flip.__doc__ and "horizontal" in ops.Flip.__doc__
    params = inspect.signature(ops.Flip).parameters
    assert "horizontal" in params and params["horizontal"].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(inspect.signature(ops.Flip.__call__).parameters)[:2] == ["self", "input"]


def test_unknown_names_fail_at_construction_with_the_closest_name() -> None:
    with pytest.raises(TypeError, match=r"\"Flip\" \(flip got.*'horizontl'.*'horizontal'"):
        ops.Flip(horizontl=1)
    with pytest.raises(AttributeError, match="NoSuchOperator"):
        ops.NoSuchOperator  # noqa: B018


def test_construction_and_call_arguments_merge_but_never_repeat() -> None:
    flip = ops.Flip(horizontal=1)
    with _pipe():
        data = fn.constant(idata=[1, 2, 3], shape=[1, 3], layout="HW")
        merged = flip(data, vertical=1)
        kept = flip(data, horizontal=None)
        with pytest.raises(ValueError, match="`horizontal` was already specified in __init__"):
            flip(data, horizontal=0)
        with pytest.raises(TypeError, match="device is chosen when the operator is constructed"):
            flip(data, device="cpu")
    assert merged.source.args["horizontal"] == 1 and merged.source.args["vertical"] == 1
    assert kept.source.args["horizontal"] == 1


def test_each_call_is_a_new_operator_with_its_own_draws() -> None:
    uniform = ops.random.Uniform(range=[0.0, 1.0])
    pipe = _pipe(seed=5)
    with pipe:
        first, second = uniform(), uniform()
        pipe.set_outputs(first, second)
    assert first.source is not second.source and first.name != second.name
    a, b = pipe.run()
    assert not np.array_equal(a.as_array(), b.as_array())
    pipe.close()


def test_a_named_instance_called_twice_clashes_at_build_as_in_dali() -> None:
    reader = ops.random.Uniform(name="draw")
    pipe = _pipe()
    pipe.set_outputs(reader(), reader())
    with pytest.raises(RuntimeError, match="non-unique names"):
        pipe.build()


def test_datanode_arguments_at_construction_and_call() -> None:
    noise = ops.test.Noise()
    pipe = _pipe(seed=1)
    with pipe:
        data = fn.constant(fdata=[0.0, 0.0])
        scale = fn.constant(fdata=0.0)
        zero = ops.test.Noise(scale=scale)(data)
        pipe.set_outputs(zero, noise(data, scale=scale))
    first, second = pipe.run()
    assert first.as_array().tolist() == second.as_array().tolist() == [[0.0, 0.0]] * 2
    pipe.close()


def test_ops_graph_equals_the_fn_graph() -> None:
    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=9)
    def with_fn():
        return fn.test.noise(fn.constant(fdata=[1.0, 2.0]), scale=0.5), fn.random.coin_flip()

    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=9)
    def with_ops():
        data = ops.Constant(fdata=[1.0, 2.0])()
        return ops.test.Noise(scale=0.5)(data), ops.random.CoinFlip()()

    one, other = with_fn(), with_ops()
    for got, expected in zip(one.run(), other.run(), strict=True):
        np.testing.assert_array_equal(got.as_array(), expected.as_array())
    one.close()
    other.close()


def test_the_subclass_style_with_iter_setup_and_feed_input() -> None:
    class Classic(Pipeline):
        def __init__(self) -> None:
            super().__init__(batch_size=2, num_threads=1, device_id=None)
            self.source = ops.ExternalSource()
            self.flip = ops.Flip(horizontal=1)
            self.fed = 0

        def define_graph(self):
            self.data = self.source()
            return self.flip(self.data)

        def iter_setup(self) -> None:
            batch = np.arange(6, dtype=np.uint8).reshape(1, 2, 3) + self.fed
            self.feed_input(self.data, [batch, batch], layout="HWC")
            self.fed += 1

    pipe = Classic()
    for step in range(2):
        (out,) = pipe.run()
        expected = (np.arange(6, dtype=np.uint8).reshape(1, 2, 3) + step)[:, ::-1]
        assert out.as_array()[0].tolist() == expected.tolist()
    pipe.close()


def test_positional_source_and_function_as_in_dalis_hand_written_classes() -> None:
    source = ops.ExternalSource(lambda: [np.ones(2, np.int32)] * 2, batch=True)
    double = ops.PythonFunction(lambda x: x * 2, num_outputs=1)
    pipe = _pipe()
    with pipe:
        pipe.set_outputs(double(source()))
    assert pipe.run()[0].as_array().tolist() == [[2, 2], [2, 2]]
    pipe.close()
    with pytest.raises(TypeError, match="keyword arguments only"):
        ops.Flip(1)


def test_compose_chains_operators() -> None:
    chain = ops.Compose([ops.Flip(horizontal=1), ops.Flip(horizontal=0, vertical=1)])
    pipe = _pipe()
    with pipe:
        data = fn.constant(idata=[1, 2, 3, 4], shape=[2, 2], layout="HW")
        pipe.set_outputs(chain(data))
    assert pipe.run()[0].as_array()[0].tolist() == [[4, 3], [2, 1]]
    pipe.close()


def test_define_graph_may_return_a_list_of_outputs() -> None:
    class Listed(Pipeline):
        def define_graph(self):
            return [ops.Constant(idata=[1])(), ops.Constant(idata=[2])()]

    pipe = Listed(batch_size=1, num_threads=1, device_id=None)
    assert [out.as_array().tolist() for out in pipe.run()] == [[[1]], [[2]]]
    pipe.close()


def test_dalis_private_ops_names_programs_import() -> None:
    from feedline.data_node import DataNode

    assert ops._DataNode is DataNode
    array = np.arange(24, dtype=np.float32).reshape(2, 3, 4)[:, 1:, ::2]
    back = ops._dlpack_to_array(ops._dlpack_from_array(array))
    np.testing.assert_array_equal(back, array)
    frozen = np.arange(3)
    frozen.flags.writeable = False  # read-only memory goes out as a copy
    np.testing.assert_array_equal(ops._dlpack_to_array(ops._dlpack_from_array(frozen)), frozen)
    assert "_DataNode" not in dir(ops)
