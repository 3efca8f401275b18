"""Fast parsing of COCO annotation files into :class:`~feedline.readers.coco_raw.RawCoco`.

The ``annotations`` list — nearly all of a COCO file — is read without creating a Python object
per value: :class:`~feedline.readers.coco_scan.JsonIndex` locates every key, bracket and number
and NumPy parses the numbers, so memory stays near the file size plus the output columns. The
``images`` and ``categories`` lists (small) and RLE objects go through a JSON library (orjson
when installed, else :mod:`json`).

Whatever the fast path does not handle (escaped keys, duplicate keys, unusual values, invalid
JSON) sends the whole file to :func:`~feedline.readers.coco_raw.raw_from_document`, which either
parses it or raises the precise error. The fast path validates the structure (brackets, strings,
list separators) and every value it reads; values it never reads (``area``, annotation ``id``…,
and segmentations when no masks are requested) are only checked for balanced brackets.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from feedline.readers.coco_numbers import BYTE_MASKS, parse_at, split_tokens, word_view
from feedline.readers.coco_raw import (
    CocoFormatError,
    RawCoco,
    Where,
    attach_rles,
    categories_from_list,
    images_from_list,
    offsets,
    raw_from_document,
    rle_to_string,
)
from feedline.readers.coco_scan import (
    DELIMITERS,
    PAD,
    WHITESPACE,
    JsonIndex,
    Malformed,
    parallel_map,
    read_padded,
)

__all__ = ["load_json", "parse_coco"]

_EXACT_INT = float(1 << 53)
_KEYS = ("image_id", "category_id", "iscrowd", "is_crowd", "bbox", "segmentation")
_IMAGE_ID, _CATEGORY_ID, _ISCROWD, _IS_CROWD, _BBOX, _SEGMENTATION = range(len(_KEYS))
_TRUE = int.from_bytes(b"true", "little")
_FALSE = int.from_bytes(b"false", "little")
_NULL = int.from_bytes(b"null", "little")
_ANN_CHUNK = 1 << 13
_IMAGE_CHUNK = 1 << 12


@dataclass
class _Chunk:
    """The columns of a run of annotations (see :class:`RawCoco`), per-chunk counts."""

    image_ids: np.ndarray
    category_ids: np.ndarray
    crowd: np.ndarray
    boxes: np.ndarray
    polygons: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    vertices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    coords: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    rle_owner: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    rles: list[tuple[int, int, bytes]] = field(default_factory=list)


def load_json(data: bytes | memoryview) -> Any:
    """Parse JSON text with orjson when installed, else with :mod:`json`.

    Both reject what JSON does not allow (``NaN``, ``Infinity``) with a ValueError.
    """
    try:
        import orjson
    except ImportError:
        return json.loads(bytes(data), parse_constant=_reject_constant)
    return orjson.loads(data)


@contextmanager
def _no_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_coco(path: str, want_polygons: bool, want_rle: bool, workers: int = 1) -> RawCoco:
    """Parse the COCO annotation file ``path``.

    Args:
        path: the JSON file.
        want_polygons: collect polygon segmentations.
        want_rle: also collect RLE segmentations (implies ``want_polygons``).
        workers: threads for the whole-file NumPy passes and for the annotations, which are
            parsed in cache-sized chunks (their large NumPy operations release the GIL).

    Raises:
        OSError: the file cannot be read.
        CocoFormatError: invalid JSON (with line and column) or invalid COCO content (naming the
            entry).
    """
    want_polygons = want_polygons or want_rle
    arr = read_padded(path)
    with _no_gc():
        index = None
        try:
            if arr[:4].all() and not arr[:3].tobytes().startswith(b"\xef\xbb\xbf"):
                index = JsonIndex(arr, workers)
                return _FastParser(index, path, want_rle, workers).parse(want_polygons)
        except Malformed:
            pass
        return _parse_document(arr, path, want_polygons, want_rle, index)


def _parse_document(
    arr: np.ndarray, path: str, want_polygons: bool, want_rle: bool, index: JsonIndex | None
) -> RawCoco:
    text = arr[: arr.size - PAD].tobytes()
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise CocoFormatError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno} (byte {exc.pos}): "
            f"{exc.msg}"
        ) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise CocoFormatError(f"{path}: invalid JSON: {exc}") from None
    del text
    locate = _Locator(index) if index is not None else None
    return raw_from_document(doc, path, want_polygons, want_rle, locate)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class _Locator:
    """Line and column of entry ``i`` of a top-level list, from the structural index."""

    def __init__(self, index: JsonIndex) -> None:
        self.index = index
        try:
            self.members = _root_members(index)
        except Malformed:
            self.members = {}

    def __call__(self, key: str, i: int) -> str:
        member = self.members.get(key)
        if member is None or member[1] < 0:
            return ""
        items, _ = self.index.children(np.array([member[1]]))
        if i >= items.size:
            return ""
        line, column = self.index.line_col(int(self.index.pos[items[i]]))
        return f" (line {line}, column {column})"


def _skip(arr: np.ndarray, p: int) -> int:
    while WHITESPACE[arr[p]]:
        p += 1
    return p


def _root_members(index: JsonIndex) -> dict[str, tuple[int, int]]:
    """Top-level keys → (value position, event index of the value's bracket or -1)."""
    arr, pos, match = index.arr, index.pos, index.match
    if arr[pos[0]] != 0x7B:
        raise Malformed("the top level is not an object")
    end = int(pos[-1])
    members: dict[str, tuple[int, int]] = {}
    p = _skip(arr, int(pos[0]) + 1)
    while p != end:
        if arr[p] != 0x22:
            raise Malformed("expected a key")
        q = int(index.str_close[index.string_at(np.array([p]))[0]])
        name = json.loads(arr[p : q + 1].tobytes())
        p = _skip(arr, q + 1)
        if arr[p] != 0x3A:
            raise Malformed("expected ':'")
        p = _skip(arr, p + 1)
        if arr[p] in (0x5B, 0x7B):
            event = int(index.event_at(np.array([p]))[0])
            members[name] = (p, event)
            p = int(pos[match[event]]) + 1
        elif arr[p] == 0x22:
            members[name] = (p, -1)
            p = int(index.str_close[index.string_at(np.array([p]))[0]]) + 1
        else:
            members[name] = (p, -1)
            start = p
            while not DELIMITERS[arr[p]]:
                p += 1
            try:
                load_json(arr[start:p].tobytes())
            except ValueError:
                raise Malformed("invalid top-level value") from None
        p = _skip(arr, p)
        if arr[p] == 0x2C:
            p = _skip(arr, p + 1)
        elif p != end:
            raise Malformed("expected ',' or '}'")
    return members


class _FastParser:
    def __init__(self, index: JsonIndex, path: str, want_rle: bool, workers: int = 1) -> None:
        self.index = index
        self.workers = workers
        self.arr = index.arr
        self.words = word_view(self.arr)
        self.where = Where(path, _Locator(index))
        self.want_rle = want_rle

    def parse(self, want_polygons: bool) -> RawCoco:
        members = _root_members(self.index)
        for key in ("images", "categories", "annotations"):
            if key in members and self.arr[members[key][0]] != 0x5B:
                raise Malformed(f"{key} is not a list")
        if "images" not in members:
            raise Malformed("no images")
        ids, widths, heights, names = self._images(members["images"][1])
        categories = (
            categories_from_list(self._load(members["categories"]), self.where)
            if "categories" in members
            else np.zeros(0, np.int64)
        )
        raw = RawCoco(
            image_ids=ids,
            widths=widths,
            heights=heights,
            file_names=names,
            category_ids=categories,
            ann_image_ids=np.zeros(0, np.int64),
            ann_category_ids=np.zeros(0, np.int64),
            ann_crowd=np.zeros(0, bool),
            ann_boxes=np.zeros((0, 4), np.float32),
        )
        objects = np.zeros(0, np.int64)
        if "annotations" in members:
            lists = np.array([members["annotations"][1]])
            objects, owner = self.index.children(lists)
            self.index.check_list_items(lists, objects, owner)
            if (self.arr[self.index.pos[objects]] != 0x7B).any():
                raise Malformed("an annotation is not an object")
        if objects.size:
            self._annotations(raw, objects, want_polygons)
        elif want_polygons:
            raw.ann_poly_off = np.zeros(1, np.int64)
            raw.poly_vert_off = np.zeros(1, np.int64)
            raw.vertices = np.zeros((0, 2), np.float32)
            if self.want_rle:
                raw.ann_rle = np.zeros(0, np.int64)
                attach_rles(raw, [])
        return raw

    def _images(self, event: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
        """The ``images`` columns, parsed a few thousand entries at a time (little memory)."""
        index = self.index
        lists = np.array([event])
        objects, owner = index.children(lists)
        index.check_list_items(lists, objects, owner)
        if (self.arr[index.pos[objects]] != 0x7B).any():
            raise Malformed("an image is not an object")
        opens, closes = index.pos[objects], index.pos[index.match[objects]] + 1
        parts = []
        for lo in range(0, objects.size, _IMAGE_CHUNK):
            hi = min(lo + _IMAGE_CHUNK, objects.size)
            text = b"[" + self.arr[opens[lo] : closes[hi - 1]].tobytes() + b"]"
            try:
                entries = load_json(text)
            except ValueError as exc:
                raise Malformed(str(exc)) from None
            parts.append(images_from_list(entries, self.where, lo))
        if not parts:
            return images_from_list([], self.where)
        ids, widths, heights = (np.concatenate([p[k] for p in parts]) for k in range(3))
        return ids, widths, heights, [name for p in parts for name in p[3]]

    def _load(self, member: tuple[int, int]) -> Any:
        index = self.index
        end = int(index.pos[index.match[member[1]]]) + 1
        try:
            return load_json(memoryview(self.arr)[member[0] : end])
        except ValueError as exc:
            raise Malformed(str(exc)) from None

    # -- annotations ---------------------------------------------------------------------------
    def _annotations(self, raw: RawCoco, objects: np.ndarray, want_polygons: bool) -> None:
        n = objects.size
        bounds = [*range(0, n, _ANN_CHUNK), n]
        chunks = parallel_map(
            lambda i: self._chunk(objects[bounds[i] : bounds[i + 1]], bounds[i], want_polygons),
            len(bounds) - 1,
            self.workers,
        )
        raw.ann_image_ids = np.concatenate([c.image_ids for c in chunks])
        raw.ann_category_ids = np.concatenate([c.category_ids for c in chunks])
        raw.ann_crowd = np.concatenate([c.crowd for c in chunks])
        raw.ann_boxes = np.concatenate([c.boxes for c in chunks])
        if want_polygons:
            raw.ann_poly_off = offsets(np.concatenate([c.polygons for c in chunks]))
            raw.poly_vert_off = offsets(np.concatenate([c.vertices for c in chunks]))
            raw.vertices = np.concatenate([c.coords for c in chunks]).reshape(-1, 2)
        if self.want_rle:
            ann_rle = np.full(n, -1, np.int64)
            owners = np.concatenate([c.rle_owner for c in chunks])
            ann_rle[owners] = np.arange(owners.size)
            raw.ann_rle = ann_rle
            attach_rles(raw, [r for c in chunks for r in c.rles])

    def _chunk(self, objects: np.ndarray, base: int, want_polygons: bool) -> _Chunk:
        """Parse the annotation objects opened by events ``objects`` (entries ``base``…)."""
        index, arr = self.index, self.arr
        n = objects.size
        obj_open = index.pos[objects]
        strings = index.strings_between(int(obj_open[0]), int(index.pos[index.match[objects[-1]]]))
        s_open, s_close = index.str_open[strings], index.str_close[strings]
        # Keys are the strings outside the containers nested in the objects (which never overlap).
        nested, _ = index.children(objects)
        first = np.searchsorted(s_open, index.pos[nested])
        end = np.searchsorted(s_open, index.pos[index.match[nested]])
        inside = np.bincount(first, minlength=s_open.size + 1)
        inside -= np.bincount(end, minlength=s_open.size + 1)
        direct = np.cumsum(inside[:-1]) == 0
        s_open, s_close = s_open[direct], s_close[direct]
        colon = index.skip_ws(s_close + 1)
        is_key = arr[colon] == 0x3A
        s_open, s_close, colon = s_open[is_key], s_close[is_key], colon[is_key]
        back = index.backslashes
        if back.size and (np.searchsorted(back, s_open) != np.searchsorted(back, s_close)).any():
            raise Malformed("escaped key")
        code = self._key_codes(s_open, s_close)
        known = code >= 0
        s_open, colon, code = s_open[known], colon[known], code[known]
        owner = np.searchsorted(obj_open, s_open) - 1
        value = index.skip_ws(colon + 1)

        def column(key: int, required: bool) -> tuple[np.ndarray, np.ndarray]:
            sel = code == key
            counts = np.bincount(owner[sel], minlength=n)
            if (counts > 1).any() or (required and (counts == 0).any()):
                raise Malformed(f"missing or repeated {_KEYS[key]}")
            return owner[sel], value[sel]

        chunk = _Chunk(
            image_ids=self._integers(*column(_IMAGE_ID, True), n),
            category_ids=self._integers(*column(_CATEGORY_ID, True), n),
            crowd=np.zeros(n, bool),
            boxes=np.empty((n, 4), np.float32),
        )
        for key in (_IS_CROWD, _ISCROWD):  # iscrowd wins over is_crowd
            who, where = column(key, False)
            chunk.crowd[who] = self._flags(where)
        who, where = column(_BBOX, True)
        boxes = index.event_at(where)
        self._number_lists(boxes)
        self._after_value(index.pos[boxes + 1] + 1)
        if not want_polygons:
            chunk.boxes[who] = self._boxes(boxes)
            return chunk
        polygons = self._segmentations(chunk, *column(_SEGMENTATION, False), base)
        # One pass over the chunk's text parses the numbers of every box and polygon list.
        lists = np.concatenate([boxes, polygons])
        order = np.argsort(lists, kind="stable")
        values, counts = split_tokens(index, lists[order])
        is_polygon = order >= boxes.size
        polygon_value = np.repeat(is_polygon, counts)
        if (counts[~is_polygon] != 4).any():
            raise Malformed("a bbox without 4 numbers")
        chunk.boxes[who] = values[~polygon_value].reshape(-1, 4)
        counts = counts[is_polygon]
        if (counts % 2).any():
            raise Malformed("odd number of coordinates")
        chunk.vertices = counts // 2
        chunk.coords = values[polygon_value].astype(np.float32)
        return chunk

    def _key_codes(self, s_open: np.ndarray, s_close: np.ndarray) -> np.ndarray:
        length = s_close - s_open - 1
        w0 = self.words[s_open + 1]
        w1 = self.words[s_open + 9]
        code = np.full(s_open.size, -1, np.int64)
        for i, name in enumerate(_KEYS):
            raw = name.encode()
            c0 = np.uint64(int.from_bytes(raw[:8], "little"))
            hit = (length == len(raw)) & ((w0 & BYTE_MASKS[min(len(raw), 8)]) == c0)
            if len(raw) > 8:
                c1 = np.uint64(int.from_bytes(raw[8:], "little"))
                hit &= (w1 & BYTE_MASKS[len(raw) - 8]) == c1
            code[hit] = i
        return code

    def _after_value(self, ends: np.ndarray) -> None:
        after = self.index.skip_ws(ends)
        if not np.isin(self.arr[after], (0x2C, 0x7D)).all():
            raise Malformed("unexpected text after a value")

    def _integers(self, owner: np.ndarray, where: np.ndarray, n: int) -> np.ndarray:
        values, ends, ok, is_int = parse_at(self.arr, where)
        if not (ok & is_int).all() or (np.abs(values) >= _EXACT_INT).any():
            raise Malformed("not an integer")
        self._after_value(ends)
        out = np.empty(n, np.int64)
        out[owner] = values.astype(np.int64)
        return out

    def _flags(self, where: np.ndarray) -> np.ndarray:
        word = self.words[where]
        true = (word & BYTE_MASKS[4]) == np.uint64(_TRUE)
        false = (word & BYTE_MASKS[5]) == np.uint64(_FALSE)
        values, ends, ok, is_int = parse_at(self.arr, where)
        numeric = ~(true | false)
        if not (ok & is_int & ((values == 0) | (values == 1)))[numeric].all():
            raise Malformed("crowd flag is not 0 or 1")
        self._after_value(np.where(true, where + 4, np.where(false, where + 5, ends)))
        return true | (numeric & (values == 1))

    def _number_lists(self, events: np.ndarray) -> None:
        """Check that the containers opened by ``events`` are lists without strings or
        containers inside."""
        index = self.index
        where = index.pos[events]
        if (self.arr[where] != 0x5B).any():
            raise Malformed("expected a list")
        if (index.match[events] != events + 1).any():
            raise Malformed("nested value in a number list")
        strings = index.str_open
        if (
            np.searchsorted(strings, where) != np.searchsorted(strings, index.pos[events + 1])
        ).any():
            raise Malformed("string in a number list")

    def _boxes(self, events: np.ndarray) -> np.ndarray:
        """The 4 numbers of each of the lists opened by ``events``, read in lockstep."""
        index, arr = self.index, self.arr
        out = np.empty((events.size, 4), np.float64)
        p = index.pos[events]
        for j in range(4):
            values, ends, ok, _ = parse_at(arr, p + 1)
            if not ok.all():
                raise Malformed("not a number")
            out[:, j] = values
            p = index.skip_ws(ends)
            if (arr[p] != 0x2C).any() if j < 3 else (p != index.pos[events + 1]).any():
                raise Malformed("a bbox without 4 numbers")
        return out

    def _segmentations(
        self, chunk: _Chunk, owner: np.ndarray, where: np.ndarray, base: int
    ) -> np.ndarray:
        """Check the segmentations' structure, count polygons, read RLEs; return the events of
        the polygon lists."""
        index, arr = self.index, self.arr
        first = arr[where]
        if not np.isin(first, (0x5B, 0x7B, 0x6E)).all():
            raise Malformed("unexpected segmentation")
        nulls = first == 0x6E
        if nulls.any():
            at = where[nulls]
            if ((self.words[at] & BYTE_MASKS[4]) != np.uint64(_NULL)).any():
                raise Malformed("unexpected segmentation")
            self._after_value(at + 4)
        lists = first == 0x5B
        seg_events = index.event_at(where[lists])
        polys, poly_owner = index.children(seg_events)
        index.check_list_items(seg_events, polys, poly_owner)
        self._after_value(index.pos[index.match[seg_events]] + 1)
        self._number_lists(polys)
        chunk.polygons = np.zeros(chunk.boxes.shape[0], np.int64)
        chunk.polygons[owner[lists]] = np.bincount(poly_owner, minlength=seg_events.size)
        if self.want_rle:
            objects = first == 0x7B
            chunk.rle_owner = owner[objects] + base
            chunk.rles = self._rles(chunk.rle_owner, where[objects])
        return polys

    def _rles(self, owner: np.ndarray, where: np.ndarray) -> list[tuple[int, int, bytes]]:
        index = self.index
        ends = index.pos[index.match[index.event_at(where)]] + 1
        view = memoryview(self.arr)
        rles = []
        for i, a, b in zip(owner.tolist(), where.tolist(), ends.tolist(), strict=True):
            try:
                seg = load_json(view[a:b])
            except ValueError as exc:
                raise Malformed(str(exc)) from None
            rles.append(rle_to_string(seg, i, self.where))
        return rles
