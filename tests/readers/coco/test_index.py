"""Tests of the DALI rules applied by ``build_index`` (``docs/coco.md``), flag by flag."""

from __future__ import annotations

import itertools
import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from feedline.readers.coco.index import CocoIndex, CocoOptions, build_index
from feedline.readers.coco.raw import RawCoco, ranges, raw_from_document
from tests.readers.coco.data import (
    DUMMY,
    PIXELWISE,
    REAL_COCO,
    SKIP_REASON,
    make_document,
    reference_samples,
)

FLAGS = list(itertools.product([False, True], repeat=5))
FLAG_IDS = [
    "-".join(n for n, on in zip(("ltrb", "ratio", "skip", "raw", "nocrowd"), f, strict=True) if on)
    or "default"
    for f in FLAGS
]


@cache
def _raw(name: str) -> tuple[dict[str, Any], RawCoco]:
    if name == "generated":
        doc = make_document()
    else:
        files = {"coco": REAL_COCO[1], "dummy": DUMMY[1], "pixelwise": PIXELWISE / "instances.json"}
        doc = json.loads(Path(files[name]).read_text())
    return doc, raw_from_document(doc, name, True, False)


def assert_matches(index: CocoIndex, expected: list[dict[str, Any]], polygons: bool) -> None:
    assert index.file_names == [s["file_name"] for s in expected]
    assert index.image_ids.tolist() == [s["id"] for s in expected]
    for i, sample in enumerate(expected):
        objects = index.objects(i)
        assert np.array_equal(index.bboxes[objects], sample["bboxes"]), sample["file_name"]
        assert index.labels[objects].tolist() == sample["labels"].tolist(), sample["file_name"]
        if polygons:
            rows, vertices = index.polygons(i)
            assert np.array_equal(rows, sample["polygons"]), sample["file_name"]
            assert np.array_equal(vertices, sample["vertices"]), sample["file_name"]


def _check(name: str, flags: tuple[bool, ...]) -> None:
    ltrb, ratio, skip_empty, raw_ids, no_crowd = flags
    doc, raw = _raw(name)
    flags_kw = dict(ltrb=ltrb, ratio=ratio, skip_empty=skip_empty,
                    avoid_class_remapping=raw_ids, include_iscrowd=not no_crowd)  # fmt: skip
    options = CocoOptions(polygons=True, **flags_kw)
    expected = reference_samples(doc, **flags_kw)
    assert_matches(build_index(raw, options), expected, polygons=True)


@pytest.mark.parametrize("flags", FLAGS, ids=FLAG_IDS)
def test_every_flag_combination_generated(flags: tuple[bool, ...]) -> None:
    _check("generated", flags)


@pytest.mark.parametrize("name", ["dummy", "pixelwise"])
def test_every_flag_combination_bundled(name: str) -> None:
    for flags in FLAGS:
        _check(name, flags)


@pytest.mark.skipif(not REAL_COCO[1].exists(), reason=SKIP_REASON)
def test_every_flag_combination_real_coco() -> None:
    for flags in FLAGS:
        _check("coco", flags)


def test_dali_dummy_published_values() -> None:
    """DALI's own C++ test publishes these for coco_dummy: objects per image, remapped labels."""
    doc, raw = _raw("dummy")
    index = build_index(raw, CocoOptions())
    counts = np.diff(index.ann_off)
    per_image = {e["id"]: 0 for e in doc["images"]}
    for ann in doc["annotations"]:
        per_image[ann["image_id"]] += 1
    assert counts.tolist() == [per_image[i] for i in sorted(per_image)]
    sorted_ids = sorted(c["id"] for c in doc["categories"])
    first = [ann["category_id"] for ann in sorted(doc["annotations"], key=lambda a: a["image_id"])]
    assert index.labels[:32].tolist() == [sorted_ids.index(c) + 1 for c in first[:32]]


def _tiny(categories: list[int], annotations: list[tuple[int, int]]) -> RawCoco:
    doc = {
        "images": [{"id": 1, "file_name": "a", "width": 10, "height": 10},
                   {"id": 2, "file_name": "b", "width": 10, "height": 10}],
        "categories": [{"id": c} for c in categories],
        "annotations": [{"image_id": i, "category_id": c, "bbox": [0, 0, 1, 1]}
                        for i, c in annotations],
    }  # fmt: skip
    return raw_from_document(doc, "t", False, False)


def test_remapping_follows_category_order() -> None:
    """Observed on DALI: categories [5, 2, 9] → 5→1, 2→2, 9→3, unknown 7→0."""
    raw = _tiny([5, 2, 9], [(1, 9), (1, 7), (1, 5), (2, 2)])
    assert build_index(raw, CocoOptions()).labels.tolist() == [3, 0, 1, 2]
    assert build_index(raw, CocoOptions(avoid_class_remapping=True)).labels.tolist() == [9, 7, 5, 2]


def test_duplicate_categories_keep_their_first_position() -> None:
    """Observed on DALI 2.4: categories [5, 2, 5, 9] give 5→1, 2→2, 9→4."""
    raw = _tiny([5, 2, 5, 9], [(1, 5), (1, 2), (1, 9)])
    assert build_index(raw, CocoOptions()).labels.tolist() == [1, 2, 4]


def test_images_argument_order_duplicates_and_unknown_names() -> None:
    doc, raw = _raw("generated")
    names = ["g.jpg", "nope.jpg", "a.jpg", "g.jpg", "sub/c.jpg"]
    index = build_index(raw, CocoOptions(images=tuple(names), polygons=True))
    assert_matches(index, reference_samples(doc, images=names), polygons=True)
    assert index.file_names == ["g.jpg", "a.jpg", "g.jpg", "sub/c.jpg"]


def test_images_argument_takes_the_last_entry_of_a_name() -> None:
    doc = {
        "images": [{"id": 1, "file_name": "a", "width": 4, "height": 4},
                   {"id": 3, "file_name": "a", "width": 4, "height": 4}],
        "annotations": [{"image_id": 3, "category_id": 1, "bbox": [0, 0, 2, 2]}],
    }  # fmt: skip
    index = build_index(raw_from_document(doc, "t", False, False), CocoOptions(images=("a",)))
    assert index.image_ids.tolist() == [3] and np.diff(index.ann_off).tolist() == [1]


def test_duplicate_image_ids_share_their_annotations() -> None:
    doc = {
        "images": [{"id": 2, "file_name": "a", "width": 4, "height": 4},
                   {"id": 2, "file_name": "b", "width": 4, "height": 4}],
        "annotations": [{"image_id": 2, "category_id": 1, "bbox": [0, 0, 2, 2]}],
    }  # fmt: skip
    index = build_index(raw_from_document(doc, "t", False, False), CocoOptions())
    assert index.file_names == ["a", "b"] and np.diff(index.ann_off).tolist() == [1, 1]


@pytest.mark.parametrize("threshold", [0.0, 0.05, 0.1, 0.11, 3.0])
def test_size_threshold(threshold: float) -> None:
    doc, raw = _raw("generated")
    index = build_index(raw, CocoOptions(size_threshold=threshold, polygons=True))
    assert_matches(index, reference_samples(doc, size_threshold=threshold), polygons=True)


def test_coordinate_units_double_the_rows() -> None:
    _, raw = _raw("generated")
    index = build_index(raw, CocoOptions(polygons=True))
    for i in range(len(index)):
        rows, _ = index.polygons(i)
        legacy, _ = index.polygons(i, coordinate_units=True)
        assert np.array_equal(legacy[:, 0], rows[:, 0])
        assert np.array_equal(legacy[:, 1:], rows[:, 1:] * 2)


def test_polygons_need_polygon_data() -> None:
    _, raw = _raw("generated")
    with pytest.raises(ValueError, match="without polygon data"):
        build_index(raw, CocoOptions()).polygons(0)


def test_ranges() -> None:
    assert ranges(np.array([5, 0, 9]), np.array([2, 0, 3])).tolist() == [5, 6, 9, 10, 11]
    assert ranges(np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == []


def test_options_json_round_trip() -> None:
    options = CocoOptions(ratio=True, images=("a", "b"), size_threshold=2.5)
    assert CocoOptions.from_json(json.loads(json.dumps(options.to_json()))) == options
