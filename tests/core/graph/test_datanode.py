"""DataNode as DALI's: not iterable, unpacking refused, ``shape()``."""

from __future__ import annotations

import abc
import collections.abc
import typing
from collections.abc import Iterator

import numpy as np
import pytest

from feedline import Pipeline, fn, types
from feedline._utils.hacks import not_iterable
from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import SampleKernel
from feedline.core.plugins import PluginSystem
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from tests.operators.cpu.families import use_families

#: Stand-ins for the ``shapes`` and ``get_property`` operators (DataNode.shape() and
#: DataNode.property() build on them).
SHAPES = OpSchema(
    "shapes",
    "The shape of each sample.",
    inputs=(InputSpec("input"),),
    args=(ArgSpec("dtype", "dtype", types.INT64, "Output type."),),
    random=False,
)


GET_PROPERTY = OpSchema(
    "get_property",
    "A property of each sample.",
    inputs=(InputSpec("input"),),
    args=(ArgSpec("key", "str", doc="The property."),),
    random=False,
)


class PropertyKernel(SampleKernel):
    def output_layouts(self, input_layouts):
        return ("",)

    def run_sample(self, inputs, args, sample):
        return np.frombuffer(f"{self.args['key']}:{sample.index}".encode(), np.uint8)


class ShapesKernel(SampleKernel):
    def output_layouts(self, input_layouts):
        return ("",)

    def run_sample(self, inputs, args, sample):
        return np.asarray(inputs[0].shape, types.to_numpy_dtype(self.args["dtype"]))


class ShapesPlugin:
    @hookimpl
    def feedline_register_operators(self, registry):
        registry.add_operator(SHAPES, {"cpu": ShapesKernel})
        registry.add_operator(GET_PROPERTY, {"cpu": PropertyKernel})


@pytest.fixture(autouse=True)
def plugins(empty_plugin_system: PluginSystem) -> Iterator[PluginSystem]:
    use_families(empty_plugin_system, "tensor")
    empty_plugin_system.register(ShapesPlugin(), "shapes")
    yield empty_plugin_system


def test_a_datanode_is_not_iterable() -> None:
    node = fn.constant(idata=[1, 2, 3])
    assert not isinstance(node, collections.abc.Iterable)
    assert not isinstance(node, typing.Iterable)
    assert not issubclass(type(node), collections.abc.Iterable)
    with pytest.raises(TypeError, match="cannot be iterated or unpacked"):
        iter(node)


def test_unpacking_one_node_says_how_many_outputs_its_operator_has() -> None:
    node = fn.constant(idata=[1, 2, 3])
    with pytest.raises(TypeError, match=r"output 0 of operator 'constant' \(1 output\)"):
        _first, _second = node
    with pytest.raises(TypeError, match="cannot be iterated"):
        list(node)


def test_not_iterable_hides_a_class_and_its_subclasses_only() -> None:
    class Listing:
        def __iter__(self) -> Iterator[int]:
            yield 1

    class Child(Listing):
        pass

    assert isinstance(Listing(), collections.abc.Iterable)  # the answer is cached now
    not_iterable(Listing)
    assert not isinstance(Listing(), collections.abc.Iterable)
    assert not isinstance(Child(), collections.abc.Iterable)
    assert not issubclass(Child, collections.abc.Iterable)
    with pytest.raises(TypeError, match="Child` are not iterable"):
        iter(Child())
    assert isinstance([], collections.abc.Iterable)
    assert isinstance(range(2), collections.abc.Sequence)
    assert not isinstance(3, collections.abc.Iterable)


def test_shape_is_a_node_of_the_sample_shapes() -> None:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        data = fn.constant(idata=list(range(6)), shape=[2, 3])
        pipe.set_outputs(data.shape(), data.shape(dtype=types.INT32))
    wide, narrow = pipe.run()
    assert wide.as_array().tolist() == [[2, 3], [2, 3]] and wide.as_array().dtype == np.int64
    assert narrow.as_array().dtype == np.int32
    pipe.close()


def test_property_and_source_info_are_get_property_nodes() -> None:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        data = fn.constant(idata=[1])
        pipe.set_outputs(data.property("layout"), data.source_info())
    layout, info = pipe.run()
    assert bytes(layout.at(1)).decode() == "layout:1"
    assert bytes(info.at(0)).decode() == "source_info:0"
    pipe.close()


def test_iterable_can_still_be_subclassed_with_a_metaclass_of_ones_own() -> None:
    class Meta(abc.ABCMeta):
        pass

    class Stream(collections.abc.Iterable, metaclass=Meta):
        def __iter__(self) -> Iterator[int]:
            yield 0

    assert isinstance(Stream(), collections.abc.Iterable)
