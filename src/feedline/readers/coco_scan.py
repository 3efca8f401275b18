"""A structural index of a JSON document, built with NumPy.

:class:`JsonIndex` finds every string and bracket of a document with a few whole-buffer NumPy
passes (cache-sized pieces, in parallel blocks), matches the brackets and so knows the nesting
depth of every container — without creating a Python object per JSON value. Numbers are parsed
by :mod:`feedline.readers.coco_numbers`.

Anything unusual makes the caller fall back to the standard JSON parser, so this module only
needs to be right on what it accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

__all__ = [
    "DELIMITERS",
    "PAD",
    "WHITESPACE",
    "JsonIndex",
    "Malformed",
    "find_bytes",
    "parallel_map",
    "read_padded",
]

PAD = 32
"""Zero bytes after the document, so that 8- and 16-byte windows never run past the buffer."""

_BLOCK = 1 << 24
_PIECE = 1 << 20
WHITESPACE = np.zeros(256, bool)
"""Lookup table: JSON whitespace bytes."""
WHITESPACE[[0x20, 0x09, 0x0A, 0x0D]] = True
DELIMITERS = WHITESPACE.copy()
"""Lookup table: bytes that can end a scalar (whitespace, ',', ']', '}' and the padding)."""
DELIMITERS[[ord(","), ord("]"), ord("}"), 0]] = True

T = TypeVar("T")


class Malformed(Exception):
    """The document is outside what the fast path handles (or not JSON at all)."""


def parallel_map(fn: Callable[[int], T], n: int, workers: int) -> list[T]:
    """``[fn(i) for i in range(n)]`` on ``workers`` threads (NumPy releases the GIL)."""
    if workers <= 1 or n <= 1:
        return [fn(i) for i in range(n)]
    with ThreadPoolExecutor(min(workers, n), thread_name_prefix="feedline-json") as pool:
        return list(pool.map(fn, range(n)))


def read_padded(path: str) -> np.ndarray:
    """The bytes of ``path`` followed by :data:`PAD` zero bytes (one read, no extra copy).

    Raises:
        OSError: the file cannot be read (the message names it).
    """
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(0)
            arr = np.zeros(size + PAD, np.uint8)
            view = memoryview(arr)[:size]
            done = 0
            while done < size:
                count = f.readinto(view[done:])
                if not count:
                    raise OSError(f"cannot read {path!r}: file shrank to {done} of {size} bytes")
                done += count
    except OSError as exc:
        if exc.filename is None and exc.errno is not None:
            raise type(exc)(exc.errno, f"cannot read {path!r}: {exc.strerror}") from None
        raise
    return arr


def _find_block(buf: np.ndarray, lo: int, hi: int, dtype: type) -> tuple[np.ndarray, ...]:
    """Positions of quotes, backslashes, opening and closing brackets in ``buf[lo:hi]``.

    Works through cache-sized pieces with reused scratch buffers.
    """
    mask = np.empty(_PIECE, bool)
    folded = np.empty(_PIECE, np.uint8)
    found: tuple[list[np.ndarray], ...] = ([], [], [], [])

    def add(kind: int, hits: np.ndarray, start: int) -> None:
        where = np.flatnonzero(hits).astype(dtype)
        where += start
        found[kind].append(where)

    for start in range(lo, hi, _PIECE):
        block = buf[start : min(start + _PIECE, hi)]
        m = mask[: block.size]
        f = folded[: block.size]
        np.equal(block, 0x22, out=m)
        add(0, m, start)
        np.equal(block, 0x5C, out=m)
        if m.any():
            add(1, m, start)
        np.bitwise_or(block, 0x20, out=f)  # '[' -> '{', ']' -> '}'
        np.equal(f, 0x7B, out=m)
        add(2, m, start)
        np.equal(f, 0x7D, out=m)
        add(3, m, start)
    return tuple(np.concatenate(parts) if parts else np.empty(0, dtype) for parts in found)


def find_bytes(buf: np.ndarray, lo: int, hi: int, value: int) -> np.ndarray:
    """Positions (int64) of the bytes equal to ``value`` in ``buf[lo:hi]``, piece by piece."""
    mask = np.empty(min(_PIECE, max(hi - lo, 0)), bool)
    parts = []
    for start in range(lo, hi, _PIECE):
        block = buf[start : min(start + _PIECE, hi)]
        m = mask[: block.size]
        np.equal(block, value, out=m)
        where = np.flatnonzero(m)
        where += start
        parts.append(where)
    return np.concatenate(parts) if parts else np.empty(0, np.int64)


def _outside_strings(
    quotes: np.ndarray, opens: np.ndarray, closes: np.ndarray, workers: int
) -> tuple[np.ndarray, np.ndarray]:
    """The brackets outside strings: those with an even number of quotes before them."""
    brackets = (opens, closes)
    kept = parallel_map(
        lambda i: brackets[i][(np.searchsorted(quotes, brackets[i]) & 1) == 0], 2, workers
    )
    return kept[0], kept[1]


class JsonIndex:
    """Strings and brackets of a JSON document.

    Args:
        arr: the document followed by :data:`PAD` zero bytes (see :func:`read_padded`).
        workers: threads for the whole-buffer scan.

    Attributes:
        arr: the document followed by :data:`PAD` zero bytes.
        buf: the document (a view of ``arr``).
        str_open, str_close: positions of the opening and closing quote of every string.
        backslashes: positions of every backslash (escapes are rare; callers check for them).
        pos: positions of every bracket outside strings, in order.
        is_open: whether ``pos[k]`` opens a container.
        level: nesting depth inside the container that event k opens or closes (root = 1).
        match: event index of the bracket matching event k.

    Raises:
        Malformed: unbalanced quotes or brackets, mismatched bracket kinds, or text outside the
            root container.
    """

    def __init__(self, arr: np.ndarray, workers: int = 1) -> None:
        self.arr = arr
        n = arr.size - PAD
        self.buf = buf = arr[:n]
        self.dtype = dtype = np.int32 if arr.size < 2**31 - 64 else np.int64
        bounds = [*range(0, n, _BLOCK), n]
        parts = parallel_map(
            lambda i: _find_block(buf, bounds[i], bounds[i + 1], dtype), len(bounds) - 1, workers
        )
        quotes, back, opens, closes = (
            np.concatenate([p[j] for p in parts]) if parts else np.empty(0, dtype) for j in range(4)
        )
        del parts
        self.backslashes = back
        if back.size:
            quotes = self._drop_escaped(quotes)
        if quotes.size % 2:
            raise Malformed("unterminated string")
        opens, closes = _outside_strings(quotes, opens, closes, workers)
        self.str_open = np.ascontiguousarray(quotes[0::2])
        self.str_close = np.ascontiguousarray(quotes[1::2])
        del quotes
        self._match_brackets(opens, closes)

    def _drop_escaped(self, quotes: np.ndarray) -> np.ndarray:
        buf = self.buf
        cand = quotes[quotes > 0]
        cand = cand[buf[cand - 1] == 0x5C]
        run = np.zeros(cand.size, np.int64)
        active = np.ones(cand.size, bool)
        k = 1
        while active.any():
            idx = cand - k
            active &= idx >= 0
            active[active] = buf[idx[active]] == 0x5C
            run += active
            k += 1
        escaped = cand[(run & 1) == 1]
        return np.setdiff1d(quotes, escaped, assume_unique=True)

    def _match_brackets(self, opens: np.ndarray, closes: np.ndarray) -> None:
        total = opens.size + closes.size
        if total == 0 or opens.size != closes.size:
            raise Malformed("unbalanced brackets")
        both = np.concatenate([opens, closes])
        order = np.argsort(both, kind="stable")  # merges the two sorted runs in linear time
        pos = both[order]
        is_open = order < opens.size
        del both, order
        step = is_open.astype(np.int8)
        step *= 2
        step -= 1
        depth = np.cumsum(step, dtype=np.int32)
        del step
        if depth.min() < 0 or depth[-1] != 0:
            raise Malformed("unbalanced brackets")
        level = depth + ~is_open
        order = np.argsort(
            level.astype(np.int16 if level.max() < 32000 else np.int32), kind="stable"
        )
        first, second = order[0::2], order[1::2]
        buf = self.buf
        if not is_open[first].all() or (buf[pos[second]] != buf[pos[first]] + 2).any():
            raise Malformed("mismatched brackets")
        match = np.empty(total, self.dtype)
        match[first] = second
        match[second] = first
        if match[0] != total - 1:
            raise Malformed("more than one top-level value")
        outside = np.concatenate([buf[: pos[0]], buf[pos[-1] + 1 :]])
        if not WHITESPACE[outside].all():
            raise Malformed("text outside the top-level value")
        self.pos, self.is_open, self.level, self.match = pos, is_open, level, match

    # -- navigation --------------------------------------------------------------------------
    def skip_ws(self, positions: np.ndarray) -> np.ndarray:
        """``positions`` advanced past whitespace."""
        p = positions.copy()
        todo = np.flatnonzero(WHITESPACE[self.arr[p]])
        while todo.size:
            p[todo] += 1
            todo = todo[WHITESPACE[self.arr[p[todo]]]]
        return p

    def event_at(self, positions: np.ndarray) -> np.ndarray:
        """Event indices of the brackets at ``positions`` (which must be brackets)."""
        k = np.searchsorted(self.pos, positions.astype(self.pos.dtype, copy=False))
        if (k >= self.pos.size).any() or (
            self.pos[np.minimum(k, self.pos.size - 1)] != positions
        ).any():
            raise Malformed("expected a bracket")
        return k

    def string_at(self, positions: np.ndarray) -> np.ndarray:
        """Indices (into ``str_open``) of the strings starting at ``positions``."""
        k = np.searchsorted(self.str_open, positions.astype(self.str_open.dtype, copy=False))
        top = self.str_open.size
        if (k >= top).any() or (self.str_open[np.minimum(k, top - 1)] != positions).any():
            raise Malformed("expected a string")
        return k

    def strings_between(self, lo: int, hi: int) -> slice:
        """The strings that start in ``[lo, hi)``, as a slice of ``str_open``."""
        # Needles of the haystack's dtype: a wider one would copy the whole (large) haystack.
        a, b = np.searchsorted(self.str_open, np.array([lo, hi], self.str_open.dtype))
        return slice(int(a), int(b))

    def children(self, parents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Direct child containers of the containers opened by events ``parents`` (sorted).

        Returns:
            ``(events, parent)``: child event indices in document order and, for each, the index
            into ``parents`` of its container.
        """
        if parents.size == 0:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        level = self.level[parents]
        if (level != level[0]).any():
            raise Malformed("containers at different depths")
        lo, hi = int(parents[0]), int(self.match[parents[-1]])
        sub = slice(lo + 1, hi)
        cand = lo + 1 + np.flatnonzero(self.is_open[sub] & (self.level[sub] == level[0] + 1))
        owner = np.searchsorted(parents, cand) - 1
        inside = cand < self.match[parents[owner]]
        return cand[inside], owner[inside]

    def check_list_items(self, lists: np.ndarray, items: np.ndarray, owner: np.ndarray) -> None:
        """Check that the lists opened by events ``lists`` hold exactly the containers ``items``.

        ``items`` are in document order and ``owner[i]`` is the index into ``lists`` of the list
        holding ``items[i]``: between them there must be only commas and whitespace, so a list
        holding a scalar (or a missing comma) is rejected.

        Raises:
            Malformed: on any other content.
        """
        pos, match = self.pos, self.match
        list_open, list_close = pos[lists], pos[match[lists]]
        counts = np.bincount(owner, minlength=lists.size)
        starts = np.concatenate([[0], np.cumsum(counts)])
        first = self.skip_ws(list_open + 1)
        empty = counts == 0
        if (first[empty] != list_close[empty]).any():
            raise Malformed("unexpected list content")
        item_open, item_close = pos[items], pos[match[items]]
        if (first[~empty] != item_open[starts[:-1][~empty]]).any():
            raise Malformed("unexpected list content")
        after = self.skip_ws(item_close + 1)
        last = np.zeros(items.size, bool)
        last[starts[1:][~empty] - 1] = True
        if (after[last] != list_close[owner[last]]).any():
            raise Malformed("unexpected list content")
        more = ~last
        if (self.arr[after[more]] != 0x2C).any():
            raise Malformed("unexpected list content")
        if (self.skip_ws(after[more] + 1) != item_open[1:][more[:-1]]).any():
            raise Malformed("unexpected list content")

    def line_col(self, position: int) -> tuple[int, int]:
        """1-based line and column of byte ``position``."""
        data = self.buf[:position]
        newlines = np.flatnonzero(data == 0x0A)
        line = newlines.size + 1
        column = position - (int(newlines[-1]) + 1 if newlines.size else 0) + 1
        return line, column
