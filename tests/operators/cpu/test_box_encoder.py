"""``box_encoder`` against a plain-Python SSD encoder written from the paper's formulas."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import fn
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.box_encoder import encode_boxes, prepare_anchors
from tests.conftest import sample_data
from tests.operators.cpu.boxes_testing import run_pipeline, use_boxes


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_boxes(empty_plugin_system)


def py_iou(a: list[float], b: list[float]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union > 0 else 0.0


def reference_encode(
    boxes: list[list[float]],
    labels: list[int],
    anchors: list[list[float]],
    criteria: float,
    offset: bool,
    means: list[float],
    stds: list[float],
) -> tuple[list[list[float]], list[int]]:
    """SSD matching: best anchor per box is forced; other anchors match above ``criteria``."""
    ious = [[py_iou(b, a) for a in anchors] for b in boxes]
    for row in ious:
        best = max(range(len(anchors)), key=lambda j, row=row: (row[j], j))
        row[best] = 2.0
    out_boxes, out_labels = [], []
    for j, anchor in enumerate(anchors):
        acx, acy = (anchor[0] + anchor[2]) / 2, (anchor[1] + anchor[3]) / 2
        aw, ah = anchor[2] - anchor[0], anchor[3] - anchor[1]
        best_box = max(range(len(boxes)), key=lambda i, j=j: (ious[i][j], i)) if boxes else None
        if best_box is None or ious[best_box][j] <= criteria:
            out_boxes.append([0.0] * 4 if offset else [acx, acy, aw, ah])
            out_labels.append(0)
            continue
        b = boxes[best_box]
        cx, cy, w, h = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[2] - b[0], b[3] - b[1]
        if offset:
            encoded = [
                ((cx - acx) / aw - means[0]) / stds[0],
                ((cy - acy) / ah - means[1]) / stds[1],
                (math.log(w / aw) - means[2]) / stds[2],
                (math.log(h / ah) - means[3]) / stds[3],
            ]
        else:
            encoded = [cx, cy, w, h]
        out_boxes.append(encoded)
        out_labels.append(labels[best_box])
    return out_boxes, out_labels


def grid_anchors(cells: int, sizes: tuple[float, ...]) -> list[list[float]]:
    anchors = []
    for i, j in itertools.product(range(cells), repeat=2):
        cx, cy = (j + 0.5) / cells, (i + 0.5) / cells
        for size in sizes:
            anchors.append([cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2])
    return anchors


ANCHORS = grid_anchors(4, (0.2, 0.45)) + grid_anchors(2, (0.6, 0.9))
FLAT_ANCHORS = [value for anchor in ANCHORS for value in anchor]


@st.composite
def boxes_and_labels(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(0, 6))
    rows = []
    for _ in range(n):
        x, y = draw(st.floats(0, 0.8)), draw(st.floats(0, 0.8))
        w, h = draw(st.floats(0.05, 0.2)), draw(st.floats(0.05, 0.2))
        rows.append([x, y, x + w, y + h])
    labels = draw(st.lists(st.integers(1, 80), min_size=n, max_size=n))
    return np.array(rows, np.float32).reshape(n, 4), np.array(labels, np.int32)


@settings(max_examples=60, deadline=None)
@given(boxes_and_labels(), st.sampled_from([0.3, 0.5, 0.7]), st.booleans())
def test_matches_reference(data: Any, criteria: float, offset: bool) -> None:
    boxes, labels = data
    means, stds = [0.1, -0.1, 0.0, 0.2], [0.1, 0.1, 0.2, 0.2]
    got_boxes, got_labels = encode_boxes(
        boxes, labels, prepare_anchors(FLAT_ANCHORS), criteria, offset, 1.0, means, stds
    )
    ref_boxes, ref_labels = reference_encode(
        boxes.astype(np.float64).tolist(), labels.tolist(), ANCHORS, criteria, offset, means, stds
    )
    assert got_boxes.dtype == np.float32 and got_boxes.shape == (len(ANCHORS), 4)
    np.testing.assert_array_equal(got_labels, ref_labels)
    np.testing.assert_allclose(got_boxes, ref_boxes, rtol=1e-5, atol=1e-5)


def test_scale_cancels_in_offsets_and_ties_pick_the_last_index() -> None:
    anchors = prepare_anchors((0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5, 0.5))
    boxes = np.array([[0.0, 0.0, 0.5, 0.5]], np.float32)
    out, labels = encode_boxes(boxes, np.array([[7]], np.int32), anchors, 0.9, True, 300.0)
    np.testing.assert_array_equal(labels, [7, 7])
    np.testing.assert_allclose(out, 0.0, atol=1e-6)
    twin = np.array([[0.1, 0.1, 0.4, 0.4], [0.1, 0.1, 0.4, 0.4]], np.float32)
    _, labels = encode_boxes(twin, np.array([1, 2], np.int32), anchors, 0.2)
    np.testing.assert_array_equal(labels, [2, 2])


def test_errors_name_the_problem() -> None:
    anchors = prepare_anchors((0.0, 0.0, 1.0, 1.0))
    boxes = np.zeros((2, 4), np.float32)
    with pytest.raises(ValueError, match="multiple of 4"):
        prepare_anchors((0.0, 0.0, 1.0))
    with pytest.raises(TypeError, match="labels must be integers"):
        encode_boxes(boxes, np.zeros(2, np.float32), anchors)
    with pytest.raises(ValueError, match="to match 2 boxes"):
        encode_boxes(boxes, np.zeros(3, np.int32), anchors)
    with pytest.raises(ValueError, match=r"shape \(N, 4\)"):
        encode_boxes(np.zeros((2, 6), np.float32), np.zeros(2, np.int32), anchors)


def encode_in_pipeline(boxes: list[np.ndarray], labels: list[np.ndarray], **kwargs: Any) -> Any:
    def define() -> Any:
        return fn.box_encoder(
            fn.external_source(source=lambda: boxes),
            fn.external_source(source=lambda: labels),
            **kwargs,
        )

    return run_pipeline(define, batch_size=len(boxes))[0]


def test_real_coco_boxes_in_a_pipeline() -> None:
    coco_json = sample_data("coco_dali_dummy", "instances.json")
    data = json.loads(coco_json.read_text())
    sizes = {img["id"]: (img["width"], img["height"]) for img in data["images"]}
    per_image: dict[int, tuple[list[list[float]], list[int]]] = {}
    for ann in data["annotations"]:
        w, h = sizes[ann["image_id"]]
        x, y, bw, bh = ann["bbox"]
        if bw < 1 or bh < 1:
            continue
        boxes, labels = per_image.setdefault(ann["image_id"], ([], []))
        boxes.append([x / w, y / h, (x + bw) / w, (y + bh) / h])
        labels.append(ann["category_id"])
    chosen = sorted(per_image)[:8]
    boxes = [np.array(per_image[i][0], np.float32) for i in chosen]
    labels = [np.array(per_image[i][1], np.int32) for i in chosen]
    stds = [0.1, 0.1, 0.2, 0.2]
    out_boxes, out_labels = encode_in_pipeline(
        boxes, labels, anchors=FLAT_ANCHORS, criteria=0.5, offset=True, stds=stds
    )
    for i in range(len(chosen)):
        ref_boxes, ref_labels = reference_encode(
            boxes[i].astype(np.float64).tolist(),
            labels[i].tolist(),
            ANCHORS,
            0.5,
            True,
            [0.0] * 4,
            stds,
        )
        np.testing.assert_array_equal(out_labels.at(i), ref_labels)
        np.testing.assert_allclose(out_boxes.at(i), ref_boxes, rtol=1e-4, atol=1e-4)


def test_pipeline_arguments_are_checked_at_build() -> None:
    boxes, labels = [np.zeros((0, 4), np.float32)], [np.zeros((0,), np.int32)]
    with pytest.raises(ValueError, match="stds must not contain zeros"):
        encode_in_pipeline(boxes, labels, anchors=[0, 0, 1, 1], stds=[1, 0, 1, 1])
    with pytest.raises(ValueError, match=r"criteria must lie in \[0, 1\]"):
        encode_in_pipeline(boxes, labels, anchors=[0, 0, 1, 1], criteria=1.5)
    out_boxes, out_labels = encode_in_pipeline(boxes, labels, anchors=[0, 0, 1, 0.5])
    np.testing.assert_allclose(out_boxes.at(0), [[0.5, 0.25, 1.0, 0.5]])
    np.testing.assert_array_equal(out_labels.at(0), [0])
