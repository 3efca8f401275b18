"""``bbox_rotate``: boxes follow ``rotate``'s canvas, modes, clipping and removal, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.geometry.bbox_rotate import rotate_boxes
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.boxes_testing import use_boxes
from tests.operators.cpu.catalogue_testing import build, feed

_BOXES = np.array([[0.1, 0.2, 0.4, 0.5], [0.6, 0.6, 0.95, 0.99]], np.float32)
_LABELS = np.array([1, 2], np.int32)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_boxes(empty_plugin_system)


def _rotate(*inputs: np.ndarray, **kwargs: Any) -> list[np.ndarray]:
    def graph() -> tuple[Any, ...]:
        out = fn.bbox_rotate(*(feed([x]) for x in inputs), input_shape=[100, 200], **kwargs)
        return tuple(out) if isinstance(out, list) else (out,)

    outputs = build(graph, batch_size=1)
    return [samples[0] for samples, _ in outputs]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # a 100 x 200 image rotated by 30 degrees lands on a 188 x 224 canvas (rotate's)
        ("expand", [[0.12374, 0.41500, 0.42268, 0.71277], [0.59965, 0.30670, 0.95733, 0.67253]]),
        ("fixed", [[0.13928, 0.48409, 0.40714, 0.64367], [0.62224, 0.38589, 0.93474, 0.59334]]),
        ("halfway", [[0.13151, 0.44954, 0.41491, 0.67822], [0.61094, 0.34630, 0.94604, 0.63293]]),
    ],
)
def test_modes(mode: str, expected: list[list[float]]) -> None:
    (out,) = _rotate(_BOXES, angle=30.0, mode=mode)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, atol=2e-5)


def test_keep_size_clips_and_removes_boxes_with_their_labels() -> None:
    boxes, labels = _rotate(_BOXES, _LABELS, angle=90.0, keep_size=True, remove_threshold=0.5)
    np.testing.assert_allclose(boxes, [[0.35, 0.7, 0.5, 1.0]], atol=1e-6)
    assert labels.tolist() == [1]


def test_pixel_boxes_and_xywh_layout() -> None:
    (pixels,) = _rotate(_BOXES * 100, angle=30.0, bbox_normalized=False)
    np.testing.assert_allclose(pixels[0], [19.0577, 98.0192, 60.0385, 139.0], atol=1e-3)
    xywh = _BOXES.copy()
    xywh[:, 2:] -= xywh[:, :2]
    (out,) = _rotate(xywh, angle=30.0, bbox_layout="xyWH")
    (ltrb,) = _rotate(_BOXES, angle=30.0)
    np.testing.assert_allclose(out[:, :2], ltrb[:, :2], atol=1e-6)
    np.testing.assert_allclose(out[:, 2:], ltrb[:, 2:] - ltrb[:, :2], atol=1e-6)


def test_explicit_canvas_size() -> None:
    (out,) = _rotate(_BOXES, angle=30.0, size=[300, 300])
    np.testing.assert_allclose(out[0], [0.21906, 0.44673, 0.44226, 0.63333], atol=2e-5)


@settings(max_examples=50, deadline=None)
@given(st.floats(-720, 720), st.floats(0, 50), st.floats(0, 50), st.floats(1, 50), st.floats(1, 50))
def test_full_turns_and_modes_share_the_centre(
    angle: float, x: float, y: float, w: float, h: float
) -> None:
    box = np.array([[x, y, x + w, y + h]])
    turned = rotate_boxes(box, 360.0, (100, 100), (100, 100), "expand")
    np.testing.assert_allclose(turned, box, atol=1e-6)
    expanded = rotate_boxes(box, angle, (100, 100), (150, 150), "expand")
    fixed = rotate_boxes(box, angle, (100, 100), (150, 150), "fixed")
    halfway = rotate_boxes(box, angle, (100, 100), (150, 150), "halfway")
    for out in (fixed, halfway):
        np.testing.assert_allclose(out[:, :2] + out[:, 2:], expanded[:, :2] + expanded[:, 2:])
    np.testing.assert_allclose(fixed[:, 2:] - fixed[:, :2], [[w, h]])
    np.testing.assert_allclose(halfway, (expanded + fixed) / 2)


@pytest.mark.parametrize(
    ("boxes", "kwargs", "message"),
    [
        (_BOXES, {"mode": "x"}, "unknown mode 'x'"),
        (_BOXES, {"bbox_layout": "XYxy"}, "unknown bbox_layout"),
        (_BOXES, {"remove_threshold": 2.0}, "remove_threshold must lie in"),
        (_BOXES.astype(np.float64), {}, "float32"),
    ],
)
def test_errors(boxes: np.ndarray, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        _rotate(boxes, angle=30.0, **kwargs)


def test_check_operator() -> None:
    example = OperatorExample([[_BOXES] * 3], args={"angle": 45.0, "input_shape": [40, 60]})
    assert "threads" in check_operator("bbox_rotate", example)
