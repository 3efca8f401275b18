"""Tests of COCO parsing: the msgspec path must equal the json-based reference exactly."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feedline.readers.coco.parse import _columns, parse_coco
from feedline.readers.coco.raw import CocoFormatError, RawCoco, raw_from_document
from tests.readers.coco.data import DUMMY, PIXELWISE, REAL_COCO, SKIP_REASON, make_document


def assert_same(a: RawCoco, b: RawCoco) -> None:
    for f in fields(RawCoco):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f.name
            assert np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


def write(tmp_path: Path, doc: Any, **dump: Any) -> str:
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(doc, **dump) if not isinstance(doc, str) else doc)
    return str(path)


def fast(path: str, polygons: bool = True, rle: bool = True) -> RawCoco:
    """The msgspec path's result, which must not have needed the reference."""
    raw = _columns(path, polygons or rle, rle)
    assert raw is not None
    return raw


def reference(path: str, polygons: bool = True, rle: bool = True) -> RawCoco:
    with open(path, "rb") as f:
        return raw_from_document(json.load(f), path, polygons, rle)


coordinates = st.one_of(
    st.floats(-50, 700, allow_nan=False).map(lambda v: round(v, 2)),
    st.integers(-5, 700),
    st.floats(0, 1, allow_nan=False),
)


@st.composite
def coco_documents(draw: st.DrawFn) -> dict[str, Any]:
    n_images = draw(st.integers(1, 5))
    images = [
        {"id": draw(st.integers(-3, 10**9)), "file_name": f"im{i}\u00e9 \"x\".jpg",
         "width": draw(st.integers(1, 900)), "height": draw(st.integers(1, 900))}
        for i in range(n_images)
    ]  # fmt: skip
    categories = [{"id": c, "name": "[n]"} for c in draw(st.lists(st.integers(0, 99), max_size=5))]
    anns = []
    for _ in range(draw(st.integers(0, 12))):
        ann: dict[str, Any] = {
            "image_id": draw(st.sampled_from([e["id"] for e in images] + [123456])),
            "category_id": draw(st.integers(-2, 120)),
            "bbox": draw(st.lists(coordinates, min_size=4, max_size=4)),
            "area": draw(coordinates),
        }
        kind = draw(st.sampled_from(["poly", "poly", "rle", "string_rle", "empty", "none"]))
        if kind == "poly":
            parts = draw(st.lists(st.lists(coordinates, min_size=1, max_size=10), max_size=3))
            ann["segmentation"] = [p + p[:1] if len(p) % 2 else p for p in parts]
        elif kind == "rle":
            ann["segmentation"] = {"size": [2, 3], "counts": draw(st.sampled_from(
                [[6], [1, 5], [0, 2, 4], [3, 1, 1, 1]]))}  # fmt: skip
        elif kind == "string_rle":
            counts = draw(st.sampled_from(["6", "0122", "121O0", "06", "42"]))
            ann["segmentation"] = {"counts": counts, "size": [2, 3]}
        elif kind == "empty":
            ann["segmentation"] = []
        crowd = draw(st.sampled_from(["iscrowd", "is_crowd", None]))
        if crowd:
            ann[crowd] = draw(st.sampled_from([0, 1, True, False]))
        if draw(st.booleans()):
            ann["attributes"] = {"bbox": [1, 2], "note": 'a "b" [c]', "image_id": 5}
        keys = draw(st.permutations(list(ann)))
        anns.append({k: ann[k] for k in keys})
    doc: dict[str, Any] = {"info": {"x": "y ] }"}, "images": images, "annotations": anns}
    if draw(st.booleans()):
        doc["categories"] = categories
    keys = draw(st.permutations(list(doc)))
    return {k: doc[k] for k in keys}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(coco_documents(), st.sampled_from([None, 0, 2]), st.booleans(), st.booleans())
def test_fast_path_equals_reference(
    tmp_path: Path, doc: dict[str, Any], indent: int | None, compact: bool, want_rle: bool
) -> None:
    separators = (",", ":") if compact else None
    path = write(tmp_path, doc, indent=indent, separators=separators)
    for polygons in (False, True):
        rle = want_rle and polygons
        assert_same(fast(path, polygons, rle), reference(path, polygons, rle))
        assert_same(parse_coco(path, polygons, rle), reference(path, polygons, rle))


def test_generated_dataset_uses_the_fast_path(tmp_path: Path) -> None:
    path = write(tmp_path, make_document(), indent=1)
    assert_same(fast(path), reference(path))
    raw = fast(path)
    assert raw.vertices is not None and raw.vertices.dtype == np.float32
    assert raw.rle_counts is not None and raw.ann_rle is not None
    assert (raw.ann_rle >= 0).sum() == 3


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            REAL_COCO[1], marks=pytest.mark.skipif(not REAL_COCO[1].exists(), reason=SKIP_REASON)
        ),
        PIXELWISE / "instances.json",
        DUMMY[1],
    ],
    ids=["coco", "pix", "dummy"],
)
def test_real_files_use_the_fast_path(path: Path) -> None:
    assert_same(fast(str(path)), reference(str(path)))


@pytest.mark.parametrize(
    ("tweak", "reason"),
    [
        (lambda t: t.replace('"bbox"', '"bbo\\u0078"', 1), "escaped key"),
        (lambda t: t.replace('"bbox":', '"bbox": [0, 0, 1, 1], "bbox":', 1), "duplicate key"),
        (lambda t: t.replace('"category_id": 3', '"category_id": 3e0', 1), "float id"),
        (lambda t: t.replace('"segmentation":', '"segmentation": [], "segmentation":', 1), "dup"),
    ],
)
def test_unusual_files_read_as_the_reference(tmp_path: Path, tweak: Any, reason: str) -> None:
    text = tweak(json.dumps(make_document()))
    path = write(tmp_path, text)
    try:
        expected = reference(path)
    except CocoFormatError as exc:
        with pytest.raises(CocoFormatError) as info:
            parse_coco(path, True, True)
        assert str(info.value).endswith(str(exc).split("]: ", 1)[1])
    else:
        assert_same(parse_coco(path, True, True), expected)


def test_numbers_with_exponents_take_the_fast_path(tmp_path: Path) -> None:
    doc = make_document()
    text = json.dumps(doc).replace(", 1.0,", ", 1e0,")
    path = write(tmp_path, text)
    assert_same(fast(path), reference(path))


def _error(tmp_path: Path, doc: Any, polygons: bool = True) -> str:
    path = write(tmp_path, doc)
    with pytest.raises(CocoFormatError) as info:
        parse_coco(path, polygons, polygons)
    message = str(info.value)
    assert message.startswith(path)
    return message


def _doc_with(**changes: Any) -> dict[str, Any]:
    doc = make_document()
    ann = doc["annotations"][2]
    for key, value in changes.items():
        if value is None:
            ann.pop(key, None)
        else:
            ann[key] = value
    return doc


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"bbox": None}, r"annotations\[2\] \(line 1, column \d+\): has no 'bbox'"),
        ({"image_id": None}, r"annotations\[2\].*has no 'image_id'"),
        ({"category_id": None}, r"annotations\[2\].*has no 'category_id'"),
        ({"bbox": [1, 2, 3]}, r"annotations\[2\].*'bbox' must be a list of 4 numbers"),
        ({"bbox": [1, 2, 3, "4"]}, r"annotations\[2\].*'bbox' must be a list of 4 numbers"),
        ({"image_id": 1.5}, r"annotations\[2\].*'image_id' must be an integer"),
        ({"iscrowd": 2}, r"annotations\[2\].*'iscrowd' must be 0 or 1"),
        ({"segmentation": [[1, 2, 3]]}, r"annotations\[2\].*odd number of coordinates"),
        ({"segmentation": [1, 2, 3, 4]}, r"annotations\[2\].*part 0 must be a list of numbers"),
        ({"segmentation": "x"}, r"annotations\[2\].*must be a list of polygons or an RLE"),
        ({"segmentation": {"size": [2, 2], "counts": [1, 2]}}, r"RLE runs add up to 3, not"),
        ({"segmentation": {"size": [2], "counts": [4]}}, r"RLE 'size' must be"),
        ({"segmentation": {"size": [1, 2], "counts": "\u00e9"}}, r"malformed compressed RLE"),
    ],
)
def test_invalid_annotations_name_the_entry(
    tmp_path: Path, changes: dict[str, Any], expected: str
) -> None:
    assert _error_matches(_error(tmp_path, _doc_with(**changes)), expected)


def _error_matches(message: str, pattern: str) -> bool:
    assert re.search(pattern, message), message
    return True


def test_segmentation_is_not_checked_without_masks(tmp_path: Path) -> None:
    path = write(tmp_path, _doc_with(segmentation="x"))
    assert_same(parse_coco(path, False, False), reference(path, False, False))


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ('{"images": [}', r"invalid JSON at line 1, column 13 \(byte 12\)"),
        ('{"images": []}\n{', r"invalid JSON at line 2, column 1"),
        ("[1, 2]", r"the top level must be a JSON object"),
        ('{"annotations": []}', r"no 'images' list at the top level"),
        ('{"images": {}}', r"'images' must be a list"),
        ('{"images": [{"id": 1, "width": 2, "height": 2}]}', r"images\[0\].*no 'file_name'"),
        ('{"images": [{"id": 1, "file_name": "a", "width": 0, "height": 2}]}',
         r"images\[0\].*'width' must be positive"),
        ('{"images": [], "categories": [{"name": "x"}]}', r"categories\[0\].*has no 'id'"),
        ('{"images": [], "annotations": [1]}',
         r"annotations\[0\] \(line 1, column 32\): must be an object"),
        ('{"images": [], "x": NaN}', r"invalid JSON"),
        (b'{"images": ["\xff"]}', r"invalid JSON"),
    ],
)  # fmt: skip
def test_invalid_documents(tmp_path: Path, doc: str | bytes, expected: str) -> None:
    path = tmp_path / "ann.json"
    path.write_bytes(doc if isinstance(doc, bytes) else doc.encode())
    with pytest.raises(CocoFormatError) as info:
        parse_coco(str(path), True, True)
    assert str(info.value).startswith(str(path))
    _error_matches(str(info.value), expected)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.json"):
        parse_coco(str(tmp_path / "nope.json"), False, False)


def test_missing_top_level_lists_give_empty_columns(tmp_path: Path) -> None:
    path = write(tmp_path, {"images": [{"id": 1, "file_name": "a", "width": 2, "height": 3}]})
    raw = parse_coco(path, True, True)
    assert raw.category_ids.size == 0 and raw.ann_boxes.shape == (0, 4)
    assert raw.vertices is not None and raw.vertices.shape == (0, 2)
    assert_same(raw, reference(path))


def test_non_json_constants_rejected(tmp_path: Path) -> None:
    for constant in ("NaN", "Infinity", "-Infinity"):
        path = tmp_path / f"{constant}.json"
        path.write_text('{"images": [], "x": ' + constant + "}")
        with pytest.raises(CocoFormatError, match="invalid JSON"):
            parse_coco(str(path), want_polygons=False, want_rle=False)
