"""``ssd_random_crop``: the window rules, kept boxes and labels, errors and reproducibility."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn
from feedline.operators.cpu.crops.bindings import crop_kernels
from feedline.operators.cpu.crops.ssd import ssd_window
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

_BOXES = np.array([[0.1, 0.1, 0.5, 0.6], [0.2, 0.3, 0.9, 0.9]], np.float32)
_LABELS = np.array([1, 2], np.int32)


def _boxes_strategy() -> Any:
    corner = st.tuples(
        st.floats(0.0, 0.5), st.floats(0.0, 0.5), st.floats(0.05, 0.5), st.floats(0.05, 0.5)
    )
    return st.lists(corner, min_size=1, max_size=5).map(
        lambda c: np.array([[x, y, x + w, y + h] for x, y, w, h in c], np.float32)
    )


#: The window tests to check: NumPy's, and the compiled one where the CPU library builds.
_KERNELS = [
    pytest.param(None, id="numpy"),
    pytest.param(
        crop_kernels(),
        id="compiled",
        marks=pytest.mark.skipif(crop_kernels() is None, reason="the CPU library is unavailable"),
    ),
]


@pytest.mark.parametrize("kernels", _KERNELS)
@settings(max_examples=60, deadline=None)
@given(_boxes_strategy(), st.integers(1, 5), st.integers(0, 2**32))
def test_window_rules(kernels: Any, boxes: np.ndarray, attempts: int, seed: int) -> None:
    found = ssd_window(boxes, attempts, np.random.default_rng(seed), kernels)
    if found is None:
        return
    window, inside = found
    kept = np.flatnonzero(inside)
    w, h = window[2:] - window[:2]
    assert 0.3 <= w < 1.0 and 0.3 <= h < 1.0 and 0.5 <= w / h <= 2.0
    assert window[0] >= 0.0 and window[2] <= 1.0 and window[1] >= 0.0 and window[3] <= 1.0
    centres = (boxes[kept, :2] + boxes[kept, 2:]) / 2
    assert kept.size and np.all((centres >= window[:2]) & (centres <= window[2:]))


_OPTIONS = [-1.0, 0.1, 0.3, 0.5, 0.7, 0.9, None]


def _one_window_at_a_time(
    boxes: np.ndarray, attempts: int, rng: np.random.Generator
) -> tuple[np.ndarray, list[int]] | None:
    """The search spelled out in float64: draws in the kernel's order, windows tested one by
    one."""
    while True:
        picks = rng.integers(len(_OPTIONS), size=4).tolist()
        ends = _OPTIONS.index(None) in picks
        rounds = picks.index(_OPTIONS.index(None)) if ends else 4
        count = rounds * attempts
        if count:
            extents = rng.uniform(0.3, 1.0, size=(count, 2))
            anchors = rng.uniform(0.0, 1.0, size=(count, 2)) * (1.0 - extents)
            for n in range(count):
                threshold = _OPTIONS[picks[n // attempts]]
                w, h = extents[n]
                if not 0.5 <= w / h <= 2.0:
                    continue
                window = np.concatenate([anchors[n], anchors[n] + extents[n]])
                kept, fails = [], False
                for k, (left, top, right, bottom) in enumerate(boxes):
                    cx, cy = (left + right) / 2, (top + bottom) / 2
                    if window[0] <= cx <= window[2] and window[1] <= cy <= window[3]:
                        kept.append(k)
                    iw = max(min(right, window[2]) - max(left, window[0]), 0.0)
                    ih = max(min(bottom, window[3]) - max(top, window[1]), 0.0)
                    box_area = (right - left) * (bottom - top)
                    union = box_area + (window[2] - window[0]) * (window[3] - window[1])
                    with np.errstate(divide="ignore", invalid="ignore"):
                        iou = np.float64(iw * ih) / (union - iw * ih)
                    fails = fails or bool(iou < threshold)
                if kept and not fails:
                    return window, kept
        if ends:
            return None


@pytest.mark.parametrize("kernels", _KERNELS)
@settings(max_examples=80, deadline=None)
@given(_boxes_strategy(), st.booleans(), st.integers(0, 60), st.integers(0, 999))
def test_search_equals_the_window_by_window_search(
    kernels: Any, boxes: np.ndarray, empty: bool, attempts: int, seed: int
) -> None:
    boxes = boxes[:0] if empty else boxes
    got = ssd_window(boxes, attempts, np.random.default_rng(seed), kernels)
    expected = _one_window_at_a_time(
        boxes.astype(np.float64), attempts, np.random.default_rng(seed)
    )
    if expected is None:
        assert got is None
    else:
        assert got is not None
        np.testing.assert_array_equal(got[0], expected[0])
        assert np.flatnonzero(got[1]).tolist() == expected[1]


def test_crop_outputs_match_the_window() -> None:
    ys, xs = np.mgrid[:30, :40]
    image = np.repeat((ys * 100 + xs)[:, :, None], 3, axis=2).astype(np.int32)
    images, boxes, labels = build(
        lambda: tuple(
            fn.ssd_random_crop(feed([image] * 8, "HWC"), feed([_BOXES] * 8), feed([_LABELS] * 8))
        ),
        batch_size=8,
    )
    assert images[1] == "HWC"
    for crop, out_boxes, out_labels in zip(images[0], boxes[0], labels[0], strict=True):
        assert crop.dtype == np.int32 and crop.shape[2] == 3
        assert out_boxes.dtype == np.float32 and out_boxes.shape == (out_labels.size, 4)
        assert np.all((out_boxes >= 0) & (out_boxes <= 1))
        assert set(out_labels.tolist()) <= {1, 2}
        if crop.shape == image.shape:
            np.testing.assert_array_equal(out_boxes, _BOXES)
        top, left = divmod(int(crop[0, 0, 0]), 100)
        height, width = crop.shape[:2]
        np.testing.assert_array_equal(crop, image[top : top + height, left : left + width])


def test_no_crop_passes_everything_through() -> None:
    image = np.zeros((10, 10, 3), np.uint8)
    # boxes whose centre no window holds end by the "no crop" option
    degenerate = np.array([[0.0, 0.0, 0.0, 0.0]], np.float32)
    images, boxes, _ = build(
        lambda: tuple(
            fn.ssd_random_crop(feed([image] * 4), feed([degenerate] * 4), feed([_LABELS[:1]] * 4))
        ),
        batch_size=4,
    )
    assert all(i.shape == image.shape for i in images[0])
    assert all(b.tolist() == degenerate.tolist() for b in boxes[0])


@pytest.mark.parametrize(
    ("image", "boxes", "labels", "message"),
    [
        (np.zeros((5,), np.uint8), _BOXES, _LABELS, "HWC or HW"),
        (np.zeros((5, 5, 3), np.uint8), _BOXES.astype(np.float64), _LABELS, "float32"),
        (np.zeros((5, 5, 3), np.uint8), _BOXES, np.zeros((2, 1, 1), np.int32), "labels must"),
    ],
)
def test_errors(image: np.ndarray, boxes: np.ndarray, labels: np.ndarray, message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        build(
            lambda: tuple(
                fn.ssd_random_crop(feed([image] * 2), feed([boxes] * 2), feed([labels] * 2))
            )
        )


#: Windows around the middle box always keep it: its IoU is irrelevant at the -1 option.
_MIDDLE_BOX = np.array([[0.45, 0.45, 0.55, 0.55]], np.float32)


def test_hw_image_is_cropped_like_one_channel() -> None:
    ys, xs = np.mgrid[:30, :40]
    image = (ys * 100 + xs).astype(np.int32)
    images, boxes, _ = build(
        lambda: tuple(
            fn.ssd_random_crop(feed([image] * 16), feed([_MIDDLE_BOX] * 16), feed([[7]] * 16))
        ),
        batch_size=16,
    )
    assert any(crop.shape != image.shape for crop in images[0])
    assert all(kept.shape == (1, 4) for kept in boxes[0])
    for crop in images[0]:
        assert crop.ndim == 2
        top, left = divmod(int(crop[0, 0]), 100)
        height, width = crop.shape
        np.testing.assert_array_equal(crop, image[top : top + height, left : left + width])


def test_missing_labels_pass_when_nothing_is_cropped() -> None:
    # no box centre lies in [0, 1]: every sample ends with "no crop", which copies the inputs
    far = np.array([[5.0, 5.0, 6.0, 6.0]] * 3, np.float32)
    image = np.zeros((8, 8), np.uint8)
    images, boxes, labels = build(
        lambda: tuple(fn.ssd_random_crop(feed([image] * 4), feed([far] * 4), feed([[1]] * 4))),
        batch_size=4,
    )
    assert all(i.shape == image.shape for i in images[0])
    assert all(np.array_equal(b, far) for b in boxes[0])
    assert all(lab.tolist() == [1] for lab in labels[0])


def test_a_kept_box_without_label_is_an_error() -> None:
    boxes = np.concatenate([np.zeros((1, 4), np.float32), _MIDDLE_BOX])
    image = np.zeros((8, 8, 3), np.uint8)
    with pytest.raises((OperatorError, ValueError), match="one entry per box .* keeps box 1"):
        build(
            lambda: tuple(
                fn.ssd_random_crop(feed([image] * 16), feed([boxes] * 16), feed([[1]] * 16))
            ),
            batch_size=16,
        )


def test_warns_that_it_is_deprecated() -> None:
    image = np.zeros((5, 5, 3), np.uint8)
    with pytest.warns(DeprecationWarning, match="random_bbox_crop"):
        build(
            lambda: tuple(
                fn.ssd_random_crop(feed([image] * 2), feed([_BOXES] * 2), feed([_LABELS] * 2))
            )
        )


def test_check_operator() -> None:
    image = np.arange(20 * 16 * 3, dtype=np.uint8).reshape(20, 16, 3)
    example = OperatorExample([[image] * 4, [_BOXES] * 4, [_LABELS] * 4], ["HWC", "", ""])
    assert "threads" in check_operator("ssd_random_crop", example)


_ODD_VALUES = st.sampled_from([0.0, 0.5, 1.0, -0.25, 1.5, np.nan, np.inf])


@pytest.mark.skipif(crop_kernels() is None, reason="the CPU library is unavailable")
@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.floats(-0.5, 1.5, width=32) | _ODD_VALUES, min_size=4, max_size=4)),
    st.integers(1, 8),
    st.integers(0, 999),
)
def test_compiled_kernels_equal_numpy_on_odd_boxes(
    rows: list[list[float]], attempts: int, seed: int
) -> None:
    from feedline.operators.cpu.crops.ssd import _crop_boxes, _first_window

    boxes = np.array(rows, np.float32).reshape(-1, 4)
    rng = np.random.default_rng(seed)
    draws = rng.random((2, 3 * attempts, 2))
    thresholds = rng.choice([-1.0, 0.1, 0.5, 0.9], size=3)
    kernels = crop_kernels()
    assert kernels is not None
    got = kernels.first_window(boxes, draws, thresholds, attempts)
    expected = _first_window(boxes, draws, thresholds, attempts)
    if expected is None:
        assert got is None
        return
    assert got is not None
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    for mine, reference in zip(
        kernels.crop_boxes(boxes, got[1], got[0]), _crop_boxes(boxes, *expected[::-1]), strict=True
    ):
        np.testing.assert_array_equal(mine, reference)
