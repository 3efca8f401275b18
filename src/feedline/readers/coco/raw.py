"""The parsed content of a COCO annotation file as NumPy columns, and the reference parser.

:class:`RawCoco` holds what ``readers.coco`` needs from the JSON, one array per field,
in JSON order and before any filtering. :func:`raw_from_document` builds it from the document as
Python objects (``json.load``); it is the reference the fast path in
:mod:`feedline.readers.coco.parse` must agree with, and the place where every validation error is
phrased, naming the file, the entry (``annotations[12]``) and, when known, its line and column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CocoFormatError",
    "RawCoco",
    "Where",
    "offsets",
    "ranges",
    "raw_from_document",
    "rle_runs",
    "rle_string",
    "rle_to_string",
]

Locator = Callable[[str, int], str]
"""Gives `` (line L, column C)`` for entry ``i`` of a top-level list, or ``""``."""


class CocoFormatError(ValueError):
    """The annotation file is not valid COCO (or not valid JSON)."""


@dataclass
class RawCoco:
    """Columns of a COCO annotation file, in JSON order, before any filtering.

    Attributes:
        image_ids, widths, heights: int64 per ``images`` entry.
        file_names: per ``images`` entry.
        category_ids: int64 per ``categories`` entry.
        ann_image_ids, ann_category_ids: int64 per annotation.
        ann_crowd: bool per annotation (``iscrowd`` or ``is_crowd``; absent = 0).
        ann_boxes: float32 ``(A, 4)`` raw ``[x, y, w, h]``.
        ann_poly_off: int64 ``(A + 1,)`` offsets into ``poly_vert_off`` (None without polygons).
        poly_vert_off: int64 ``(P + 1,)`` offsets into ``vertices``.
        vertices: float32 ``(V, 2)``.
        ann_rle: int64 per annotation, index into the RLE table or -1 (None without RLE).
        rle_hw: int64 ``(R, 2)`` height and width of each RLE.
        rle_off: int64 ``(R + 1,)`` offsets into ``rle_counts``.
        rle_counts: uint8, the compressed COCO counts strings, concatenated.
    """

    image_ids: np.ndarray
    widths: np.ndarray
    heights: np.ndarray
    file_names: list[str]
    category_ids: np.ndarray
    ann_image_ids: np.ndarray
    ann_category_ids: np.ndarray
    ann_crowd: np.ndarray
    ann_boxes: np.ndarray
    ann_poly_off: np.ndarray | None = None
    poly_vert_off: np.ndarray | None = None
    vertices: np.ndarray | None = None
    ann_rle: np.ndarray | None = None
    rle_hw: np.ndarray | None = None
    rle_off: np.ndarray | None = None
    rle_counts: np.ndarray | None = None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class Where:
    """Phrases errors about the entries of one annotation file."""

    def __init__(self, path: str, locate: Locator | None) -> None:
        self.path = path
        self.locate = locate

    def error(self, key: str, i: int, message: str) -> CocoFormatError:
        at = self.locate(key, i) if self.locate is not None else ""
        return CocoFormatError(f"{self.path}: {key}[{i}]{at}: {message}")

    def top(self, message: str) -> CocoFormatError:
        return CocoFormatError(f"{self.path}: {message}")


def _entries(doc: dict[str, Any], key: str, where: Where, required: bool) -> list[Any]:
    if key not in doc:
        if required:
            raise where.top(f"no {key!r} list at the top level")
        return []
    value = doc[key]
    if not isinstance(value, list):
        raise where.top(f"{key!r} must be a list, got {type(value).__name__}")
    return value


def _field(entry: Any, key: str, i: int, name: str, where: Where) -> Any:
    if not isinstance(entry, dict):
        raise where.error(key, i, f"must be an object, got {type(entry).__name__}")
    if name not in entry:
        raise where.error(key, i, f"has no {name!r}")
    return entry[name]


def _int_field(entry: Any, key: str, i: int, name: str, where: Where) -> int:
    value = _field(entry, key, i, name, where)
    if not _is_int(value):
        raise where.error(key, i, f"{name!r} must be an integer, got {value!r:.40}")
    return value


def images_from_list(
    entries: list[Any], where: Where, start: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``(ids, widths, heights, file names)`` of ``images`` entries ``start``, ``start + 1``…"""
    try:  # the common case, checked column by column; any problem → the entry-by-entry loop
        ids, widths, heights, names = (
            [entry[key] for entry in entries] for key in ("id", "width", "height", "file_name")
        )
        numbers = [*ids, *widths, *heights]
        if set(map(type, numbers)) <= {int} and set(map(type, names)) <= {str}:
            ids_, widths_, heights_ = _int64(ids, widths, heights, key="images", where=where)
            if (
                (widths_ > 0).all()
                and (heights_ > 0).all()
                and "\0" not in "".join(names)
                and (not names or min(map(len, names)) > 0)
            ):
                return ids_, widths_, heights_, names
    except (KeyError, TypeError):
        pass
    return _images_one_by_one(entries, where, start)


def _images_one_by_one(
    entries: list[Any], where: Where, start: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    ids, widths, heights, names = [], [], [], []
    for i, entry in enumerate(entries, start):
        ids.append(_int_field(entry, "images", i, "id", where))
        name = _field(entry, "images", i, "file_name", where)
        if not isinstance(name, str) or not name or "\0" in name:
            raise where.error("images", i, f"'file_name' must be a file name, got {name!r:.60}")
        names.append(name)
        for dim, out in (("width", widths), ("height", heights)):
            value = _int_field(entry, "images", i, dim, where)
            if value <= 0:
                raise where.error("images", i, f"{dim!r} must be positive, got {value}")
            out.append(value)
    ids_, widths_, heights_ = _int64(ids, widths, heights, key="images", where=where)
    return ids_, widths_, heights_, names


def _int64(*columns: list[int], key: str, where: Where) -> list[np.ndarray]:
    try:
        return [np.array(c, dtype=np.int64) for c in columns]
    except OverflowError:
        raise where.top(f"an integer in {key!r} does not fit in 64 bits") from None


def categories_from_list(entries: list[Any], where: Where) -> np.ndarray:
    """The ``id`` of each ``categories`` entry."""
    ids = [_int_field(entry, "categories", i, "id", where) for i, entry in enumerate(entries)]
    return _int64(ids, key="categories", where=where)[0]


def crowd_flag(entry: dict[str, Any], i: int, where: Where) -> bool:
    """``iscrowd`` (or ``is_crowd``) of an annotation: 0/1 or a bool, absent = not crowd."""
    name = "iscrowd" if "iscrowd" in entry else "is_crowd"
    value = entry.get(name, 0)
    if value not in (0, 1) or not isinstance(value, int):
        raise where.error("annotations", i, f"{name!r} must be 0 or 1, got {value!r:.40}")
    return bool(value)


def box_of(entry: dict[str, Any], i: int, where: Where) -> list[float]:
    """The ``bbox`` of an annotation, checked to be 4 numbers."""
    box = _field(entry, "annotations", i, "bbox", where)
    if not isinstance(box, list) or len(box) != 4 or not all(_is_number(v) for v in box):
        raise where.error("annotations", i, f"'bbox' must be a list of 4 numbers, got {box!r:.80}")
    return box


def polygons_of(seg: Any, i: int, where: Where) -> list[list[float]]:
    """The polygons of a segmentation given as a list (each an even-length list of numbers)."""
    polygons = []
    for k, poly in enumerate(seg):
        if not isinstance(poly, list) or not all(_is_number(v) for v in poly):
            raise where.error(
                "annotations",
                i,
                f"segmentation part {k} must be a list of numbers (a polygon), got {poly!r:.60}",
            )
        if len(poly) % 2:
            raise where.error(
                "annotations",
                i,
                f"segmentation polygon {k} has an odd number of coordinates ({len(poly)})",
            )
        polygons.append(poly)
    return polygons


def rle_runs(counts: str | bytes) -> np.ndarray | None:
    """Run lengths (int64) of a compressed COCO RLE counts string, or None if it is malformed.

    The format: each run length is a little-endian signed number in 5-bit groups, one per
    character ``chr(48 + group)``, bit 5 set when another group follows and bit 4 of the last
    group the sign; from the fourth run on a run is stored as the difference to the run two
    places before.
    """
    data = counts.encode("latin-1") if isinstance(counts, str) else counts
    codes = np.frombuffer(data, np.uint8).astype(np.int64) - 48
    if codes.size == 0:
        return np.zeros(0, np.int64)
    if (codes < 0).any() or (codes > 63).any() or codes[-1] & 0x20:
        return None
    last = np.flatnonzero((codes & 0x20) == 0)
    first = np.concatenate([[0], last[:-1] + 1])
    group = np.repeat(np.arange(last.size), last - first + 1)
    shift = 5 * (np.arange(codes.size) - first[group])
    if shift.max() > 55:
        return None
    runs = np.add.reduceat((codes & 0x1F) << shift, first)
    negative = (codes[last] & 0x10) != 0
    runs -= np.where(negative, np.int64(1) << (shift[last] + 5), 0)
    runs[3::2] = np.cumsum(runs[1::2])[1:]
    runs[4::2] = np.cumsum(runs[2::2])[1:]
    return None if (runs < 0).any() else runs


def rle_string(runs: Sequence[int]) -> bytes:
    """The compressed COCO RLE counts string of run lengths ``runs`` (inverse of
    :func:`rle_runs`)."""
    out = bytearray()
    for i, run in enumerate(runs):
        value = run - runs[i - 2] if i > 2 else run
        while True:
            group = value & 0x1F
            value >>= 5
            more = value != (-1 if group & 0x10 else 0)
            out.append(48 + (group | (0x20 if more else 0)))
            if not more:
                break
    return bytes(out)


def rle_to_string(seg: dict[str, Any], i: int, where: Where) -> tuple[int, int, bytes]:
    """``(height, width, compressed counts)`` of an RLE segmentation (compressed or not)."""
    size = seg.get("size")
    counts = seg.get("counts")
    if not (isinstance(size, list) and len(size) == 2 and all(_is_int(v) and v >= 0 for v in size)):
        raise where.error("annotations", i, f"RLE 'size' must be [height, width], got {size!r:.40}")
    height, width = size
    if isinstance(counts, str):
        runs = rle_runs(counts) if counts.isascii() else None
        if runs is None:
            raise where.error("annotations", i, f"malformed compressed RLE counts {counts!r:.40}")
        total = int(runs.sum())
        encoded = counts.encode("ascii")
    elif isinstance(counts, list) and all(_is_int(v) and v >= 0 for v in counts):
        total = sum(counts)
        encoded = rle_string(counts)
    else:
        raise where.error(
            "annotations",
            i,
            f"RLE 'counts' must be a string or a list of run lengths, got {counts!r:.40}",
        )
    if total != height * width:
        raise where.error(
            "annotations", i, f"RLE runs add up to {total}, not height*width = {height * width}"
        )
    return height, width, encoded


class RawBuilder:
    """Accumulates per-annotation segmentations into :class:`RawCoco` columns."""

    def __init__(self, want_rle: bool) -> None:
        self.want_rle = want_rle
        self.poly_counts: list[int] = []
        self.vert_counts: list[int] = []
        self.coords: list[float] = []
        self.ann_rle: list[int] = []
        self.rles: list[tuple[int, int, bytes]] = []

    def add(self, seg: Any, i: int, where: Where) -> None:
        """Record the segmentation of annotation ``i`` (None when absent)."""
        polygons: Sequence[list[float]] = ()
        rle = -1
        if isinstance(seg, list):
            polygons = polygons_of(seg, i, where)
        elif isinstance(seg, dict):
            if self.want_rle:
                rle = len(self.rles)
                self.rles.append(rle_to_string(seg, i, where))
        elif seg is not None:
            raise where.error(
                "annotations",
                i,
                "'segmentation' must be a list of polygons or an RLE object, "
                f"got {type(seg).__name__}",
            )
        self.poly_counts.append(len(polygons))
        for poly in polygons:
            self.vert_counts.append(len(poly) // 2)
            self.coords.extend(poly)
        self.ann_rle.append(rle)

    def finish(self, raw: RawCoco) -> RawCoco:
        """Attach the collected segmentation columns to ``raw``."""
        raw.ann_poly_off = offsets(self.poly_counts)
        raw.poly_vert_off = offsets(self.vert_counts)
        with np.errstate(over="ignore"):  # beyond float32's range is ±inf, as in the C parser
            coordinates = np.array(self.coords, dtype=np.float64).astype(np.float32)
        raw.vertices = coordinates.reshape(-1, 2)
        if self.want_rle:
            raw.ann_rle = np.array(self.ann_rle, dtype=np.int64)
            attach_rles(raw, self.rles)
        return raw


def attach_rles(raw: RawCoco, rles: list[tuple[int, int, bytes]]) -> None:
    """Store ``(height, width, counts)`` RLEs in ``raw``'s RLE table."""
    raw.rle_hw = np.array([(h, w) for h, w, _ in rles], dtype=np.int64).reshape(-1, 2)
    raw.rle_off = offsets([len(c) for _, _, c in rles])
    raw.rle_counts = np.frombuffer(b"".join(c for _, _, c in rles), np.uint8).copy()


def ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + c)`` for each pair, vectorised."""
    counts = np.asarray(counts, np.int64)
    total = int(counts.sum())
    ends = np.cumsum(counts)
    return np.arange(total, dtype=np.int64) + np.repeat(
        np.asarray(starts, np.int64) - ends + counts, counts
    )


def offsets(counts: Sequence[int] | np.ndarray) -> np.ndarray:
    """``[0, c0, c0 + c1, …]`` as int64."""
    out = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def raw_from_document(
    doc: Any, path: str, want_polygons: bool, want_rle: bool, locate: Locator | None = None
) -> RawCoco:
    """Build :class:`RawCoco` from a parsed JSON document.

    Args:
        doc: the result of ``json.load``.
        path: the file name used in error messages.
        want_polygons: collect polygon segmentations.
        want_rle: also collect RLE segmentations (``pixelwise_masks``; implies
            ``want_polygons``).
        locate: gives the line and column of an entry, for error messages.

    Raises:
        CocoFormatError: naming the file, the entry and the problem.
    """
    where = Where(path, locate)
    if not isinstance(doc, dict):
        raise where.top(f"the top level must be a JSON object, got {type(doc).__name__}")
    image_ids, widths, heights, names = images_from_list(
        _entries(doc, "images", where, True), where
    )
    category_ids = categories_from_list(_entries(doc, "categories", where, False), where)
    anns = _entries(doc, "annotations", where, False)
    builder = RawBuilder(want_rle) if want_polygons or want_rle else None
    img, cat, crowd, boxes = [], [], [], []
    for i, entry in enumerate(anns):
        img.append(_int_field(entry, "annotations", i, "image_id", where))
        cat.append(_int_field(entry, "annotations", i, "category_id", where))
        crowd.append(crowd_flag(entry, i, where))
        boxes.append(box_of(entry, i, where))
        if builder is not None:
            builder.add(entry.get("segmentation"), i, where)
    ann_img, ann_cat = _int64(img, cat, key="annotations", where=where)
    raw = RawCoco(
        image_ids=image_ids,
        widths=widths,
        heights=heights,
        file_names=names,
        category_ids=category_ids,
        ann_image_ids=ann_img,
        ann_category_ids=ann_cat,
        ann_crowd=np.array(crowd, dtype=bool),
        ann_boxes=np.array(boxes, dtype=np.float64).astype(np.float32).reshape(-1, 4),
    )
    return builder.finish(raw) if builder is not None else raw
