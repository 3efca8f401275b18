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
polygons = st.lists(polygon, max_size=4)


def parse(texts: list[str]) -> Any:
    return parse_polygons([t.encode() for t in texts])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(polygons, max_size=8),
    st.sampled_from([None, 0, 2]),
    st.sampled_from([(",", ":"), (", ", ": ")]),
)
def test_matches_json(segs: list[Any], indent: int | None, separators: tuple[str, str]) -> None:
    result = parse([json.dumps(s, indent=indent, separators=separators) for s in segs])
    assert result is not None
    per_seg, vertices, coords = result
    lists = segs
    assert per_seg.tolist() == [len(s) for s in lists]
    assert vertices.tolist() == [len(p) // 2 for s in lists for p in s]
    expected = np.array([v for s in lists for p in s for v in p], np.float64).astype(np.float32)
    assert coords.dtype == np.float32 and np.array_equal(coords, expected)


def test_blocks_agree_with_one_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(polygons_module, "_BLOCK", 4096)
    rng = np.random.default_rng(0)
    segs = [[np.round(rng.random(2 * rng.integers(0, 40)) * 640, 2).tolist()] for _ in range(9000)]
    texts = [json.dumps(s) for s in segs]
    blocks = parse(texts)
    monkeypatch.setattr(polygons_module, "_BLOCK", 1 << 30)
    whole = parse(texts)
    assert blocks is not None and whole is not None
    for a, b in zip(blocks, whole, strict=True):
        assert np.array_equal(a, b)
    assert blocks[0].sum() == len(segs) and blocks[2].size == sum(len(s[0]) for s in segs)


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2]",  # numbers outside a polygon
        "[[[1, 2]]]",  # too deep
        "[[1, 2, 3]]",  # odd number of coordinates
        '[["1", 2]]',
        '[[1, "a,b"]]',
        "[[true, 1]]",
        "[[null, 1]]",
        '[{"x": [1, 2]}]',
        "[[1, 2], 3]",
        "[[[1, 2], [3, 4]]]",  # too deep, with an even count
        "[[1, [2, 3], 4]]",
    ],
)
def test_refuses_what_is_not_a_list_of_polygons(text: str) -> None:
    assert parse(["[[1, 2]]", text]) is None


def test_empty_input() -> None:
    result = parse([])
    assert result is not None and all(part.size == 0 for part in result)
