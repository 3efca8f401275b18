"""Where in a JSON text something went wrong: the JSON path (``$.annotations[3].bbox[2]``), the
line and the column of a byte offset, for errors that the JSON parsers report without a position
(a nesting deeper than they recurse, a number with more digits than Python converts).

The text is walked token by token with a regular expression (strings, brackets, commas; a run of
numbers counts its commas at once), so only the structure costs Python work, and only on the
error path.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

__all__ = ["JsonSpot", "deep_spot", "long_number_spot", "spot_at"]

_TOKEN = re.compile(
    rb'"((?:[^"\\]|\\.)*)"(\s*:)?'  # a string, or an object key with its colon
    rb"|(?:\s*-?[0-9][0-9.eE+\-]*\s*,)+"  # numbers of an array, with their commas
    rb"|[\[\]{},]",
    re.DOTALL,
)
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
#: A JSON path longer than this many levels is shown shortened.
_SHOWN_LEVELS = 8


@dataclass(frozen=True)
class JsonSpot:
    """A place in a JSON text.

    Attributes:
        path: the JSON path of the value there (``$`` is the document).
        line: 1-based line.
        column: 1-based column (in bytes).
        depth: how many arrays and objects enclose it.
    """

    path: str
    line: int
    column: int
    depth: int

    def __str__(self) -> str:
        return f"{self.path} (line {self.line}, column {self.column})"


class _Level:
    """One open array (``key`` None, ``index`` counting its commas) or object (``key``)."""

    __slots__ = ("array", "index", "key")

    def __init__(self, array: bool) -> None:
        self.array = array
        self.index = 0
        self.key: str | None = None

    def step(self) -> str:
        if self.array:
            return f"[{self.index}]"
        key = self.key if self.key is not None else "?"
        return f".{key}" if key.isidentifier() else f"[{key!r}]"


def _format(levels: list[_Level]) -> str:
    steps = [level.step() for level in levels]
    if len(steps) > _SHOWN_LEVELS:
        hidden = len(steps) - _SHOWN_LEVELS
        head, tail = steps[: _SHOWN_LEVELS // 2], steps[-2:]
        steps = [*head, f"…({hidden:,} more levels)…", *tail]
    return "$" + "".join(steps)


def _spot(data: bytes, offset: int, levels: list[_Level]) -> JsonSpot:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return JsonSpot(_format(levels), line, column, len(levels))


def _walk(data: bytes, stop: int | None, max_depth: int | None) -> JsonSpot | None:
    """Walk the structure up to byte ``stop`` or the first nesting deeper than ``max_depth``;
    the spot there (None when neither is reached)."""
    levels: list[_Level] = []
    for match in _TOKEN.finditer(data):
        start = match.start()
        if stop is not None and start >= stop:
            return _spot(data, stop, levels)
        token = match.group()
        first = token[:1]
        if first == b'"':
            if match.group(2) is not None and levels and not levels[-1].array:
                levels[-1].key = match.group(1).decode("utf-8", "replace")
        elif first in (b"[", b"{"):
            levels.append(_Level(first == b"["))
            if max_depth is not None and len(levels) > max_depth:
                return _spot(data, start, levels[:-1])
        elif first in (b"]", b"}"):
            if levels:
                levels.pop()
        elif levels and levels[-1].array:
            end = match.end() if stop is None else min(match.end(), stop)
            levels[-1].index += data.count(b",", start, end)
            if end < match.end():
                return _spot(data, stop, levels)
    return _spot(data, stop, levels) if stop is not None else None


def spot_at(data: bytes, offset: int) -> JsonSpot:
    """The spot of byte ``offset`` (which must not be inside a string) of JSON text ``data``."""
    found = _walk(data, offset, None)
    assert found is not None
    return found


def deep_spot(data: bytes, max_depth: int) -> JsonSpot | None:
    """The first array or object of ``data`` nested deeper than ``max_depth`` (its spot is that
    of the value holding it), or None."""
    return _walk(data, None, max_depth)


def long_number_spot(data: bytes, digits: int | None = None) -> tuple[JsonSpot, int] | None:
    """The first number of ``data`` (outside strings) with more than ``digits`` digits (by
    default Python's limit on converting integers, :func:`sys.get_int_max_str_digits`): its spot
    and its number of digits, or None."""
    limit = digits if digits is not None else sys.get_int_max_str_digits()
    pattern = re.compile(rb"[0-9]{%d,}" % (limit + 1))
    for found in pattern.finditer(data):
        if _inside_string(data, found.start()):
            continue
        return spot_at(data, found.start()), found.end() - found.start()
    return None


def _inside_string(data: bytes, offset: int) -> bool:
    """Whether byte ``offset`` lies inside a JSON string."""
    for match in _STRING.finditer(data):
        if match.start() > offset:
            return False
        if offset < match.end():
            return True
    return False
