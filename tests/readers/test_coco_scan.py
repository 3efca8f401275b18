"""Tests of the NumPy JSON structural index, checked against the json module."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.readers.coco_numbers import split_tokens
from feedline.readers.coco_scan import PAD, JsonIndex, Malformed, read_padded
from tests.readers.coco_data import padded

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**6), 10**6),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(alphabet='ab"\\[]{},: \n\u00e9', max_size=6),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(alphabet='k"\\[]{}', max_size=4), children, max_size=4),
    ),
    max_leaves=25,
)


def _containers(value: object, depth: int, out: list[tuple[str, int]]) -> None:
    if isinstance(value, list):
        out.append(("[", depth))
        for item in value:
            _containers(item, depth + 1, out)
    elif isinstance(value, dict):
        out.append(("{", depth))
        for item in value.values():
            _containers(item, depth + 1, out)


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(st.text(max_size=3), json_values, max_size=4),
    st.sampled_from([None, 1, 3]),
    st.booleans(),
)
def test_index_finds_every_container(doc: dict, indent: int | None, ascii_only: bool) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_only)
    index = JsonIndex(padded(text), workers=2)
    expected_containers: list[tuple[str, int]] = []
    _containers(doc, 1, expected_containers)
    opens = np.flatnonzero(index.is_open)
    assert [chr(index.buf[p]) for p in index.pos[opens]] == [c for c, _ in expected_containers]
    assert index.level[opens].tolist() == [d for _, d in expected_containers]
    for k in opens.tolist():
        inner = text.encode()[index.pos[k] : index.pos[index.match[k]] + 1]
        assert json.loads(inner) is not None
    strings = [json.loads(text.encode()[a : b + 1]) for a, b in
               zip(index.str_open.tolist(), index.str_close.tolist(), strict=True)]  # fmt: skip
    assert all(isinstance(s, str) for s in strings)


@pytest.mark.parametrize(
    "text",
    ['{"a": [1, 2}', '{"a": "x}', '{"a": 1}}', "[1] [2]", '{"a": 1} x', '{"a": [}', "", "  "],
)
def test_index_rejects_broken_structure(text: str) -> None:
    with pytest.raises(Malformed):
        JsonIndex(padded(text))


def test_escaped_quotes_and_backslashes() -> None:
    text = r'{"a\"b": "c\\", "d": ["\\\"[", 1]}'
    index = JsonIndex(padded(text))
    assert index.str_open.size == 4
    assert [chr(index.buf[p]) for p in index.pos] == ["{", "[", "]", "}"]


def test_children_and_list_items() -> None:
    text = '{"x": [[1, 2], [], [3]], "y": [[4] , [5]]}'
    index = JsonIndex(padded(text))
    lists = np.flatnonzero(index.is_open & (index.level == 2))
    items, owner = index.children(lists)
    assert owner.tolist() == [0, 0, 0, 1, 1]
    index.check_list_items(lists, items, owner)
    values, counts = split_tokens(index, items)
    assert values.tolist() == [1, 2, 3, 4, 5] and counts.tolist() == [2, 0, 1, 1, 1]


@pytest.mark.parametrize("text", ['{"x": [[1], 2]}', '{"x": [[1] [2]]}', '{"x": [[1],]}'])
def test_check_list_items_rejects_scalars_and_missing_commas(text: str) -> None:
    index = JsonIndex(padded(text))
    lists = np.flatnonzero(index.is_open & (index.level == 2))
    items, owner = index.children(lists)
    with pytest.raises(Malformed):
        index.check_list_items(lists, items, owner)


def test_read_padded(tmp_path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b'{"a": 1}')
    arr = read_padded(str(path))
    assert arr.size == 8 + PAD and arr[:8].tobytes() == b'{"a": 1}' and not arr[8:].any()
    with pytest.raises(FileNotFoundError, match="missing.json"):
        read_padded(str(tmp_path / "missing.json"))


def test_line_col() -> None:
    index = JsonIndex(padded('{\n  "a": [\n    1]}'))
    assert index.line_col(int(index.pos[1])) == (2, 8)
