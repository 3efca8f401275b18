"""Tests of vectorised number parsing: every token against Python's JSON grammar and float."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.readers.coco_numbers import parse_at, parse_spans, split_tokens
from feedline.readers.coco_scan import JsonIndex, Malformed
from tests.readers.coco_data import padded

JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


numbers = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e4, 1e4).map(lambda v: f"{v:.{abs(hash(v)) % 5}f}"),
    st.integers(-(10**20), 10**20).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.sampled_from(["0", "-0", "0.0", "1e5", "1E-3", "-2.5e+10", "12345678", "-1234567.5",
                     "9007199254740993", "0.30000000000000004", "123456789012345.6"]),
)  # fmt: skip
garbage = st.sampled_from(["01", "1.", ".5", "+1", "-", "1.2.3", "--1", "abc", "1e", "00.1",
                           "-01", "1/2", "0x10", "1,5", "Infinity", "NaN", "1_0"])  # fmt: skip


def expected(token: str) -> tuple[bool, float | None, int]:
    """(valid, value, length of the number prefix) following the JSON grammar."""
    found = JSON_NUMBER.match(token)
    if found is None:
        return False, None, 0
    return True, float(found.group()), found.end()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(numbers, garbage), min_size=1, max_size=300))
def test_parse_at_matches_python(tokens: list[str]) -> None:
    text = ",".join(tokens)
    starts = np.cumsum([0] + [len(t) + 1 for t in tokens[:-1]])
    values, ends, ok, is_int = parse_at(padded(text), starts)
    for i, token in enumerate(tokens):
        valid, value, length = expected(token)
        assert ok[i] == valid, token
        if valid:
            assert values[i] == value and np.signbit(values[i]) == np.signbit(value), token
            assert ends[i] - starts[i] == length, token
            assert is_int[i] == (not any(c in token[:length] for c in ".eE")), token


@settings(max_examples=40, deadline=None)
@given(st.lists(numbers, min_size=1, max_size=200), st.sampled_from([",", ", ", " ,\n  "]))
def test_parse_spans_between_commas(tokens: list[str], separator: str) -> None:
    text = separator.join(tokens)
    commas = [m.start() for m in re.finditer(",", text)]
    starts = np.array([0] + [c + 1 for c in commas])
    ends = np.array([*commas, len(text)])
    values, got_ends, ok = parse_spans(padded(text), starts, ends)
    assert ok.all()
    assert values.tolist() == [float(t) for t in tokens]
    assert [text[e:end].strip() for e, end in zip(got_ends, ends, strict=True)] == [""] * len(
        tokens
    )


def test_parse_at_known_values() -> None:
    text = "3.25 -0.5 12 1e3 007 7."
    values, ends, ok, is_int = parse_at(padded(text), np.array([0, 5, 10, 13, 17, 21]))
    assert ok.tolist() == [True, True, True, True, True, True]  # "007" reads "0", "7." reads "7"
    assert values.tolist() == [3.25, -0.5, 12.0, 1000.0, 0.0, 7.0]
    assert (ends - [0, 5, 10, 13, 17, 21]).tolist() == [4, 4, 2, 3, 1, 1]
    assert is_int.tolist() == [False, False, True, False, True, True]


@pytest.mark.parametrize("inner", ["1,,2", "1,", "1 2", "1, x", ",1"])
def test_split_tokens_rejects_bad_lists(inner: str) -> None:
    index = JsonIndex(padded("[[" + inner + "]]"))
    with pytest.raises(Malformed):
        split_tokens(index, np.array([1]))
