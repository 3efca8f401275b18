"""Parsing of COCO annotation files into :class:`~feedline.readers.coco.raw.RawCoco`.

msgspec decodes the file straight into typed structs that hold only the fields ``readers.coco``
reads: everything else (``area``, annotation ``id``, ``info``…) is checked to be valid JSON and
skipped in C, and the columns are gathered from the structs into NumPy arrays. Segmentations,
when masks are requested, are kept as their raw JSON text, one per annotation: the polygons'
coordinates — most of a COCO file — are parsed by
:func:`~feedline.readers.coco.segmentations.parse_segmentations` without a Python object per
number, and only the RLE objects are decoded by msgspec. (orjson builds every value of the file
as a Python object; simdjson's lazy objects cost far more per field read from Python: on a
400,000-annotation file, 2.5 s to gather the columns against msgspec's 0.3 s.)

Whatever the typed decoding rejects or the checks here do not accept (invalid JSON, a missing or
mistyped field, an integer beyond 64 bits, a malformed segmentation) goes to the reference
parser, :func:`~feedline.readers.coco.raw.raw_from_document` over :func:`json.loads`, which
either reads the file as ``json`` does or raises the error naming the entry with its line and
column.
"""

from __future__ import annotations

import gc
import json
import mmap
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np

from feedline.readers.coco.locate import deep_spot, long_number_spot
from feedline.readers.coco.raw import (
    CocoFormatError,
    RawCoco,
    Where,
    attach_rles,
    offsets,
    raw_from_document,
    rle_to_string,
)
from feedline.readers.coco.segmentations import parse_segmentations

__all__ = ["MAX_MASK_PIXELS", "parse_coco"]

_Flag = int | bool | msgspec.UnsetType
_NULL = msgspec.Raw(b"null")
#: Deepest nesting reported as such when the JSON parsers run out of recursion.
_MAX_DEPTH = 500
#: Largest image (width × height) whose pixelwise mask ``readers.coco`` rasterises: 2³¹ pixels,
#: an 8 GiB int32 mask.
MAX_MASK_PIXELS = 1 << 31


class _Image(msgspec.Struct, gc=False):
    id: int
    file_name: str
    width: int
    height: int


class _Category(msgspec.Struct, gc=False):
    id: int


class _Annotation(msgspec.Struct, gc=False):
    image_id: int
    category_id: int
    bbox: tuple[float, float, float, float]
    iscrowd: _Flag = msgspec.UNSET
    is_crowd: _Flag = msgspec.UNSET


class _Segmented(_Annotation, gc=False):
    segmentation: msgspec.Raw = _NULL


class _Document(msgspec.Struct, gc=False):
    images: list[_Image]
    categories: list[_Category] = []
    annotations: list[_Annotation] = []


class _SegmentedDocument(msgspec.Struct, gc=False):
    images: list[_Image]
    categories: list[_Category] = []
    annotations: list[_Segmented] = []


_DECODERS = {False: msgspec.json.Decoder(_Document), True: msgspec.json.Decoder(_SegmentedDocument)}


@contextmanager
def _no_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_coco(path: str, want_polygons: bool, want_rle: bool) -> RawCoco:
    """Parse the COCO annotation file ``path``.

    Args:
        path: the JSON file.
        want_polygons: collect polygon segmentations.
        want_rle: also collect RLE segmentations (implies ``want_polygons``).

    Raises:
        OSError: the file cannot be read.
        CocoFormatError: invalid JSON (with line and column) or invalid COCO content (naming the
            entry).
    """
    want_polygons = want_polygons or want_rle
    with _no_gc():
        try:
            raw = _columns(path, want_polygons, want_rle)
        except (
            msgspec.DecodeError,
            msgspec.ValidationError,
            OverflowError,
            UnicodeDecodeError,  # msgspec's for a string that is not UTF-8
            CocoFormatError,
            RecursionError,  # nested deeper than msgspec goes: the reference locates it
        ):
            raw = None
        raw = raw if raw is not None else _reference(path, want_polygons, want_rle)
    if want_rle:
        _check_mask_sizes(raw, path)
    return raw


def _check_mask_sizes(raw: RawCoco, path: str) -> None:
    """Refuse an image too large for its pixelwise mask (:data:`MAX_MASK_PIXELS`).

    Raises:
        CocoFormatError: naming the entry's width and height, its line and column.
    """
    pixels = raw.widths.astype(np.float64) * raw.heights
    too_big = np.flatnonzero(pixels > MAX_MASK_PIXELS)
    if too_big.size == 0:
        return
    i = int(too_big[0])
    with open(path, "rb") as f:
        at = _Locator(f.read())("images", i)
    raise CocoFormatError(
        f"{path}: $.images[{i}].width and .height{at}: {raw.widths[i]}x{raw.heights[i]} is "
        f"larger than the {MAX_MASK_PIXELS:,} pixels a pixelwise mask may have (pixelwise_masks="
        "True rasterises a mask of the image's size)"
    )


def _map(path: str) -> mmap.mmap | bytes:
    """The file's bytes, memory-mapped (no copy) when it can be."""
    with open(path, "rb") as f:
        try:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # an empty file, or one that cannot be mapped
            return f.read()


def _int64(entries: Sequence[Any], field: str) -> np.ndarray:
    return np.fromiter(map(attrgetter(field), entries), np.int64, len(entries))


def _columns(path: str, want_polygons: bool, want_rle: bool) -> RawCoco | None:
    """The columns of file ``path`` read with msgspec, or None where the reference must decide."""
    doc = _DECODERS[want_polygons].decode(_map(path))
    images, anns = doc.images, doc.annotations
    widths, heights = _int64(images, "width"), _int64(images, "height")
    names = list(map(attrgetter("file_name"), images))
    if (widths <= 0).any() or (heights <= 0).any() or not all(names) or "\0" in "".join(names):
        return None
    crowd = _crowd(anns)
    if crowd is None:
        return None
    n = len(anns)
    boxes = np.fromiter(chain.from_iterable(map(attrgetter("bbox"), anns)), np.float64, 4 * n)
    raw = RawCoco(
        image_ids=_int64(images, "id"),
        widths=widths,
        heights=heights,
        file_names=names,
        category_ids=_int64(doc.categories, "id"),
        ann_image_ids=_int64(anns, "image_id"),
        ann_category_ids=_int64(anns, "category_id"),
        ann_crowd=crowd,
        ann_boxes=boxes.reshape(n, 4).astype(np.float32),
    )
    if not want_polygons:
        return raw
    segs = list(map(attrgetter("segmentation"), anns))
    del doc, anns, images  # the file's text stays alive only as long as the segmentations
    return _segmentations(raw, segs, Where(path, None), want_rle)


def _crowd(anns: Sequence[_Annotation]) -> np.ndarray | None:
    """``iscrowd`` (else ``is_crowd``, else 0) of each annotation, or None if one is not 0/1."""
    try:
        flags = _int64(anns, "iscrowd")
    except TypeError:  # some have no iscrowd
        unset = msgspec.UNSET
        flags = np.fromiter(
            (
                a.iscrowd if a.iscrowd is not unset else 0 if a.is_crowd is unset else a.is_crowd
                for a in anns
            ),
            np.int64,
            len(anns),
        )
    return flags.astype(bool) if ((flags == 0) | (flags == 1)).all() else None


def _segmentations(
    raw: RawCoco, segs: list[msgspec.Raw], where: Where, want_rle: bool
) -> RawCoco | None:
    """Add the segmentation columns to ``raw`` from each annotation's segmentation text.
    ``segs`` is emptied as it is parsed, which frees the file's text before the coordinates are
    gathered."""
    n = len(segs)
    parsed = parse_segmentations(segs)
    if parsed is None:
        return None
    if want_rle:
        rles = sorted(parsed.objects.items())
        raw.ann_rle = np.full(n, -1, np.int64)
        raw.ann_rle[[i for i, _ in rles]] = np.arange(len(rles))
        attach_rles(raw, [rle_to_string(_object(text), i, where) for i, text in rles])
    raw.ann_poly_off = offsets(np.maximum(parsed.polygons, 0))
    raw.poly_vert_off = offsets(parsed.vertices)
    raw.vertices = parsed.coordinates.reshape(-1, 2)
    return raw


def _object(text: bytes) -> dict[str, Any]:
    """An RLE segmentation's object (its text is valid JSON: msgspec checked it)."""
    return msgspec.json.decode(text, type=dict[str, Any])


def _reference(path: str, want_polygons: bool, want_rle: bool) -> RawCoco:
    with open(path, "rb") as f:
        data = f.read()
    try:
        doc = json.loads(data, parse_constant=_reject_constant)
    except RecursionError:
        raise _too_deep(path, data) from None
    except json.JSONDecodeError as exc:
        raise CocoFormatError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno} (byte {exc.pos}): "
            f"{exc.msg}"
        ) from None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CocoFormatError(
            f"{path}: invalid JSON: not UTF-8 text at line {line} (byte {exc.start}): {exc.reason}"
        ) from None
    except ValueError as exc:
        long = long_number_spot(data)
        if long is not None:
            spot, digits = long
            raise CocoFormatError(
                f"{path}: {spot}: a number of {digits:,} digits (more than the "
                f"{sys.get_int_max_str_digits():,} Python converts): {exc}"
            ) from None
        raise CocoFormatError(f"{path}: invalid JSON: {exc}") from None
    return raw_from_document(doc, path, want_polygons, want_rle, _Locator(data))


def _too_deep(path: str, data: bytes) -> CocoFormatError:
    """The error for a file nested deeper than the JSON parsers recurse."""
    spot = deep_spot(data, _MAX_DEPTH)
    where = f"{spot}: arrays and objects" if spot is not None else "arrays and objects"
    return CocoFormatError(
        f"{path}: {where} nested deeper than {_MAX_DEPTH} levels (a COCO file needs 4); the "
        "JSON parser cannot read it"
    )


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class _Locator:
    """Line and column of entry ``i`` of a top-level list (for error messages)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __call__(self, key: str, i: int) -> str:
        try:
            members = msgspec.json.decode(self.data, type=dict[str, msgspec.Raw])
            items = msgspec.json.decode(members[key], type=list[msgspec.Raw])
        except (msgspec.DecodeError, msgspec.ValidationError, KeyError):
            return ""
        if i >= len(items):
            return ""
        # msgspec's Raw values are views of the document: their address gives their offset.
        item = np.frombuffer(items[i], np.uint8)
        at = item.ctypes.data - np.frombuffer(self.data, np.uint8).ctypes.data
        text = item.tobytes()
        if not 0 <= at <= len(self.data) - item.size or self.data[at : at + item.size] != text:
            return ""
        line = self.data.count(b"\n", 0, at) + 1
        column = at - (self.data.rfind(b"\n", 0, at) + 1) + 1
        return f" (line {line}, column {column})"
