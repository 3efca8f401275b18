"""Tests of pixelwise masks: against pycocotools on the JSON, and against DALI's reference PNGs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from feedline.readers.coco.index import CocoIndex, CocoOptions, build_index
from feedline.readers.coco.masks import pixelwise_mask
from feedline.readers.coco.parse import parse_coco
from feedline.readers.coco.raw import raw_from_document
from tests.readers.coco.data import (
    PIXELWISE,
    REAL_COCO,
    SKIP_REASON,
    make_document,
    reference_mask,
    reference_samples,
)

pytest.importorskip("pycocotools")
# pycocotools' own decode (used by the reference masks only) warns under NumPy 2.
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")


def _index(doc: dict, ratio: bool = False, remap: bool = True, crowd: bool = True) -> CocoIndex:
    raw = raw_from_document(doc, "t", True, True)
    options = CocoOptions(ratio=ratio, avoid_class_remapping=not remap, include_iscrowd=crowd,
                          polygons=True, rle=True)  # fmt: skip
    return build_index(raw, options)


@pytest.mark.parametrize("ratio", [False, True])
@pytest.mark.parametrize("remap", [False, True])
@pytest.mark.parametrize("crowd", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_masks_match_pycocotools(
    seed: int, ratio: bool, remap: bool, crowd: bool
) -> None:
    doc = make_document(seed)
    index = _index(doc, ratio, remap, crowd)
    expected = reference_samples(doc, ratio=ratio, avoid_class_remapping=not remap,
                                 include_iscrowd=crowd)  # fmt: skip
    for i, sample in enumerate(expected):
        got = pixelwise_mask(index, i)
        assert got.dtype == np.int32 and got.shape == (sample["height"], sample["width"], 1)
        assert np.array_equal(got, reference_mask(sample, ratio)), sample["file_name"]


def test_compositing_rules() -> None:
    """DALI's quirks: polygons replace a label's RLE, the last RLE wins, higher labels on top."""
    from pycocotools import mask as mask_utils

    full = {"size": [4, 6], "counts": [0, 24]}
    left = {"size": [4, 6], "counts": [0, 8, 16]}
    polygon = [3.5, 0.5, 5.5, 0.5, 5.5, 3.5, 3.5, 3.5]
    doc = {
        "images": [{"id": 1, "file_name": "a", "width": 6, "height": 4}],
        "categories": [{"id": 1}, {"id": 2}, {"id": 3}],
        "annotations": [
            {"image_id": 1, "category_id": 2, "bbox": [0, 0, 6, 4], "segmentation": full},
            {"image_id": 1, "category_id": 2, "bbox": [0, 0, 6, 4], "segmentation": left},
            {"image_id": 1, "category_id": 1, "bbox": [0, 0, 6, 4], "segmentation": full},
            {"image_id": 1, "category_id": 3, "bbox": [0, 0, 6, 4], "segmentation": full},
            {"image_id": 1, "category_id": 3, "bbox": [0, 0, 6, 4],
             "segmentation": [polygon]},
        ],
    }  # fmt: skip
    mask = pixelwise_mask(_index(doc), 0)[:, :, 0]
    expected = np.ones((4, 6), np.int32)
    expected[:, :2] = 2  # label 2: only the last RLE (left two columns)
    inside = mask_utils.decode(mask_utils.frPyObjects([polygon], 4, 6)[0]).astype(bool)
    assert 0 < inside.sum() < 24
    expected[inside] = 3  # label 3: its polygon replaced its full RLE
    assert np.array_equal(mask, expected)


def test_unknown_category_is_invisible_and_empty_samples_are_zero() -> None:
    doc = {
        "images": [{"id": 1, "file_name": "a", "width": 3, "height": 2},
                   {"id": 2, "file_name": "b", "width": 3, "height": 2}],
        "categories": [{"id": 1}],
        "annotations": [{"image_id": 1, "category_id": 9, "bbox": [0, 0, 3, 2],
                         "segmentation": {"size": [2, 3], "counts": [0, 6]}}],
    }  # fmt: skip
    index = _index(doc)
    assert not pixelwise_mask(index, 0).any() and not pixelwise_mask(index, 1).any()


def test_rle_size_must_match_the_image() -> None:
    doc = {
        "images": [{"id": 1, "file_name": "a.jpg", "width": 3, "height": 2}],
        "annotations": [{"image_id": 1, "category_id": 9, "bbox": [0, 0, 3, 2],
                         "segmentation": {"size": [3, 2], "counts": [0, 6]}}],
    }  # fmt: skip
    with pytest.raises(ValueError, match=r"'a.jpg' is 3x2 .* but the image is 2x3"):
        pixelwise_mask(_index(doc), 0)


def test_needs_segmentation_data() -> None:
    raw = raw_from_document(make_document(), "t", False, False)
    with pytest.raises(ValueError, match="without segmentation data"):
        pixelwise_mask(build_index(raw, CocoOptions()), 0)


def _png_labels(path: Path) -> np.ndarray:
    rgb = np.asarray(Image.open(path).convert("RGB")).astype(np.int32) // 255
    return rgb[..., 0] + 2 * rgb[..., 1] + 3 * rgb[..., 2]


@pytest.mark.parametrize("ratio", [False, True])
def test_dali_reference_pngs(ratio: bool) -> None:
    raw = parse_coco(str(PIXELWISE / "instances.json"), True, True)
    index = build_index(raw, CocoOptions(ratio=ratio, polygons=True, rle=True))
    assert len(index) == 6
    for i, name in enumerate(index.file_names):
        png = PIXELWISE / "pixelwise_masks" / (Path(name).stem + ".png")
        assert np.array_equal(pixelwise_mask(index, i)[:, :, 0], _png_labels(png)), name


@pytest.mark.skipif(not REAL_COCO[1].exists(), reason=SKIP_REASON)
@pytest.mark.parametrize("ratio", [False, True])
def test_real_coco_masks_match_pycocotools(ratio: bool) -> None:
    doc = json.loads(REAL_COCO[1].read_text())
    index = build_index(
        parse_coco(str(REAL_COCO[1]), True, True), CocoOptions(ratio=ratio, polygons=True, rle=True)
    )
    expected = reference_samples(doc, ratio=ratio)
    for i in range(0, len(index), 4):
        assert np.array_equal(pixelwise_mask(index, i), reference_mask(expected[i], ratio))
