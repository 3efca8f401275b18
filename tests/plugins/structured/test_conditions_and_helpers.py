"""The condition language, the step helpers and the pass-through copy plan."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import types
from feedline.plugins.structured import SampleDataGroup
from feedline.plugins.structured.conditions import Lexer, Parser, TokenType
from feedline.plugins.structured.helpers import get_mapped
from feedline.plugins.structured.passthrough_copy import InsertCopyForPassthrough


def test_lexer_splits_keywords_comparisons_and_numbers() -> None:
    lexer = Lexer("ok = not x_1 >= -2.5")
    kinds = []
    while (token := lexer.next_token()).type != TokenType.EOL:
        kinds.append((token.type, token.value))
    assert kinds == [
        (TokenType.VARIABLE, "ok"),
        (TokenType.ASSIGNMENT, "="),
        (TokenType.LOGICAL_NOT, "not"),
        (TokenType.VARIABLE, "x_1"),
        (TokenType.COMPARISON, ">="),
        (TokenType.MINUS, "-"),
        (TokenType.LITERAL, "2.5"),
    ]


def test_and_binds_tighter_than_or_and_the_tree_evaluates_on_arrays() -> None:
    tree = Parser("keep = a > 1 or b < 0 and not c == 2").parse()
    assert str(tree) == "'keep' = <{('a' > 1) or {('b' < 0) and not [('c' == 2)]}}>"
    values = {"a": np.array([0, 2, 0]), "b": np.array([-1, 0, -1]), "c": np.array([1, 1, 2])}
    assert tree.evaluate(values).tolist() == [True, True, False]


@pytest.mark.parametrize("text", ["x = ", "= a", "x = a >", "x = (a", "x = a $ b"])
def test_malformed_conditions_are_rejected_with_the_text(text: str) -> None:
    with pytest.raises(ValueError, match="condition"):
        Parser(text).parse()


def test_get_mapped_maps_nested_values_with_a_default() -> None:
    mapping = {"car": 1, "bus": 2, None: 0}
    assert get_mapped(["car", ("bus", "tram")], mapping) == [1, [2, 0]]
    assert get_mapped("bus", mapping, encapsulate=True) == [2]
    with pytest.raises(KeyError, match="no default"):
        get_mapped("tram", {"car": 1})


def _tree() -> SampleDataGroup:
    inner = SampleDataGroup()
    inner.add_data_field("label", types.INT32)
    cam = SampleDataGroup()
    cam.add_data_field("label", types.INT32)
    cam.add_data_group_field("meta", inner)
    root = SampleDataGroup()
    root.add_data_field("image", types.UINT8)
    root.add_data_group_field("cam", cam)
    return root


def test_copy_plan_selects_by_name_scope_and_branch() -> None:
    tree = _tree()
    assert set(InsertCopyForPassthrough(tree).paths_to_copy) == {
        ("image",),
        ("cam", "label"),
        ("cam", "meta", "label"),
    }
    by_name = InsertCopyForPassthrough(tree, field_names=["label"])
    assert set(by_name.paths_to_copy) == {("cam", "label"), ("cam", "meta", "label")}
    scoped = InsertCopyForPassthrough(
        tree, field_names=["label"], field_names_scope_paths=[("cam", "meta")]
    )
    assert scoped.paths_to_copy == (("cam", "meta", "label"),)
    assert InsertCopyForPassthrough(tree, branch_paths=[]).paths_to_copy == ()
    with pytest.raises(ValueError, match="does not exist"):
        InsertCopyForPassthrough(tree, branch_paths=[("cam", "nope")])
    with pytest.raises(ValueError, match="not a data group field"):
        InsertCopyForPassthrough(tree, field_names=["label"], field_names_scope_paths=["image"])


def test_facade_mirrors_the_upstream_module_layout() -> None:
    from feedline.structured import inputs, internal_helpers, pipeline, processing_steps
    from feedline.structured.inputs.sfuffled_sharded_input_callable import (
        ShuffledShardedInputCallable,
    )
    from feedline.structured.internal_helpers.mini_parser import Parser as FacadeParser

    assert pipeline.SampleDataGroup is SampleDataGroup
    assert inputs.ShuffledShardedInputCallable is ShuffledShardedInputCallable
    assert FacadeParser is Parser
    assert callable(internal_helpers.get_as_data_node)
    for name in processing_steps.__all__:
        assert hasattr(processing_steps, name)
