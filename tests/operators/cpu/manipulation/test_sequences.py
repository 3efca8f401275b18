"""``per_frame``, ``element_extract`` and ``sequence_rearrange``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn
from feedline.operators.cpu.manipulation.sequences import per_frame_layout
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

SEQUENCE = np.arange(24, dtype=np.float32).reshape(4, 3, 2)


@pytest.mark.parametrize(
    ("layout", "ndim", "replace", "expected"),
    [("", 3, False, "F**"), ("", 1, False, "F"), ("FHW", 3, False, "FHW"), ("CHW", 3, True, "FHW")],
)
def test_per_frame_layout(layout: str, ndim: int, replace: bool, expected: str) -> None:
    assert per_frame_layout(layout, ndim, replace) == expected


def test_per_frame_refuses_non_sequences_and_scalars() -> None:
    with pytest.raises(ValueError, match="The input layout should start with 'F', got: HW"):
        per_frame_layout("HW", 2, False)
    with pytest.raises(ValueError, match="Cannot mark zero-dimensional input"):
        per_frame_layout("", 0, False)


def test_per_frame_only_relabels() -> None:
    ((out, layout),) = build(lambda: fn.per_frame(feed([SEQUENCE], "CHW"), replace=True), 1)
    assert layout == "FHW"
    np.testing.assert_array_equal(out[0], SEQUENCE)


def test_element_extract_gives_one_output_per_index() -> None:
    (first, layout), (last, _) = build(
        lambda: tuple(fn.element_extract(feed([SEQUENCE], "FHW"), element_map=[0, 3])), 1
    )
    assert layout == "HW"
    np.testing.assert_array_equal(first[0], SEQUENCE[0])
    np.testing.assert_array_equal(last[0], SEQUENCE[3])


@pytest.mark.parametrize(
    ("kwargs", "layout", "error", "message"),
    [
        (
            {"element_map": [4]},
            "FHW",
            OperatorError,
            "Index `4` from `element_map` is out of bounds",
        ),
        ({"element_map": [-1]}, "FHW", OperatorError, "Negative indices in `element_map`"),
        ({"element_map": [0]}, "HWC", OperatorError, "must start with 'F', got 'HWC'"),
    ],
)
def test_element_extract_errors(kwargs: dict, layout: str, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        build(lambda: fn.element_extract(feed([SEQUENCE], layout), **kwargs), 1)


@given(st.lists(st.integers(0, 3), min_size=1, max_size=6))
@settings(max_examples=20, deadline=None)
def test_sequence_rearrange_follows_new_order(order: list) -> None:
    ((out, layout),) = build(
        lambda: fn.sequence_rearrange(feed([SEQUENCE], "FHW"), new_order=order), 1
    )
    assert layout == "FHW"
    np.testing.assert_array_equal(out[0], SEQUENCE[order])


def test_sequence_rearrange_per_sample_order() -> None:
    orders = [np.array([3, 3], np.int32), np.array([1], np.int32)]
    ((out, _),) = build(lambda: fn.sequence_rearrange(feed([SEQUENCE] * 2), new_order=feed(orders)))
    np.testing.assert_array_equal(out[0], SEQUENCE[[3, 3]])
    np.testing.assert_array_equal(out[1], SEQUENCE[[1]])


@pytest.mark.parametrize(
    ("order", "data", "layout", "message"),
    [
        ([], SEQUENCE, "FHW", "Empty result sequences are not allowed"),
        ([4], SEQUENCE, "FHW", "new_order\\[0\\] must be between 0 and input_sequence_length = 4"),
        ([-1], SEQUENCE, "FHW", "for sample 0, but it is: -1"),
        ([0], SEQUENCE, "CHW", 'got data with layout = "CHW"'),
        ([0], SEQUENCE[:, 0, 0], "F", "Sequence elements must have at least 1 dim"),
    ],
)
def test_sequence_rearrange_errors(order: list, data: Any, layout: str, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        build(lambda: fn.sequence_rearrange(feed([data], layout), new_order=order), 1)


@pytest.mark.parametrize(
    ("name", "example"),
    [
        ("per_frame", OperatorExample([[SEQUENCE] * 3])),
        ("element_extract", OperatorExample([[SEQUENCE] * 3], ["FHW"], {"element_map": [2, 1]})),
        ("sequence_rearrange", OperatorExample([[SEQUENCE] * 3], ["FHW"], {"new_order": [1, 0]})),
    ],
)
def test_check_operator(name: str, example: OperatorExample) -> None:
    assert "threads" in check_operator(name, example)


def test_sequence_rearrange_per_sample_order_must_be_1d() -> None:
    orders = [np.array([[1], [2]], np.int32)]
    with pytest.raises(OperatorError, match="Input with dimension 2 cannot be converted"):
        build(lambda: fn.sequence_rearrange(feed([SEQUENCE]), new_order=feed(orders)), 1)
