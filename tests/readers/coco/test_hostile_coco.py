"""Malformed COCO files: each is read as DALI 2.4 reads it (no ``annotations``, no ``categories``,
annotations of unknown images) or refused with a :class:`CocoFormatError` naming the file, the
JSON path and the line and column (nesting deeper than the parsers recurse, numbers with more
digits than Python converts, images too large for their pixelwise mask)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from feedline import fn, pipeline_def
from feedline.readers.coco.parse import MAX_MASK_PIXELS, parse_coco
from feedline.readers.coco.raw import CocoFormatError

SETTINGS = settings(
    max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None
)
_ERROR = re.compile(
    r"^(?P<file>\S+\.json): (?P<path>\$\S*).*\(line (?P<line>\d+), column (?P<col>\d+)\)"
)


def document(images: int, annotations: list[tuple[int, int]]) -> dict[str, Any]:
    """Images ``1..images`` (10 × 8) and annotations ``(image_id, category_id)``."""
    return {
        "info": {"description": "hostile"},
        "images": [
            {"id": i, "file_name": f"{i}.jpg", "width": 10, "height": 8}
            for i in range(1, images + 1)
        ],
        "categories": [{"id": c, "name": str(c)} for c in (1, 2, 3)],
        "annotations": [
            {
                "id": k,
                "image_id": image,
                "category_id": cat,
                "bbox": [1, 2, 3, 4],
                "area": 12,
                "iscrowd": 0,
                "segmentation": [[1, 2, 4, 2, 4, 6]],
            }
            for k, (image, cat) in enumerate(annotations)
        ],
    }


def write(root: Path, text: str, images: int = 0) -> Path:
    """The annotation file under ``root`` (and ``images`` tiny JPEGs, ``1.jpg``…)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "annotations.json"
    path.write_text(text)
    for i in range(1, images + 1):
        Image.new("RGB", (10, 8)).save(root / f"{i}.jpg")
    return path


def read_all(root: Path, path: Path, count: int, **kwargs: Any) -> list[tuple[np.ndarray, ...]]:
    """``(bboxes, labels)`` of every sample of ``readers.coco`` over ``path``."""

    @pipeline_def(batch_size=count, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def pipe() -> Any:
        _, boxes, labels = fn.readers.coco(
            file_root=str(root), annotations_file=str(path), **kwargs
        )
        return boxes, labels

    p = pipe()
    p.build()
    boxes, labels = p.run()
    return [(np.asarray(boxes.at(i)), np.asarray(labels.at(i))) for i in range(count)]


def assert_located(error: CocoFormatError, path: Path, text: str, json_path: str) -> int:
    """The error names ``path``, starts its JSON path with ``json_path`` and gives a line and
    column inside ``text``; returns the byte offset they point at."""
    found = _ERROR.match(str(error))
    assert found is not None, str(error)
    assert found["file"] == str(path)
    assert found["path"].startswith(json_path), (found["path"], json_path)
    lines = text.split("\n")
    line, col = int(found["line"]), int(found["col"])
    assert 1 <= line <= len(lines) and 1 <= col <= len(lines[line - 1]) + 1
    return sum(len(x) + 1 for x in lines[: line - 1]) + col - 1


@SETTINGS
@given(
    depth=st.integers(3000, 30_000),
    where=st.sampled_from(["info", "annotation", "image", "top"]),
    indent=st.sampled_from([None, 1, 2]),
)
def test_deep_nesting_is_refused_with_its_place(
    tmp_path: Path, depth: int, where: str, indent: int | None
) -> None:
    doc = document(2, [(1, 1), (2, 2)])
    places = {
        "info": (doc["info"], "description", "$.info.description[0]"),
        "annotation": (doc["annotations"][1], "extra", "$.annotations[1].extra[0]"),
        "image": (doc["images"][0], "license", "$.images[0].license[0]"),
        "top": (doc, "extra", "$.extra[0]"),
    }
    holder, key, json_path = places[where]
    holder[key] = "DEEP"
    text = json.dumps(doc, indent=indent).replace('"DEEP"', "[" * depth + "]" * depth)
    path = write(tmp_path / f"deep{depth}{where}{indent}", text)
    with pytest.raises(CocoFormatError, match="nested deeper than") as info:
        parse_coco(str(path), False, False)
    assert text[assert_located(info.value, path, text, json_path)] == "["


@SETTINGS
@given(
    digits=st.integers(4301, 9000),
    annotation=st.integers(0, 2),
    coordinate=st.integers(0, 3),
    indent=st.sampled_from([None, 2]),
)
def test_numbers_beyond_pythons_digit_limit_are_refused_with_their_place(
    tmp_path: Path, digits: int, annotation: int, coordinate: int, indent: int | None
) -> None:
    doc = document(2, [(1, 1), (2, 2), (1, 3)])
    doc["annotations"][annotation]["bbox"][coordinate] = "HUGE"
    text = json.dumps(doc, indent=indent).replace('"HUGE"', "7" * digits)
    path = write(tmp_path / f"n{digits}{annotation}{coordinate}{indent}", text)
    with pytest.raises(CocoFormatError, match=f"{digits:,} digits") as info:
        parse_coco(str(path), False, False)
    json_path = f"$.annotations[{annotation}].bbox[{coordinate}]"
    at = assert_located(info.value, path, text, json_path)
    assert text[at : at + digits] == "7" * digits


@SETTINGS
@given(digits=st.integers(4301, 9000))
def test_a_huge_number_in_a_field_the_reader_skips_is_accepted_like_dali(
    tmp_path: Path, digits: int
) -> None:
    doc = document(1, [(1, 1)])
    doc["info"]["year"] = "HUGE"
    text = json.dumps(doc).replace('"HUGE"', "9" * digits)
    raw = parse_coco(str(write(tmp_path / f"info{digits}", text)), True, True)
    assert raw.ann_boxes.tolist() == [[1, 2, 3, 4]]


@SETTINGS
@given(
    width=st.integers(1, 2**40),
    height=st.integers(1, 2**40),
    image=st.integers(0, 2),
)
def test_images_too_large_for_a_pixelwise_mask_are_refused_with_their_place(
    tmp_path: Path, width: int, height: int, image: int
) -> None:
    doc = document(3, [(1, 1)])
    doc["images"][image].update(width=width, height=height)
    text = json.dumps(doc, indent=1)
    path = write(tmp_path / f"wh{width}x{height}at{image}", text)
    assert parse_coco(str(path), True, False).widths[image] == width  # no masks: accepted
    if width * height <= MAX_MASK_PIXELS:
        assert parse_coco(str(path), True, True).heights[image] == height
        return
    with pytest.raises(CocoFormatError, match=f"{width}x{height} is larger") as info:
        parse_coco(str(path), True, True)
    at = assert_located(info.value, path, text, f"$.images[{image}].width")
    assert text[at] == "{"


@SETTINGS
@given(images=st.integers(1, 4))
def test_a_file_without_annotations_gives_images_without_objects_like_dali(
    tmp_path: Path, images: int
) -> None:
    doc = document(images, [])
    del doc["annotations"]
    root = tmp_path / f"noann{images}"
    path = write(root, json.dumps(doc), images)
    for boxes, labels in read_all(root, path, images):
        assert boxes.shape == (0, 4) and labels.shape == (0,)


@SETTINGS
@given(cats=st.lists(st.integers(-5, 2**31 - 1), min_size=1, max_size=6))
def test_without_categories_every_label_is_0_like_dali(tmp_path: Path, cats: list[int]) -> None:
    doc = document(1, [(1, c) for c in cats])
    del doc["categories"]
    root = tmp_path / f"nocat{abs(hash(tuple(cats)))}"
    path = write(root, json.dumps(doc), 1)
    ((boxes, labels),) = read_all(root, path, 1)
    assert boxes.shape == (len(cats), 4)
    assert labels.tolist() == [0] * len(cats)


@SETTINGS
@given(image_ids=st.lists(st.integers(-3, 6), min_size=1, max_size=8))
def test_annotations_of_unknown_images_are_dropped_like_dali(
    tmp_path: Path, image_ids: list[int]
) -> None:
    doc = document(2, [(i, 1) for i in image_ids])
    root = tmp_path / f"dangling{abs(hash(tuple(image_ids)))}"
    path = write(root, json.dumps(doc), 2)
    samples = read_all(root, path, 2)
    for image, (boxes, labels) in zip((1, 2), samples, strict=True):
        assert len(boxes) == len(labels) == image_ids.count(image)
