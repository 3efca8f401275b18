"""Box helpers, ``bb_flip`` and ``bbox_paste`` against formulas written here."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from feedline import fn
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.geometry.bbox import (
    flip_boxes,
    iou,
    paste_boxes,
    read_boxes,
    resolve_bbox_layout,
    write_boxes,
)
from tests.operators.cpu.boxes_testing import run_pipeline, use_boxes

unit = st.floats(0.0, 1.0, allow_nan=False, width=32)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_boxes(empty_plugin_system)


def source(samples: list[np.ndarray]) -> Any:
    return fn.external_source(source=lambda: samples)


@st.composite
def box_sets(draw: st.DrawFn, ndim: int = 2) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(0, 6))
    a = np.array(draw(st.lists(unit, min_size=n * ndim, max_size=n * ndim))).reshape(n, ndim)
    b = np.array(draw(st.lists(unit, min_size=n * ndim, max_size=n * ndim))).reshape(n, ndim)
    return np.minimum(a, b).astype(np.float32), np.maximum(a, b).astype(np.float32)


@settings(max_examples=60)
@given(st.sampled_from([2, 3]), st.data())
def test_layout_round_trip(ndim: int, data: st.DataObject) -> None:
    lo, hi = data.draw(box_sets(ndim))
    kind = data.draw(st.sampled_from(["XYZ", "WHD"]))
    letters = list("xyz"[:ndim] + kind[:ndim])
    layout = "".join(data.draw(st.permutations(letters)))
    coords = write_boxes(lo, hi, layout)
    for column, letter in enumerate(layout):
        for names, values in (("xyz", lo), ("XYZ", hi), ("WHD", hi - lo)):
            if letter in names:
                expected = values[:, names.index(letter)]
        np.testing.assert_allclose(coords[:, column], expected, atol=1e-6)
    back_lo, back_hi = read_boxes(coords, layout)
    np.testing.assert_allclose(back_lo, lo, atol=1e-6)
    np.testing.assert_allclose(back_hi, hi, atol=1e-6)


def test_resolve_bbox_layout() -> None:
    assert resolve_bbox_layout("", 2) == "xyXY"
    assert resolve_bbox_layout("", 3) == "xyzXYZ"
    assert resolve_bbox_layout("XYxy", 2) == "XYxy"
    assert resolve_bbox_layout("yxHW", 2) == "yxHW"
    for bad in ("xyXW", "xyX", "xyzXYZ", "xxXY"):
        with pytest.raises(ValueError, match="bbox_layout"):
            resolve_bbox_layout(bad, 2)


def reference_iou(box_a: list[float], box_b: list[float]) -> float:
    """The IoU in float32 arithmetic, as the operators compute it (areas of tiny boxes underflow
    to 0 there, which float64 would not)."""
    a, b = np.float32(box_a), np.float32(box_b)
    zero = np.float32(0)
    w = max(zero, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(zero, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


@settings(max_examples=60)
@given(box_sets(), box_sets())
@example(
    (np.float32([[0, 0]]), np.float32([[1e-45, 0.5]])),
    (np.float32([[0, 0]]), np.float32([[1e-45, 1.0]])),
)
def test_iou_matches_pairwise_formula(a: Any, b: Any) -> None:
    (lo_a, hi_a), (lo_b, hi_b) = a, b
    got = iou(lo_a[:, None], hi_a[:, None], lo_b[None], hi_b[None])
    assert got.shape == (len(lo_a), len(lo_b))
    for i, j in itertools.product(range(len(lo_a)), range(len(lo_b))):
        box_a = [*lo_a[i].tolist(), *hi_a[i].tolist()]
        box_b = [*lo_b[j].tolist(), *hi_b[j].tolist()]
        assert got[i, j] == pytest.approx(reference_iou(box_a, box_b), rel=1e-5, abs=1e-6)


def reference_flip(box: list[float], ltrb: bool, horizontal: bool, vertical: bool) -> list[float]:
    x0, y0, c2, c3 = box
    if ltrb:
        if horizontal:
            x0, c2 = 1 - c2, 1 - x0
        if vertical:
            y0, c3 = 1 - c3, 1 - y0
    else:
        if horizontal:
            x0 = 1 - x0 - c2
        if vertical:
            y0 = 1 - y0 - c3
    return [x0, y0, c2, c3]


@settings(max_examples=60)
@given(box_sets(), st.booleans(), st.booleans(), st.booleans())
def test_flip_boxes_matches_reference(
    boxes: Any, ltrb: bool, horizontal: bool, vertical: bool
) -> None:
    lo, hi = boxes
    coords = write_boxes(lo, hi, "xyXY" if ltrb else "xyWH")
    flipped = flip_boxes(coords, ltrb, horizontal, vertical)
    assert flipped.dtype == np.float32 and flipped.shape == coords.shape
    for row, out in zip(coords.tolist(), flipped.tolist(), strict=True):
        np.testing.assert_allclose(out, reference_flip(row, ltrb, horizontal, vertical), atol=1e-6)
    np.testing.assert_allclose(flip_boxes(flipped, ltrb, horizontal, vertical), coords, atol=1e-6)


def test_flip_keeps_flat_shape_and_rejects_bad_input() -> None:
    flat = np.array([0.1, 0.2, 0.3, 0.4, 0.0, 0.0, 1.0, 1.0], np.float32)
    np.testing.assert_allclose(
        flip_boxes(flat, True, True, False), [0.7, 0.2, 0.9, 0.4, 0, 0, 1, 1]
    )
    with pytest.raises(TypeError, match="floating point"):
        flip_boxes(np.zeros((2, 4), np.int32), True, True, False)
    with pytest.raises(ValueError, match="4 coordinates"):
        flip_boxes(np.zeros((2, 3), np.float32), True, True, False)


@settings(max_examples=60)
@given(
    box_sets(),
    st.floats(1.0, 8.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.booleans(),
)
def test_paste_boxes_formula_and_range(
    boxes: Any, ratio: float, px: float, py: float, ltrb: bool
) -> None:
    lo, hi = boxes
    coords = write_boxes(lo, hi, "xyXY" if ltrb else "xyWH")
    pasted = paste_boxes(coords, ratio, px, py, ltrb)
    for row, out in zip(coords.tolist(), pasted.tolist(), strict=True):
        expected = [
            row[0] / ratio + px * (ratio - 1) / ratio,
            row[1] / ratio + py * (ratio - 1) / ratio,
            row[2] / ratio + (px * (ratio - 1) / ratio if ltrb else 0.0),
            row[3] / ratio + (py * (ratio - 1) / ratio if ltrb else 0.0),
        ]
        np.testing.assert_allclose(out, expected, atol=2e-6)
    out_lo, out_hi = read_boxes(pasted, "xyXY" if ltrb else "xyWH")
    assert np.all(out_lo >= 0) and np.all(out_hi.astype(np.float32) <= 1)


def test_paste_rejects_small_ratio() -> None:
    with pytest.raises(ValueError, match="ratio must be at least 1"):
        paste_boxes(np.zeros((1, 4), np.float32), 0.5, 0.5, 0.5, True)


def test_bb_flip_in_pipeline_with_per_sample_flags() -> None:
    boxes = [np.array([[0.1, 0.2, 0.3, 0.6]], np.float32) for _ in range(4)]
    flags = [np.array(i % 2, np.int32) for i in range(4)]

    def define() -> Any:
        b = source(boxes)
        return fn.bb_flip(b, ltrb=True, horizontal=source(flags), vertical=0), b

    flipped, original = run_pipeline(define)[0]
    for i in range(4):
        expected = [[0.7, 0.2, 0.9, 0.6]] if i % 2 else [[0.1, 0.2, 0.3, 0.6]]
        np.testing.assert_allclose(flipped.at(i), expected, atol=1e-6)
        np.testing.assert_array_equal(original.at(i), boxes[i])


def test_bbox_paste_in_pipeline() -> None:
    boxes = [np.array([[0.0, 0.0, 1.0, 1.0]], np.float32)] * 2

    def define() -> Any:
        return fn.bbox_paste(source(boxes), ratio=2.0, paste_x=0.0, paste_y=1.0, ltrb=True)

    (out,) = run_pipeline(define, batch_size=2)[0]
    np.testing.assert_allclose(out.at(0), [[0.0, 0.5, 0.5, 1.0]])


def test_bb_flip_error_names_operator_and_sample() -> None:
    boxes = [np.zeros((1, 4), np.float32), np.zeros((1, 3), np.float32)]

    def define() -> Any:
        return fn.bb_flip(source(boxes), name="flipper")

    with pytest.raises(OperatorError, match=r"flipper.*sample 1.*4 coordinates per box"):
        run_pipeline(define, batch_size=2)


def test_bad_arguments_are_rejected_at_definition() -> None:
    with pytest.raises(TypeError, match="unexpected argument 'horizontl'"):
        run_pipeline(lambda: fn.bb_flip(source([np.zeros((1, 4), np.float32)]), horizontl=1))
    with pytest.raises(TypeError, match="missing required argument 'ratio'"):
        run_pipeline(lambda: fn.bbox_paste(source([np.zeros((1, 4), np.float32)])))
