"""Vectorised JSON number parsing with SWAR arithmetic on 64-bit words, in NumPy.

Many number tokens are parsed at once: each token's bytes are loaded as a little-endian 64-bit
word, the '.' is found and removed, and 8 digits are combined with three multiply-shift steps.
The result is correctly rounded — the mantissa (below 2**53) and the power of ten (at most
10**22) are both exact, so one IEEE division rounds once — and equals Python's ``float``.
Tokens this cannot handle (exponents, more than 16 bytes) go through Python's ``float``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import numpy as np

from feedline.readers.coco_scan import JsonIndex, Malformed, find_bytes

__all__ = ["BYTE_MASKS", "parse_at", "parse_spans", "split_tokens", "word_view"]

_BLOCK = 1 << 22
_CHUNK = 1 << 15
_SPAN_CHUNK = 1 << 14
_U = np.uint64
_HIGHS = _U(0x8080808080808080)
_DOTS = _U(0x2E2E2E2E2E2E2E2E)
_ZEROS = _U(0x3030303030303030)
_LOW7 = _U(0x7F7F7F7F7F7F7F7F)
_ADD76 = _U(0x7676767676767676)
_ABOVE_2D = _U(0x5252525252525252)  # t + 0x52 has bit 7 iff t >= 0x2E
_ABOVE_39 = _U(0x4646464646464646)  # t + 0x46 has bit 7 iff t >= 0x3A
_BYTE_INDEX = _U(0x0001020304050607)
BYTE_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
"""``BYTE_MASKS[k]``: the low ``k`` bytes of a 64-bit word set."""
_LOW = BYTE_MASKS
_POW10 = 10.0 ** np.arange(23)
_EXACT = 1 << 53
_NUMBER = re.compile(rb"[ \t\n\r]*(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)")


def _swar8(x: np.ndarray) -> np.ndarray:
    """Value of 8 decimal digits (0..9 per byte, most significant digit in the lowest byte)."""
    x = ((x & _U(0x0F0F0F0F0F0F0F0F)) * _U(2561)) >> _U(8)
    x = ((x & _U(0x00FF00FF00FF00FF)) * _U(6553601)) >> _U(16)
    return ((x & _U(0x0000FFFF0000FFFF)) * _U(42949672960001)) >> _U(32)


def _byte_index(marks: np.ndarray) -> np.ndarray:
    """Index of the lowest byte whose bit 7 is set in ``marks`` (nonzero), as uint64."""
    lowest = marks & (~marks + _U(1))
    return ((lowest >> _U(7)) * _BYTE_INDEX) >> _U(56)


def _non_digits(x: np.ndarray) -> np.ndarray:
    """Bit 7 set in every byte of ``x`` (already XOR '0') that is not 0..9."""
    return (((x & _LOW7) + _ADD76) | x) & _HIGHS


def _zero_bytes(x: np.ndarray) -> np.ndarray:
    """Bit 7 set in every zero byte of ``x`` (exact, no borrow between bytes)."""
    return ~(((x & _LOW7) + _LOW7) | x) & _HIGHS


def _stops(word: np.ndarray) -> np.ndarray:
    """Bit 7 set in every byte outside '.'..'9' (digits, '.' and '/'; '/' fails parsing later)."""
    t = word & _LOW7
    return ~((t + _ABOVE_2D) & ~(t + _ABOVE_39) & ~word) & _HIGHS


def _short(w: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Digits with at most one '.', 1..8 bytes in ``w`` (modified) → (mantissa, fraction
    digits, ok)."""
    low = _LOW[length]
    w &= low
    dots = _zero_bytes(w ^ _DOTS) & low
    has_dot = dots != 0
    at = _byte_index(dots)
    at[~has_dot] = 8
    keep = _LOW[at]
    w = (w & keep) | ((w >> _U(8)) & ~keep)  # drop the dot
    digits = length - has_dot
    dl = _LOW[digits]
    x = (w ^ _ZEROS) & dl
    mantissa = _swar8(x << (_U(8) * (_U(8) - digits.astype(np.uint64))))
    int_digits = np.where(has_dot, at.astype(np.int64), length)
    frac = digits - int_digits
    ok = ((_non_digits(x) & dl) == 0) & (int_digits > 0) & (has_dot <= (frac > 0))
    ok &= ((w & _U(0xFF)) != _U(0x30)) | (int_digits == 1)  # no leading zeros
    return mantissa, frac, ok


def _long(
    w0: np.ndarray, w1: np.ndarray, length: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Digits with at most one '.', 9..16 bytes in ``w0``, ``w1`` → (mantissa, frac digits, ok)."""
    low1 = _LOW[length - 8]
    w1 = w1 & low1
    dots0 = _zero_bytes(w0 ^ _DOTS)
    dots1 = _zero_bytes(w1 ^ _DOTS) & low1
    dot0, dot1 = dots0 != 0, dots1 != 0
    has_dot = dot0 | dot1
    p0, p1 = _byte_index(dots0), _byte_index(dots1)
    at = np.where(dot0, p0, np.where(dot1, p1 + _U(8), length.astype(np.uint64)))
    # Remove the dot: the bytes above it move down by one (across the words if it is in w0).
    m0 = _LOW[np.where(dot0, p0, _U(8)).astype(np.intp)]
    m1 = _LOW[np.where(dot1, p1, _U(8)).astype(np.intp)]
    n0 = np.where(dot0, (w0 & m0) | ((w0 >> _U(8)) & ~m0) | (w1 << _U(56)), w0)
    n1 = np.where(dot0, w1 >> _U(8), (w1 & m1) | ((w1 >> _U(8)) & ~m1))
    digits = length - has_dot
    d1 = _LOW[digits - 8]
    x0 = n0 ^ _ZEROS
    x1 = (n1 ^ _ZEROS) & d1
    bad = (_non_digits(x0) | (_non_digits(x1) & d1)) != 0
    # Right-align the digits in 16 bytes (a 128-bit shift; NumPy gives 0 for shifts >= 64).
    shift = _U(8) * (16 - digits).astype(np.uint64)
    high = x0 << shift
    low = np.where(
        shift >= _U(64), x0 << (shift - _U(64)), (x1 << shift) | (x0 >> (_U(64) - shift))
    )
    mantissa = _swar8(high) * _U(100_000_000) + _swar8(low)
    int_digits = at.astype(np.int64)
    frac = digits - int_digits
    ok = ~bad & (int_digits > 0) & (has_dot <= (frac > 0)) & (mantissa < _U(_EXACT))
    ok &= ((w0 & _U(0xFF)) != _U(0x30)) | (int_digits == 1)  # no leading zeros
    return mantissa, frac, ok


def _digits(
    words: np.ndarray, start: np.ndarray, length: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mantissa, fraction digits, ok) of the unsigned numbers ``[start, start + length)``.

    ``length`` outside 1..16 gives ok = False.
    """
    short = (length >= 1) & (length <= 8)
    if short.all():
        return _short(words[start], length)
    mantissa = np.zeros(start.size, np.uint64)
    frac = np.zeros(start.size, np.int64)
    ok = np.zeros(start.size, bool)
    i = np.flatnonzero(short)
    mantissa[i], frac[i], ok[i] = _short(words[start[i]], length[i])
    i = np.flatnonzero((length > 8) & (length <= 16))
    mantissa[i], frac[i], ok[i] = _long(words[start[i]], words[start[i] + 8], length[i])
    return mantissa, frac, ok


Parsed = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _finish(arr: np.ndarray, positions: np.ndarray, result: Parsed) -> Parsed:
    """Parse the tokens the SWAR path left out with Python (exponents, long numbers)."""
    values, ends, ok, is_int = result
    rest = np.flatnonzero(~ok)
    if rest.size:
        view = memoryview(arr)
        for i in rest.tolist():
            found = _NUMBER.match(view, int(positions[i]))
            if found is not None:
                text = found.group(1)
                values[i] = float(text)
                ends[i] = found.end(1)
                ok[i] = True
                is_int[i] = not any(c in text for c in b".eE")
    return values, ends, ok, is_int


def _chunks(n: int, fn: Callable[[slice], Parsed]) -> Parsed:
    parts = [fn(slice(lo, min(lo + _CHUNK, n))) for lo in range(0, n, _CHUNK)]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0, bool)
    values, ends, ok, is_int = (np.concatenate(c) for c in zip(*parts, strict=True))
    return values, ends, ok, is_int


def word_view(arr: np.ndarray) -> np.ndarray:
    """Every 8-byte little-endian word of ``arr``, one per byte offset (no copy)."""
    return np.ndarray((arr.size - 7,), dtype="<u8", buffer=arr, strides=(1,))


def _sign(arr: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Skip one space (the usual ``", "`` separator), then note and skip a minus sign."""
    pos = pos + (arr[pos] == 0x20)
    neg = arr[pos] == 0x2D
    return neg, pos + neg


def parse_at(arr: np.ndarray, positions: np.ndarray) -> Parsed:
    """Parse the JSON numbers at ``positions`` (whitespace before a number is skipped).

    Args:
        arr: the document followed by :data:`PAD` bytes.
        positions: where each number (or the whitespace before it) starts (int64).

    Returns:
        ``(values, ends, ok, is_int)``: float64 values (correctly rounded), the position after
        each number, whether a valid JSON number starts there, and whether it has neither
        fraction nor exponent. Where ``ok`` is False the other values are meaningless.
    """
    words = word_view(arr)

    def chunk(part: slice) -> Parsed:
        neg, start = _sign(arr, positions[part])
        stop0 = _stops(words[start])
        in0 = stop0 != 0
        if in0.all():
            length = _byte_index(stop0).astype(np.int64)
        else:
            stop1 = _stops(words[start + 8])
            length = np.where(in0, _byte_index(stop0), _U(8) + _byte_index(stop1))
            length = np.where(in0 | (stop1 != 0), length.astype(np.int64), -1)
        end = start + length
        mantissa, frac, ok = _digits(words, start, length)
        ok &= (arr[end] | 0x20) != 0x65  # exponents go to Python
        value = mantissa.astype(np.float64) / _POW10[frac]
        return np.where(neg, -value, value), end, ok, frac == 0

    return _finish(arr, positions, _chunks(positions.size, chunk))


def parse_spans(
    arr: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parse numbers expected to fill ``[starts, ends)`` (after one optional space).

    Returns:
        ``(values, ends, ok)`` as :func:`parse_at` (without ``is_int``). A token holding
        anything else (more whitespace, an exponent) is parsed by Python from its start, so the
        returned ends differ from ``ends`` where the token is not just a number; callers check
        them.
    """
    words = word_view(arr)
    n = starts.size
    values = np.empty(n, np.float64)
    ok = np.empty(n, bool)
    for lo in range(0, n, _SPAN_CHUNK):
        hi = min(lo + _SPAN_CHUNK, n)
        pos = starts[lo:hi]
        w0 = words[pos]
        space = (w0 & _U(0xFF)) == _U(0x20)
        neg = (np.where(space, w0 >> _U(8), w0) & _U(0xFF)) == _U(0x2D)
        skip = space.astype(np.int64) + neg
        length = ends[lo:hi] - pos - skip
        fits = (length >= 1) & (length + skip <= 8)  # the whole token is in w0
        if fits.all():
            mantissa, frac, good = _short(w0 >> (_U(8) * skip.astype(np.uint64)), length)
        else:
            mantissa, frac, good = _digits(words, pos + skip, np.where(length <= 16, length, -1))
        value = values[lo:hi]
        np.divide(mantissa.astype(np.float64), _POW10[frac], out=value)
        np.negative(value, out=value, where=neg)
        ok[lo:hi] = good
    values, out_ends, ok, _ = _finish(arr, starts, (values, ends.copy(), ok, np.zeros(n, bool)))
    return values, out_ends, ok


def split_tokens(index: JsonIndex, lists: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse the numbers of flat number lists, a few MB of text at a time.

    Args:
        index: the document's index.
        lists: events opening lists that contain only numbers (no strings, no containers).

    Returns:
        ``(values, counts)``: all numbers in document order (float64) and how many each list has.

    Raises:
        Malformed: an empty element (``[1,,2]``) or a token that is not a number.
    """
    if lists.size == 0:
        return np.empty(0, np.float64), np.zeros(0, np.int64)
    opens = index.pos[lists]
    closes = index.pos[index.match[lists]]
    cuts = np.flatnonzero(np.diff(np.cumsum(closes - opens) // _BLOCK)) + 1
    bounds = [0, *cuts.tolist(), lists.size]

    parts = [
        _split_block(index, opens[lo:hi], closes[lo:hi]) for lo, hi in itertools.pairwise(bounds)
    ]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _split_block(
    index: JsonIndex, opens: np.ndarray, closes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    arr = index.arr
    commas = find_bytes(arr, int(opens[0]), int(closes[-1]), 0x2C)
    # Keep the commas inside the lists, ranges [first, end) of ``commas``. Distinct lists are
    # always separated by a comma, so the starts are distinct, and so are the ends.
    first_comma = np.searchsorted(commas, opens)
    end_comma = np.searchsorted(commas, closes)
    marks = np.zeros(commas.size + 1, np.int8)
    marks[first_comma] += 1
    marks[end_comma] -= 1
    commas = commas[np.cumsum(marks[:-1], dtype=np.int8) > 0]
    full = index.skip_ws(opens + 1) != closes
    counts = end_comma - first_comma + full
    # Token k of a list lies between separator k and k + 1 of: its open, its commas, its close.
    total = int(counts.sum())
    ends_at = np.cumsum(counts)
    first = (ends_at - counts)[full]
    last = ends_at[full] - 1
    left = np.empty(total, np.int64)
    mask = np.ones(total, bool)
    mask[first] = False
    left[first] = opens[full]
    left[mask] = commas
    # A token's right separator is the next token's left one, except at the end of its list.
    right = np.empty(total, np.int64)
    right[:-1] = left[1:]
    right[last] = closes[full]
    values, ends, ok = parse_spans(arr, left + 1, right)
    moved = np.flatnonzero(ends != right)
    if not ok.all() or (index.skip_ws(ends[moved]) != right[moved]).any():
        raise Malformed("not a list of numbers")
    return values, counts.astype(np.int64)
