"""DALI's operator names: schema names (``readers__File``), the CamelCase → snake_case rule and
the conversions between schema, ``fn`` and ``ops`` names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline.core.names import class_name, op_name, schema_name, snake_case
from feedline.core.plugins import get_registry


@pytest.mark.parametrize(
    ("camel", "snake"),
    [
        ("Flip", "flip"),
        ("CoinFlip", "coin_flip"),
        ("HSV", "hsv"),
        ("ROIRandomCrop", "roi_random_crop"),
        ("BBoxPaste", "bbox_paste"),
        ("MXNet", "mxnet"),
        ("TFRecord", "tfrecord"),
        ("Caffe2", "caffe2"),
        ("WarpAffine", "warp_affine"),
        ("ABCdef", "ab_cdef"),  # the last capital of a run starts the next word
        ("pathA", "path_a"),  # trailing capitals after a lower-case letter: a word of their own
        ("AB1CD", "ab1cd"),  # a digit glues the capitals around it
        ("Snake_Case", "snake_case"),  # an underscore is kept, never doubled
    ],
)
def test_snake_case_follows_dalis_rule(camel: str, snake: str) -> None:
    assert snake_case(camel) == snake


@given(st.text(alphabet="abcxyz_", min_size=1, max_size=12))
def test_lower_case_names_are_unchanged(name: str) -> None:
    assert snake_case(name) == name


def test_every_registered_operator_round_trips_through_its_schema_name() -> None:
    for name in get_registry().operators:
        dali_name = schema_name(name)
        assert class_name(name) in dali_name
        assert op_name(dali_name) == name, dali_name
        assert op_name(name) == name
        ops_name = op_name(dali_name, "ops")
        assert class_name(name) in ops_name.rsplit(".", 1)[-1]
        assert ops_name.split(".")[:-1] == name.split(".")[:-1]


def test_schema_names_join_the_module_path_with_double_underscores() -> None:
    assert schema_name("readers.file") == "readers__File"
    assert schema_name("experimental.readers.fits") == "experimental__readers__Fits"
    assert schema_name("random_bbox_crop") == "RandomBBoxCrop"
    assert op_name("_conditional__Merge") == "_conditional.merge"
    assert schema_name("_tensor_subscript") == "_TensorSubscript"
    assert schema_name("_conditional.not_") == "_conditional__Not_"
    with pytest.raises(ValueError, match="api must be"):
        op_name("Flip", "dynamic")
