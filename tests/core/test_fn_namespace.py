"""The ``fn`` namespace keeps one object per sub-namespace and per operator function."""

from __future__ import annotations

import pytest

from feedline import fn
from feedline.core.kernel import Kernel
from feedline.core.plugins import PluginSystem
from feedline.core.schema import OpSchema


def test_sub_namespace_is_the_same_object_on_every_access() -> None:
    assert fn.random is fn.random
    assert fn.readers is fn.readers


def test_replacing_an_operator_in_a_sub_namespace_is_seen_by_later_lookups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def scripted(*args: object, **kwargs: object) -> str:
        return "scripted"

    monkeypatch.setattr(fn.random, "uniform", scripted)
    assert fn.random.uniform() == "scripted"


def test_an_operator_function_is_the_same_object_on_every_access() -> None:
    # DALI code compares them: ``op(42, ...) if op == fn.full else op(...)``
    assert fn.full is fn.full
    assert fn.random.uniform is fn.random.uniform
    assert fn.full is not fn.full_like
    table = {fn.random.uniform: "uniform", fn.transforms.crop: "crop"}
    assert table[fn.random.uniform] == "uniform"
    assert table[fn.transforms.crop] == "crop"


def test_functions_carry_dalis_schema_name_and_their_namespace() -> None:
    from feedline import ops

    assert fn.readers.file._schema_name == "readers__File"
    assert fn.readers.file.__module__ == "feedline.fn.readers"
    assert fn.random_bbox_crop._schema_name == "RandomBBoxCrop"
    assert fn.random_bbox_crop.__module__ == "feedline.fn"
    for name in dir(fn):
        member = getattr(fn, name)
        if callable(member) and hasattr(member, "_schema_name"):
            assert ops._op_name(member._schema_name) == name
    assert fn._to_snake_case("COCOReader") == "coco_reader"
    assert "_to_snake_case" not in dir(fn)


def test_a_kernel_added_later_shows_in_a_fresh_function(
    empty_plugin_system: PluginSystem,
) -> None:
    registry = empty_plugin_system.registry
    registry.add_operator(OpSchema("test.later", "Gets a second device later."), {"cpu": Kernel})
    before = fn.test.later
    assert fn.test.later is before
    registry.add_kernel("test.later", "gpu", Kernel)
    after = fn.test.later
    assert after is not before
    assert "gpu" in after.__doc__
    assert fn.test.later is after
