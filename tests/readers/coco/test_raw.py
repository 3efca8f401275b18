"""Tests of the reference COCO parser and its RLE handling, checked against pycocotools."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from feedline.readers.coco.raw import (
    CocoFormatError,
    Where,
    raw_from_document,
    rle_runs,
    rle_string,
    rle_to_string,
)

mask_utils = pytest.importorskip("pycocotools.mask")

WHERE = Where("ann.json", None)


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.uint8, st.tuples(st.integers(1, 12), st.integers(1, 12)), elements=st.integers(0, 1))
)
def test_rle_forms_agree_with_pycocotools(mask: np.ndarray) -> None:
    h, w = mask.shape
    compressed = mask_utils.encode(np.asfortranarray(mask))
    runs_list = np.diff(np.flatnonzero(np.diff(np.r_[2, mask.T.ravel(), 2]) != 0)).tolist()
    if mask.T.ravel()[0] == 1:
        runs_list = [0, *runs_list]
    from_string = rle_to_string({"size": [h, w], "counts": compressed["counts"].decode()}, 0, WHERE)
    from_list = rle_to_string({"size": [h, w], "counts": runs_list}, 0, WHERE)
    assert from_string == from_list == (h, w, compressed["counts"])
    runs = rle_runs(from_list[2])
    assert runs is not None and runs.tolist() == runs_list
    assert rle_string(runs_list) == compressed["counts"]


@pytest.mark.parametrize(
    ("seg", "message"),
    [
        ({"size": [2, 3], "counts": "0111"}, "add up to 4"),
        ({"size": [2, 3], "counts": "6\x7f"}, "malformed compressed RLE"),
        ({"size": [2, 3], "counts": "0/"}, "malformed compressed RLE"),
        ({"size": [2, 3], "counts": "0o"}, "malformed compressed RLE"),
        ({"size": [2, 3], "counts": [1, -1, 6]}, "must be a string or a list"),
        ({"size": [2, 3]}, "must be a string or a list"),
        ({"size": [2, 3.0], "counts": [6]}, "RLE 'size' must be"),
    ],
)
def test_bad_rles(seg: dict, message: str) -> None:
    with pytest.raises(CocoFormatError, match=message):
        rle_to_string(seg, 4, WHERE)


def test_reference_columns() -> None:
    doc = {
        "images": [{"id": 5, "file_name": "a.jpg", "width": 4, "height": 3}],
        "categories": [{"id": 9}, {"id": 2}],
        "annotations": [
            {"image_id": 5, "category_id": 2, "bbox": [1, 2, 3, 4], "is_crowd": True,
             "segmentation": {"size": [3, 4], "counts": [12]}},
            {"image_id": 7, "category_id": 9, "bbox": [0.5, 0, 1, 1e1], "iscrowd": False,
             "segmentation": [[1, 2, 3, 4, 5, 6], []]},
        ],
    }  # fmt: skip
    raw = raw_from_document(doc, "ann.json", True, True)
    assert raw.image_ids.tolist() == [5] and raw.file_names == ["a.jpg"]
    assert raw.category_ids.tolist() == [9, 2]
    assert raw.ann_crowd.tolist() == [True, False]
    assert raw.ann_boxes.tolist() == [[1, 2, 3, 4], [0.5, 0, 1, 10]]
    assert raw.ann_poly_off.tolist() == [0, 0, 2]
    assert raw.poly_vert_off.tolist() == [0, 3, 3]
    assert raw.vertices.tolist() == [[1, 2], [3, 4], [5, 6]]
    assert raw.ann_rle.tolist() == [0, -1] and raw.rle_hw.tolist() == [[3, 4]]
    without = raw_from_document(doc, "ann.json", False, False)
    assert without.vertices is None and without.ann_rle is None


def test_iscrowd_wins_over_is_crowd() -> None:
    doc = {
        "images": [],
        "annotations": [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1],
                         "iscrowd": 0, "is_crowd": 1}],
    }  # fmt: skip
    assert raw_from_document(doc, "a", False, False).ann_crowd.tolist() == [False]


def test_errors_name_file_entry_and_position() -> None:
    doc = {"images": [{"id": "7", "file_name": "a", "width": 1, "height": 1}]}
    with pytest.raises(CocoFormatError) as info:
        raw_from_document(doc, "some/ann.json", False, False, lambda key, i: " (line 3, column 5)")
    assert str(info.value) == (
        "some/ann.json: images[0] (line 3, column 5): 'id' must be an integer, got '7'"
    )
