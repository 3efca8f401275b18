"""Tests of polygon parsing from JSON text: against json.loads, and what it must refuse."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.readers.coco import polygons as polygons_module
from feedline.readers.coco.polygons import parse_polygons

coordinates = st.one_of(
    st.floats(-50, 700, allow_nan=False).map(lambda v: round(v, 2)),
    st.integers(-5, 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
polygon = st.lists(coordinates, max_size=12).map(lambda p: p + p[:1] if len(p) % 2 else p)


def parse(texts: list[str]) -> Any:
    return parse_polygons([t.encode() for t in texts])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(polygon, max_size=24),
    st.sampled_from([None, 0, 2]),
    st.sampled_from([(",", ":"), (", ", ": ")]),
)
def test_matches_json(polys: list[Any], indent: int | None, separators: tuple[str, str]) -> None:
    result = parse([json.dumps(p, indent=indent, separators=separators) for p in polys])
    assert result is not None
    vertices, coords = result
    assert vertices.tolist() == [len(p) // 2 for p in polys]
    expected = np.array([v for p in polys for v in p], np.float64).astype(np.float32)
    assert coords.dtype == np.float32 and np.array_equal(coords, expected)


def test_blocks_agree_with_one_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(polygons_module, "_BLOCK", 4096)
    rng = np.random.default_rng(0)
    polys = [np.round(rng.random(2 * rng.integers(0, 40)) * 640, 2).tolist() for _ in range(9000)]
    texts = [json.dumps(p) for p in polys]
    blocks = parse(texts)
    monkeypatch.setattr(polygons_module, "_BLOCK", 1 << 30)
    whole = parse(texts)
    assert blocks is not None and whole is not None
    for a, b in zip(blocks, whole, strict=True):
        assert np.array_equal(a, b)
    assert blocks[0].size == len(polys) and blocks[1].size == sum(len(p) for p in polys)


@pytest.mark.parametrize(
    "text",
    [
        "1",  # a number, not a polygon
        "[[1, 2]]",  # too deep
        "[1, 2, 3]",  # odd number of coordinates
        '["1", 2]',
        '[1, "a,b"]',
        '[1, "[2"]',
        "[true, 1]",
        "[null, 1]",
        '{"x": [1, 2]}',
        "[[1], [2]]",  # too deep, with an even count
        "[1, [2, 3], 4]",
        "[1e400, 2]",  # beyond float64
    ],
)
def test_refuses_what_is_not_a_polygon(text: str) -> None:
    assert parse(["[1, 2]", text]) is None


def test_empty_input() -> None:
    result = parse([])
    assert result is not None and all(part.size == 0 for part in result)


def test_the_input_list_is_emptied() -> None:
    texts = [b"[1, 2]", b"[3, 4, 5, 6]"]
    assert parse_polygons(texts) is not None
    assert texts == []
