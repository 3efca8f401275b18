"""``segmentation.select_masks`` and ``segmentation.random_mask_pixel``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn
from feedline.operators.cpu.segmentation.masks import select_masks
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

_POLYGONS = np.array([[0, 0, 3], [1, 3, 7], [2, 7, 10]], np.int32)
_VERTICES = np.arange(20, dtype=np.float32).reshape(10, 2)


def _select(ids: list[int], **kwargs: Any) -> tuple[np.ndarray, np.ndarray]:
    (polygons, _), (vertices, _) = build(
        lambda: tuple(
            fn.segmentation.select_masks(
                feed([np.array(ids, np.int32)] * 2),
                feed([_POLYGONS] * 2),
                feed([_VERTICES] * 2),
                **kwargs,
            )
        )
    )
    return polygons[0], vertices[0]


def test_selection_follows_the_order_of_mask_ids() -> None:
    polygons, vertices = _select([2, 0])
    assert polygons.tolist() == [[2, 0, 3], [0, 3, 6]]
    np.testing.assert_array_equal(vertices, np.concatenate([_VERTICES[7:10], _VERTICES[0:3]]))
    reindexed, _ = _select([2, 0], reindex_masks=True)
    assert reindexed.tolist() == [[0, 0, 3], [1, 3, 6]]


def test_empty_selection() -> None:
    polygons, vertices = _select([])
    assert polygons.shape == (0, 3) and vertices.shape == (0, 2)


def test_last_row_of_a_repeated_mask_id_counts() -> None:
    rows = np.array([[1, 0, 2], [0, 2, 4], [1, 4, 6]], np.int32)
    polygons, vertices = select_masks(np.array([1], np.int32), rows, _VERTICES, True)
    assert polygons.tolist() == [[0, 0, 2]]
    np.testing.assert_array_equal(vertices, _VERTICES[4:6])


@settings(max_examples=40, deadline=None)
@given(st.permutations([0, 1, 2]), st.integers(0, 3))
def test_selected_vertices_are_the_masks_vertices(order: list[int], count: int) -> None:
    ids = np.array(order[:count], np.int32)
    polygons, vertices = select_masks(ids, _POLYGONS, _VERTICES, False)
    for (mask_id, start, end), original in zip(polygons, ids, strict=True):
        assert mask_id == original
        _, in_start, in_end = _POLYGONS[original]
        np.testing.assert_array_equal(vertices[start:end], _VERTICES[in_start:in_end])


@pytest.mark.parametrize(
    ("ids", "polygons", "message"),
    [
        ([5], _POLYGONS, "Selected mask_id 5 is not present"),
        ([0, 0], _POLYGONS, "should not have duplicated values. Got 0 repeated"),
        ([1], np.array([[1, 0, 20]], np.int32), r"\[0, 20\) is out of bounds"),
    ],
)
def test_select_errors(ids: list[int], polygons: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        select_masks(np.array(ids, np.int32), polygons, _VERTICES, False)


def test_select_masks_wants_int32_ids() -> None:
    with pytest.raises(OperatorError, match="expected to be int32"):
        build(
            lambda: tuple(
                fn.segmentation.select_masks(
                    feed([np.array([1], np.int64)] * 2),
                    feed([_POLYGONS] * 2),
                    feed([_VERTICES] * 2),
                )
            )
        )


def _mask() -> np.ndarray:
    mask = np.zeros((10, 12), np.uint8)
    mask[2, 3] = 5
    mask[7, 8] = 2
    return mask


@pytest.mark.parametrize(
    ("kwargs", "allowed"),
    [
        ({"foreground": 1}, {(2, 3), (7, 8)}),
        ({"foreground": 1, "value": 2}, {(7, 8)}),
        ({"foreground": 1, "threshold": 3.0}, {(2, 3)}),
    ],
)
def test_foreground_pixels(kwargs: dict[str, Any], allowed: set[tuple[int, int]]) -> None:
    ((out, layout),) = build(
        lambda: fn.segmentation.random_mask_pixel(feed([_mask()] * 8), **kwargs), batch_size=8
    )
    assert layout == "" and out[0].dtype == np.int64
    assert {tuple(o.tolist()) for o in out} <= allowed


def test_any_pixel_when_no_foreground_matches() -> None:
    ((out, _),) = build(
        lambda: fn.segmentation.random_mask_pixel(feed([_mask()] * 8), foreground=1, value=9),
        batch_size=8,
    )
    assert len({tuple(o.tolist()) for o in out}) > 2
    assert all(0 <= o[0] < 10 and 0 <= o[1] < 12 for o in out)


def test_value_and_threshold_exclude_each_other() -> None:
    with pytest.raises((OperatorError, ValueError), match="can not be provided together"):
        build(
            lambda: fn.segmentation.random_mask_pixel(
                feed([_mask()] * 2), foreground=1, value=2, threshold=1.0
            )
        )


@pytest.mark.parametrize(
    ("name", "example"),
    [
        (
            "segmentation.select_masks",
            OperatorExample(
                [[np.array([2, 0], np.int32)] * 3, [_POLYGONS] * 3, [_VERTICES] * 3],
                args={"reindex_masks": True},
            ),
        ),
        (
            "segmentation.random_mask_pixel",
            OperatorExample([[_mask()] * 3], args={"foreground": 1}),
        ),
    ],
)
def test_check_operator(name: str, example: OperatorExample) -> None:
    assert "threads" in check_operator(name, example)
