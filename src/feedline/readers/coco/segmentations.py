"""Segmentations from their JSON text: polygon coordinates without a Python object per number.

COCO files hold tens of millions of polygon coordinates. msgspec checks the file and hands over
each annotation's segmentation as its JSON text; :func:`parse_segmentations` turns them into
columns: per annotation its count of polygons (or :data:`OBJECT` for an RLE mask, :data:`NULL`),
per polygon its count of vertices, and the float32 coordinates.

The texts are joined a few MB at a time and parsed by the compiled parser
``feedline_coco.c`` (built on first use like the CPU kernels), which writes the coordinates
straight into one output array. It converts numbers only where it can prove the result equals a
correctly rounding parser's (every number of the COCO 2017 files, every float Python's ``json``
writes on x86; :func:`exact_paths` says which numbers on this machine). It skips a segmentation
holding another number; the skipped ones of a block are parsed together by simdjson, whose
``as_buffer`` flattens the numbers into one float64 buffer, while NumPy reads the structure
(polygons per segmentation, numbers per polygon) from the positions of the brackets and commas,
and merged back in order. After a block it mostly skipped, and everywhere the library cannot be
built (or with ``FEEDLINE_NATIVE=0``), simdjson parses everything, so such numbers never cost
more than simdjson alone. Both give the same values.

Why a parser of our own (measured on a 222 MB file with 400,000 segmentations and 19 million
coordinates, in CPU seconds on a loaded 2-core machine): simdjson's parse and ``as_buffer``
with the structure read by NumPy take 0.58-0.65 s (0.75-1.0 s when the structure was read with
one ``len`` per polygon); the compiled parser takes 0.26-0.31 s. Decoding the coordinates as
Python floats (msgspec, orjson) took about 4× as long as simdjson, NumPy's ``fromstring`` 10×.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import simdjson

from feedline.core.native import NativeLibrary
from feedline.readers.coco.raw import offsets

__all__ = ["LIBRARY", "NULL", "OBJECT", "Segmentations", "exact_paths", "parse_segmentations"]

_HERE = Path(__file__).resolve().parent

#: The compiled segmentation parser (optional: simdjson parses everything without it).
LIBRARY = NativeLibrary(
    "feedline_coco",
    [_HERE / "feedline_coco.c"],
    _HERE / "feedline_coco.h",
    optional=True,
    fallback="about 1.3x slower (COCO annotations with polygon_masks; simdjson parses them)",
)

#: A segmentation's count of polygons when it is an object (an RLE mask) or null.
OBJECT, NULL = -1, -2

_BLOCK = 1 << 22  # bytes of text per parser call
_FULL = 3  # the compiled parser's status for an output buffer too small
_SKIPPED = -3  # its count of polygons for a segmentation holding a number it does not convert
_KINDS = {ord("{"): OBJECT, ord("n"): NULL}


@dataclass
class Segmentations:
    """Parsed segmentations.

    Attributes:
        polygons: int64 per segmentation, its count of polygons, or :data:`OBJECT`/:data:`NULL`.
        vertices: int64 per polygon, its count of vertices.
        coordinates: float32 ``x0, y0, x1, y1…`` of every polygon, in order.
        objects: the JSON text of each object segmentation, by its index.
    """

    polygons: np.ndarray
    vertices: np.ndarray
    coordinates: np.ndarray
    objects: dict[int, bytes]


def parse_segmentations(texts: list[Any]) -> Segmentations | None:
    """Parse segmentations: lists of polygons (lists of an even count of numbers), objects or
    nulls.

    Args:
        texts: the JSON text of each (bytes or another buffer, such as ``msgspec.Raw``), each
            one valid JSON value without surrounding whitespace. The list is emptied as it is
            parsed, which frees the texts (and keeps the peak memory down).

    Returns:
        The columns, or None if a segmentation is something else (the caller's reference
        parser then phrases the error).
    """
    n = len(texts)
    lengths = np.fromiter(map(len, texts), np.int64, n)
    starts = offsets(lengths)
    # A coordinate takes at least two bytes of text ("1,"): never more than half of them.
    # Pages of the output that are never written are never allocated.
    out = _Output(np.empty(n, np.int64), np.empty(int(starts[-1]) // 2 + 1, np.float32))
    library = LIBRARY.try_load()
    if library is not None and not exact_paths(library):
        library = None  # it would leave every list to simdjson
    # simdjson's buffers (and the text, the numbers and the masks of a block) grow with the
    # block: smaller blocks where it parses everything keep 40 MB fewer pages in use.
    block = _BLOCK if library is not None else _BLOCK // 4
    cuts = np.flatnonzero(np.diff(starts[1:] // block)) + 1
    bounds = [0, *cuts.tolist(), n] if n else []
    parser = simdjson.Parser()  # reused: its buffers are allocated once
    objects: dict[int, bytes] = {}
    for lo, hi in itertools.pairwise(bounds):
        run = texts[: hi - lo]
        del texts[: hi - lo]  # each run's texts are freed after it
        if library is None:
            columns = _general(parser, run, lengths[lo:hi])
            if columns is None:
                return None
            out.add(lo, columns)
        else:
            skipped = _compiled(library, parser, run, lengths[lo:hi], lo, out)
            if skipped is None:
                return None
            if 2 * skipped > hi - lo:  # mostly numbers it cannot convert: simdjson from here on
                library = None
        kinds = out.polygons[lo:hi]
        objects.update((lo + k, bytes(run[k])) for k in np.flatnonzero(kinds == OBJECT).tolist())
    return Segmentations(
        out.polygons,
        np.concatenate([np.zeros(0, np.int64), *out.sizes]) // 2,
        out.coordinates[: out.used],
        objects,
    )


class _Output:
    """The columns being written: polygons per segmentation, coordinates per polygon (one array
    per run) and the coordinates, of which ``used`` are written."""

    def __init__(self, polygons: np.ndarray, coordinates: np.ndarray) -> None:
        self.polygons = polygons
        self.sizes: list[np.ndarray] = []
        self.coordinates = coordinates
        self.used = 0

    def add(self, first: int, columns: _Columns) -> None:
        """Append the columns of segmentations ``first, first + 1, …``."""
        polygons, sizes, values = columns
        self.polygons[first : first + polygons.size] = polygons
        self.sizes.append(sizes)
        with np.errstate(over="ignore"):  # beyond float32's range is ±inf, as in the C parser
            self.coordinates[self.used : self.used + values.size] = values
        self.used += values.size


#: Per segmentation its count of polygons (or kind), per polygon its count of coordinates, and
#: the coordinates.
_Columns = tuple[np.ndarray, np.ndarray, np.ndarray]


def exact_paths(library: tuple[Any, Any]) -> int:
    """Which numbers the compiled parser converts itself on this machine: bit 0, up to 2^53 with
    a power of ten up to 22 (double arithmetic); bit 1, up to 19 digits with a power of ten up
    to 27 (x86's long double). Without either, it is not used at all."""
    return int(library[1].fl_coco_exact_paths())


def _compiled(
    library: tuple[Any, Any],
    parser: simdjson.Parser,
    run: list[Any],
    lengths: np.ndarray,
    first: int,
    out: _Output,
) -> int | None:
    """Parse ``run`` (segmentations ``first…``, of ``lengths`` bytes) with the compiled parser;
    the segmentations holding a number it does not convert exactly are then parsed together by
    :func:`_general` and put in their places. Returns how many there were; None if a
    segmentation is malformed."""
    ffi, lib = library
    text = b"".join([*run, b"\0"])  # the NUL ends the parser's last digit run
    sizes = np.empty(len(text) // 2 + 1, np.int64)  # a polygon takes at least two bytes
    polygons = out.polygons[first : first + len(run)]
    used = np.zeros(2, np.int64)
    status = ffi.new("int *")
    done = lib.fl_coco_segmentations(
        ffi.from_buffer(text),
        ffi.from_buffer("int64_t[]", lengths),
        len(run),
        ffi.from_buffer("int64_t[]", polygons),
        ffi.from_buffer("int64_t[]", sizes),
        sizes.size,
        ffi.from_buffer("float[]", out.coordinates) + out.used,
        out.coordinates.size - out.used,
        ffi.from_buffer("int64_t[]", used),
        status,
    )
    if done < len(run):
        if status[0] == _FULL:  # the buffers hold a number per two bytes of text
            raise AssertionError("fl_coco_segmentations: output buffers too small")
        return None
    n_sizes, n_values = used.tolist()
    skipped = polygons == _SKIPPED
    count = int(np.count_nonzero(skipped))
    if count == 0:
        out.sizes.append(sizes[:n_sizes].copy())
        out.used += n_values
        return 0
    indices = np.flatnonzero(skipped).tolist()
    general = _general(parser, [run[k] for k in indices], lengths[skipped])
    if general is None:
        return None
    if count == len(run):
        out.add(first, general)
    else:
        parsed = (polygons, sizes[:n_sizes], out.coordinates[out.used : out.used + n_values])
        out.add(first, _merged(parsed, general, skipped))
    return count


def _merged(parsed: _Columns, general: _Columns, skipped: np.ndarray) -> _Columns:
    """The columns of a run of segmentations: ``general``'s where ``skipped``, ``parsed``'s
    elsewhere (where ``parsed`` has no polygons or coordinates for the skipped ones)."""
    polygons = parsed[0].copy()
    polygons[skipped] = general[0]
    counts = np.maximum(polygons, 0)
    coordinates = [_per_segmentation(p, s) for p, s in (parsed[:2], general[:2])]
    sizes = _interleaved((counts[~skipped], parsed[1]), (counts[skipped], general[1]), skipped)
    with np.errstate(over="ignore"):  # beyond float32's range is ±inf, as in the C parser
        general_values = general[2].astype(np.float32)
    values = _interleaved((coordinates[0], parsed[2]), (coordinates[1], general_values), skipped)
    return polygons, sizes, values


def _per_segmentation(polygons: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Coordinates per segmentation, from polygons per segmentation and coordinates per
    polygon (only the segmentations whose polygons ``sizes`` holds count)."""
    counts = np.maximum(polygons[polygons != _SKIPPED], 0)
    ends = offsets(sizes)[offsets(counts)]
    return np.diff(ends)


def _interleaved(
    first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray], pick: np.ndarray
) -> np.ndarray:
    """Two ragged sequences ``(counts, values)`` merged item by item: item ``i`` takes the next
    ``counts`` values of ``second`` where ``pick[i]``, of ``first`` elsewhere."""
    counts = np.empty(pick.size, np.int64)
    counts[~pick], counts[pick] = first[0], second[0]
    starts = offsets(counts)
    merged = np.empty(int(starts[-1]), np.result_type(first[1], second[1]))
    for mask, (part_counts, values) in ((~pick, first), (pick, second)):
        shift = starts[:-1][mask] - offsets(part_counts)[:-1]
        merged[np.repeat(shift, part_counts) + np.arange(values.size)] = values
    return merged


def _general(parser: simdjson.Parser, run: list[Any], lengths: np.ndarray) -> _Columns | None:
    """Parse ``run`` (segmentations of ``lengths`` bytes) with simdjson; None if one is
    malformed.

    The texts are joined into one JSON array in which each object or null is blanked to an
    empty list (``[]`` and spaces: the same length, so every text keeps its place); simdjson
    converts the numbers, and the structure (polygons per segmentation, numbers per polygon)
    is read from the positions of the brackets and commas with NumPy rather than by visiting
    each polygon in Python."""
    starts = 1 + offsets(lengths + 1)[:-1]  # where each text begins in "[text,text,…]"
    items = list(run)
    if items:  # brackets on the first and last texts: one copy of the run in all
        items[0] = b"[" + items[0]
        items[-1] = bytes(items[-1]) + b"]"
    text = bytearray(b",").join(items) if items else bytearray(b"[]")
    chars = np.frombuffer(text, np.uint8)
    heads = chars[starts]
    polygons = _KIND_OF_HEAD[heads]
    if (polygons == _NOT_A_SEGMENTATION).any():
        return None
    blanked = polygons < 0
    for start, length in zip(starts[blanked].tolist(), lengths[blanked].tolist(), strict=True):
        chars[start : start + length] = _SPACE
        chars[start : start + 2] = _EMPTY_LIST
    doc = None
    try:  # as_buffer fails on anything but numbers in lists
        doc = parser.parse(text)
        values = np.frombuffer(doc.as_buffer(of_type="d"))
    except (ValueError, TypeError, RuntimeError):  # invalid, not a number, beyond 64 bits
        return None
    finally:
        del doc  # the parser can be reused only once its documents are gone
    structure = _structure(chars, lengths.size)
    if structure is None:
        return None
    counts, sizes = structure
    # Numbers outside a polygon (in a segmentation's own list) are in values, not in sizes.
    if sizes.sum() != values.size or (sizes % 2).any():
        return None
    lists = polygons == 0
    polygons[lists] = counts[lists]
    return polygons, sizes, values


#: A segmentation's kind by the first byte of its text: a list (0, its polygons counted
#: later), an object, null, or anything else (not a segmentation).
_NOT_A_SEGMENTATION = -9
_KIND_OF_HEAD = np.full(256, _NOT_A_SEGMENTATION, np.int64)
_KIND_OF_HEAD[[ord("["), ord("{"), ord("n")]] = (0, OBJECT, NULL)
_SPACE, _EMPTY_LIST = ord(" "), np.frombuffer(b"[]", np.uint8)


def _structure(chars: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Polygons per segmentation and numbers per polygon of ``chars``, the JSON array of
    ``count`` segmentations that simdjson read as lists of numbers (so no brackets or commas
    hide in strings); None if a list is nested deeper than a polygon."""
    # In a document of numbers and lists only "[", "]" and an exponent's "e" lie above "Z".
    candidates = np.flatnonzero(chars > ord("Z"))
    kinds = chars[candidates]
    brackets = candidates[(kinds == ord("[")) | (kinds == ord("]"))]
    opens = chars[brackets] == ord("[")
    depth = np.cumsum(np.where(opens, 1, -1))  # after each bracket
    if depth.size and depth.max() > 3:
        return None
    segmentation_starts = brackets[opens & (depth == 2)]
    segmentation_ends = brackets[~opens & (depth == 1)]
    polygon_starts = brackets[opens & (depth == 3)]
    polygon_ends = brackets[~opens & (depth == 2)]
    if segmentation_starts.size != count:
        return None
    separators = np.zeros(polygon_starts.size, np.int64)
    if polygon_starts.size:
        bounds = np.column_stack([polygon_starts, polygon_ends]).reshape(-1)
        commas = chars == ord(",")
        # Counted in 16 bits (NumPy sums those fastest); a polygon of 2^17 bytes or more
        # may hold more commas, and is counted again exactly.
        inside = np.add.reduceat(commas.view(np.uint8), bounds, dtype=np.uint16)[::2]
        separators = inside.astype(np.int64)
        for at in np.flatnonzero(polygon_ends - polygon_starts >= 1 << 17).tolist():
            separators[at] = np.count_nonzero(commas[polygon_starts[at] : polygon_ends[at]])
    sizes = separators + 1
    for at in np.flatnonzero(separators == 0).tolist():  # one number, or none: "[]", "[ ]"
        inside = chars[polygon_starts[at] + 1 : polygon_ends[at]]
        if not bytes(inside).strip():
            sizes[at] = 0
    counts = np.searchsorted(polygon_starts, segmentation_ends) - np.searchsorted(
        polygon_starts, segmentation_starts
    )
    return counts.astype(np.int64), sizes.astype(np.int64)
