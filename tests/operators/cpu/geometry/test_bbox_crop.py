"""``random_bbox_crop``: invariants of every returned window, fixed windows, errors, seeds."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import fn
from feedline.core.errors import OperatorError
from feedline.core.kernel import KernelContext, SampleContext
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.geometry import bbox_crop
from feedline.operators.cpu.geometry import schemas as geometry_schemas
from feedline.operators.cpu.geometry.bbox_crop import (
    CropParams,
    RandomBBoxCropKernel,
    find_crop,
    make_crop_params,
)
from tests.conftest import sample_data
from tests.operators.cpu.boxes_testing import run_pipeline, use_boxes

DEFAULTS = {
    "thresholds": (0.0,),
    "threshold_type": "iou",
    "aspect_ratio": None,
    "scaling": None,
    "num_attempts": 1,
    "total_num_attempts": -1,
    "all_boxes_above_threshold": True,
    "allow_no_crop": None,
    "bbox_prune_threshold": None,
}


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_boxes(empty_plugin_system)


def params(fixed_window: bool = False, **overrides: Any) -> CropParams:
    return make_crop_params({**DEFAULTS, **overrides}, fixed_window)


def overlap(
    crop_lo: np.ndarray, crop_hi: np.ndarray, lo: np.ndarray, hi: np.ndarray, kind: str
) -> np.ndarray:
    """IoU or fraction-inside of each box with the window, from the definitions."""
    inter = np.prod(np.clip(np.minimum(crop_hi, hi) - np.maximum(crop_lo, lo), 0, None), axis=1)
    box = np.prod(hi - lo, axis=1)
    if kind == "iou":
        return inter / (np.prod(crop_hi - crop_lo) + box - inter)
    return inter / box


def check_result(lo: np.ndarray, hi: np.ndarray, p: CropParams, result: Any) -> None:
    """Invariants every window must satisfy."""
    anchor, shape = result.anchor, result.shape
    crop_lo, crop_hi = anchor, anchor + shape
    assert np.all(crop_lo >= -1e-9) and np.all(crop_hi <= 1 + 1e-9)
    no_crop = np.allclose(anchor, 0) and np.allclose(shape, 1)
    if not no_crop:
        (s_min, s_max), ranges = p.scaling, p.aspect_ratio
        ratio = shape[0] / shape[1]
        if ranges[0][0] == ranges[0][1]:
            assert ratio == pytest.approx(ranges[0][0], rel=1e-5)
            assert s_min - 1e-9 <= shape.max() <= s_max + 1e-9
        else:
            assert ranges[0][0] * (1 - 1e-6) <= ratio <= ranges[0][1] * (1 + 1e-6)
            assert np.all((shape >= s_min - 1e-9) & (shape <= s_max + 1e-9))
    metric = overlap(crop_lo, crop_hi, lo, hi, p.threshold_type)
    best = metric.min() if p.all_boxes_above_threshold else metric.max()
    if not no_crop:
        assert best >= min(p.thresholds) - 1e-9
        assert result.indices.size >= 1
    centre = (lo + hi) / 2
    inside = np.all((centre >= crop_lo) & (centre < crop_hi), axis=1)
    np.testing.assert_array_equal(result.indices, np.flatnonzero(inside))
    kept_lo, kept_hi = lo[result.indices], hi[result.indices]
    expect_lo = np.clip((np.maximum(kept_lo, crop_lo) - crop_lo) / shape, 0, 1)
    expect_hi = np.clip((np.minimum(kept_hi, crop_hi) - crop_lo) / shape, 0, 1)
    np.testing.assert_allclose(result.lo, expect_lo, atol=1e-9)
    np.testing.assert_allclose(result.hi, expect_hi, atol=1e-9)


@st.composite
def boxes_strategy(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 6))
    corners = draw(
        st.lists(
            st.tuples(st.floats(0.0, 0.8), st.floats(0.0, 0.8), st.floats(0.05, 0.2)),
            min_size=n,
            max_size=n,
        )
    )
    lo = np.array([[x, y] for x, y, _ in corners])
    hi = lo + np.array([[s, s * 1.5] for _, _, s in corners])
    return lo, np.minimum(hi, 1.0)


@settings(max_examples=80, deadline=None)
@given(
    boxes_strategy(),
    st.lists(st.sampled_from([0.0, 0.1, 0.3, 0.5]), min_size=1, max_size=3),
    st.sampled_from([(0.5, 2.0), (1.0, 1.0), (0.75, 0.75), (1.5, 1.5)]),
    st.sampled_from([(0.3, 1.0), (0.5, 0.9), (1.0, 1.0)]),
    st.sampled_from(["iou", "overlap"]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_every_window_satisfies_the_constraints(
    boxes: tuple[np.ndarray, np.ndarray],
    thresholds: list[float],
    aspect: tuple[float, float],
    scaling: tuple[float, float],
    kind: str,
    all_boxes: bool,
    seed: int,
) -> None:
    lo, hi = boxes
    p = params(
        thresholds=tuple(thresholds),
        aspect_ratio=aspect,
        scaling=scaling,
        threshold_type=kind,
        all_boxes_above_threshold=all_boxes,
        num_attempts=10,
    )
    result = find_crop(lo, hi, p, np.random.default_rng(seed))
    check_result(lo, hi, p, result)


def test_no_crop_returns_every_box_unchanged() -> None:
    lo = np.array([[0.1, 0.1], [0.6, 0.5]])
    hi = np.array([[0.3, 0.4], [0.9, 0.7]])
    p = params(thresholds=(0.9,), allow_no_crop=True)
    seen_no_crop = False
    for seed in range(30):
        result = find_crop(lo, hi, p, np.random.default_rng(seed))
        if np.allclose(result.shape, 1):
            seen_no_crop = True
            np.testing.assert_array_equal(result.indices, [0, 1])
            np.testing.assert_allclose(result.lo, lo)
    assert seen_no_crop


def test_fixed_window_anchor_is_integer_and_inside() -> None:
    lo = np.array([[0.4, 0.4]])
    hi = np.array([[0.6, 0.6]])
    p = params(fixed_window=True)
    input_shape, crop_shape = np.array([640.0, 480.0]), np.array([300.0, 300.0])
    for seed in range(20):
        result = find_crop(lo, hi, p, np.random.default_rng(seed), input_shape, crop_shape)
        np.testing.assert_array_equal(result.shape, crop_shape)
        assert np.all(result.anchor == np.round(result.anchor))
        assert np.all(result.anchor >= 0) and np.all(result.anchor + crop_shape <= input_shape)
        rel_lo = result.anchor / input_shape
        rel_hi = (result.anchor + crop_shape) / input_shape
        expect = np.clip((np.maximum(lo, rel_lo) - rel_lo) / (rel_hi - rel_lo), 0, 1)
        np.testing.assert_allclose(result.lo, expect[result.indices])


def test_total_num_attempts_returns_best_window() -> None:
    lo, hi = np.array([[0.0, 0.0]]), np.array([[0.1, 0.1]])
    p = params(thresholds=(1.0,), scaling=(0.5, 0.5), allow_no_crop=False, total_num_attempts=7)
    result = find_crop(lo, hi, p, np.random.default_rng(0))
    assert np.allclose(result.shape, 0.5)


def test_unbounded_search_gives_up_with_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bbox_crop, "UNBOUNDED_SEARCH_LIMIT", 200)
    lo, hi = np.array([[0.0, 0.0]]), np.array([[0.1, 0.1]])
    p = params(thresholds=(1.0,), scaling=(0.5, 0.5), allow_no_crop=False)
    with pytest.raises(ValueError, match="no valid crop window found in 200 attempts"):
        find_crop(lo, hi, p, np.random.default_rng(0))


def test_impossible_aspect_ratio_is_reported() -> None:
    p = params(
        aspect_ratio=(3.0, 4.0), scaling=(0.9, 1.0), total_num_attempts=50, allow_no_crop=False
    )
    with pytest.raises(ValueError, match="aspect_ratio"):
        find_crop(np.zeros((1, 2)), np.ones((1, 2)) * 0.5, p, np.random.default_rng(0))


def test_prune_threshold_keeps_boxes_by_area() -> None:
    lo, hi = np.array([[0.0, 0.0], [0.45, 0.45]]), np.array([[0.5, 0.5], [0.55, 0.55]])
    p = params(scaling=(0.5, 0.5), bbox_prune_threshold=0.2, allow_no_crop=False)
    for seed in range(10):
        result = find_crop(lo, hi, p, np.random.default_rng(seed))
        crop_lo, crop_hi = result.anchor, result.anchor + result.shape
        fraction = overlap(crop_lo, crop_hi, lo, hi, "overlap")
        np.testing.assert_array_equal(result.indices, np.flatnonzero(fraction >= 0.2))


@pytest.mark.parametrize(
    ("overrides", "fixed", "message"),
    [
        ({"thresholds": ()}, False, "at least one value"),
        ({"thresholds": (1.5,)}, False, r"thresholds must lie in \[0, 1\]"),
        ({"num_attempts": 0}, False, "num_attempts"),
        ({"total_num_attempts": 0}, False, "total_num_attempts"),
        ({"aspect_ratio": (2.0, 1.0)}, False, "aspect_ratio range"),
        ({"aspect_ratio": (0.0, 1.0)}, False, "aspect_ratio range"),
        ({"aspect_ratio": (1.0, 1.0, 1.0)}, False, "aspect_ratio needs 2 values"),
        ({"scaling": (-0.1, 1.0)}, False, "scaling range"),
        ({"scaling": (0.5,)}, False, "scaling must be a range"),
        ({"bbox_prune_threshold": 2.0}, False, "bbox_prune_threshold"),
        ({"scaling": (0.5, 1.0)}, True, "scaling cannot be combined"),
        ({"aspect_ratio": (0.5, 1.0)}, True, "aspect_ratio cannot be combined"),
        ({"allow_no_crop": True}, True, "allow_no_crop=True cannot be combined"),
    ],
)
def test_invalid_settings_name_the_argument(
    overrides: dict[str, Any], fixed: bool, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        params(fixed_window=fixed, **overrides)


BOXES = [
    np.array([[0.1, 0.1, 0.4, 0.5], [0.5, 0.2, 0.9, 0.6], [0.3, 0.6, 0.6, 0.95]], np.float32),
    np.array([[0.2, 0.2, 0.8, 0.8]], np.float32),
    np.array([[0.0, 0.0, 0.2, 0.3], [0.7, 0.7, 1.0, 1.0]], np.float32),
    np.array([[0.25, 0.1, 0.5, 0.9], [0.6, 0.3, 0.95, 0.5]], np.float32),
]
LABELS = [np.arange(len(b), dtype=np.int32) + 10 * i for i, b in enumerate(BOXES)]


def ssd_crop(**kwargs: Any) -> Callable[[], Any]:
    def define() -> Any:
        boxes = fn.external_source(source=lambda: BOXES)
        labels = fn.external_source(source=lambda: LABELS)
        return tuple(
            fn.random_bbox_crop(
                boxes,
                labels,
                thresholds=[0.1, 0.3, 0.5],
                scaling=[0.3, 1.0],
                aspect_ratio=[0.5, 2.0],
                num_attempts=20,
                output_bbox_indices=True,
                **kwargs,
            )
        )

    return define


def test_pipeline_outputs_are_consistent_and_thread_independent() -> None:
    single = run_pipeline(ssd_crop(), num_threads=1, iterations=2)
    multi = run_pipeline(ssd_crop(), num_threads=3, iterations=2)
    for a, b in zip(single, multi, strict=True):
        for x, y in zip(a, b, strict=True):
            for i in range(len(x)):
                np.testing.assert_array_equal(x.at(i), y.at(i))
    anchor, shape, boxes, labels, indices = single[0]
    assert anchor.dtype == shape.dtype == boxes.dtype
    for i in range(4):
        np.testing.assert_array_equal(labels.at(i), LABELS[i][indices.at(i)])
        assert boxes.at(i).shape == (len(indices.at(i)), 4)
        assert np.all((boxes.at(i) >= 0) & (boxes.at(i) <= 1))
    assert not all(np.array_equal(single[0][0].at(i), single[1][0].at(i)) for i in range(4)), (
        "iterations should draw different windows"
    )


def test_pipeline_fixed_window_with_shape_layout() -> None:
    def define() -> Any:
        boxes = fn.external_source(source=lambda: BOXES)
        return tuple(
            fn.random_bbox_crop(
                boxes,
                fn.external_source(source=lambda: LABELS),
                crop_shape=[100, 200],
                input_shape=[400, 300],
                shape_layout="HW",
                bbox_layout="xyXY",
            )
        )

    (anchor, shape, *_) = run_pipeline(define)[0]
    for i in range(4):
        np.testing.assert_array_equal(shape.at(i), [200, 100])
        assert 0 <= anchor.at(i)[0] <= 100 and 0 <= anchor.at(i)[1] <= 300


def test_pipeline_errors_name_the_culprit() -> None:
    bad = [b.copy() for b in BOXES]
    bad[2][1, 2] = 1.5

    def define() -> Any:
        boxes = fn.external_source(source=lambda: bad)
        labels = fn.external_source(source=lambda: LABELS)
        return tuple(fn.random_bbox_crop(boxes, labels, name="crop"))

    with pytest.raises(OperatorError, match=r"'crop'.*sample 2.*box 1 .*within \[0, 1\]"):
        run_pipeline(define)
    with pytest.raises(ValueError, match="ltrb and bbox_layout"):
        run_pipeline(ssd_crop(ltrb=True, bbox_layout="xyXY"))
    with pytest.raises(ValueError, match="crop_shape needs input_shape"):
        run_pipeline(ssd_crop(crop_shape=[10, 10]))
    with pytest.raises(ValueError, match="must be one of 'iou', 'overlap'"):
        run_pipeline(ssd_crop(threshold_type="area"))


def test_ltrb_is_deprecated_but_works() -> None:
    with pytest.warns(DeprecationWarning, match="ltrb"):
        outputs = run_pipeline(ssd_crop(ltrb=True))
    assert len(outputs[0]) == 5


def test_real_coco_boxes_satisfy_the_constraints() -> None:
    coco_json = sample_data("coco_dali_dummy", "instances.json")
    data = json.loads(coco_json.read_text())
    sizes = {img["id"]: (img["width"], img["height"]) for img in data["images"]}
    per_image: dict[int, list[list[float]]] = {}
    for ann in data["annotations"]:
        w, h = sizes[ann["image_id"]]
        x, y, bw, bh = ann["bbox"]
        per_image.setdefault(ann["image_id"], []).append(
            [x / w, y / h, min((x + bw) / w, 1.0), min((y + bh) / h, 1.0)]
        )
    p = params(
        thresholds=(0.0, 0.1, 0.3, 0.5, 0.7, 0.9),
        scaling=(0.3, 1.0),
        aspect_ratio=(0.5, 2.0),
        num_attempts=50,
        allow_no_crop=True,
    )
    rng = np.random.default_rng(2024)
    for image_id in sorted(per_image)[:60]:
        boxes = np.array(per_image[image_id])
        lo, hi = boxes[:, :2], boxes[:, 2:]
        check_result(lo, hi, p, find_crop(lo, hi, p, rng))


def crop_kernel(**kwargs: Any) -> RandomBBoxCropKernel:
    static, _ = geometry_schemas.RANDOM_BBOX_CROP.validate(kwargs)
    context = KernelContext(
        "crop", geometry_schemas.RANDOM_BBOX_CROP, static, frozenset(), "cpu", 1, 1, 3, None
    )
    kernel = RandomBBoxCropKernel(context)
    kernel.setup()
    return kernel


def test_kernel_without_labels_and_with_3d_boxes() -> None:
    boxes3d = np.array([[0.1, 0.2, 0.3, 0.5, 0.6, 0.7]], np.float32)
    kernel = crop_kernel(scaling=[0.6, 1.0], aspect_ratio=[0.5, 2.0], thresholds=[0.2])
    sample = SampleContext(0, 0, "a.bin", ("",), seed=9)
    anchor, shape, boxes = kernel.run_sample((boxes3d,), kernel.args, sample)
    assert anchor.shape == shape.shape == (3,) and boxes.shape[1] == 6
    assert np.all(anchor + shape <= 1 + 1e-6)
    layout_kernel = crop_kernel(bbox_layout="xyWH", scaling=[0.5, 1.0], aspect_ratio=[0.5, 2.0])
    xywh = np.array([[0.2, 0.2, 0.4, 0.4]], np.float32)
    anchor, shape, boxes = layout_kernel.run_sample((xywh,), layout_kernel.args, sample)
    if len(boxes):
        right = (min(0.6, anchor[0] + shape[0]) - max(0.2, anchor[0])) / shape[0]
        assert boxes[0, 2] == pytest.approx(right, abs=1e-6)


def test_kernel_rejects_mismatched_labels_and_bad_shapes() -> None:
    kernel = crop_kernel()
    sample = SampleContext(0, 0, "", ("", ""), seed=1)
    boxes = np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)
    with pytest.raises(ValueError, match="one entry per box"):
        kernel.run_sample((boxes, np.zeros(3, np.int32)), kernel.args, sample)
    with pytest.raises(ValueError, match=r"shape \(N, 4\) or \(N, 6\)"):
        kernel.run_sample((boxes.reshape(4),), kernel.args, sample)
    with pytest.raises(TypeError, match="floating point"):
        kernel.run_sample((boxes.astype(np.int32),), kernel.args, sample)


def test_a_fixed_window_larger_than_the_image_starts_before_it() -> None:
    """DALI 2.4 accepts ``crop_shape`` above ``input_shape``: the anchor is then drawn between
    ``input_shape - crop_shape`` (negative) and 0, and the boxes are mapped into that window."""
    boxes = np.array([[0.1, 0.1, 0.5, 0.5]], np.float32)
    fixed = crop_kernel(crop_shape=[50, 50], input_shape=[40, 100])
    anchors = []
    for seed in range(40):
        sample = SampleContext(0, 0, "", ("",), seed=seed)
        anchor, shape, mapped = fixed.run_sample((boxes,), fixed.args, sample)
        np.testing.assert_array_equal(shape, [50, 50])
        assert -10 <= anchor[0] <= 0 and 0 <= anchor[1] <= 50
        rel_lo, rel_hi = anchor / [40, 100], (anchor + 50) / [40, 100]
        expected = np.clip((np.maximum(boxes[0, :2], rel_lo) - rel_lo) / (rel_hi - rel_lo), 0, 1)
        np.testing.assert_allclose(mapped[0, :2], expected, atol=1e-6)
        anchors.append(anchor[0])
    assert min(anchors) < 0


def test_input_shape_alone_measures_aspect_ratios_in_pixels() -> None:
    """With ``input_shape`` but no ``crop_shape`` the window stays relative while its aspect
    ratio is that of the window in pixels (DALI 2.4): a square in pixels may need a relative
    width above 1, and then starts before the image."""
    lo, hi = np.array([[0.1, 0.1]]), np.array([[0.3, 0.3]])
    pixels = np.array([400.0, 600.0])
    square = params(aspect_ratio=(1.0, 1.0), scaling=(0.5, 0.8), allow_no_crop=False)
    wide = []
    for seed in range(30):
        result = find_crop(lo, hi, square, np.random.default_rng(seed), pixels)
        width, height = result.shape * pixels
        assert width == pytest.approx(height)
        assert 0.5 * 600 <= max(width, height) <= 0.8 * 600
        wide.append(result.shape[0] > 1)
        if result.shape[0] > 1:
            assert 1 - result.shape[0] <= result.anchor[0] <= 0
    assert any(wide)
    ranged = params(aspect_ratio=(0.5, 0.75), scaling=(0.5, 0.8), allow_no_crop=False)
    for seed in range(30):
        result = find_crop(lo, hi, ranged, np.random.default_rng(seed), pixels)
        ratio = (result.shape[0] * 400) / (result.shape[1] * 600)
        assert 0.5 * (1 - 1e-6) <= ratio <= 0.75 * (1 + 1e-6)


def test_a_sample_without_boxes_takes_the_first_window() -> None:
    """Nothing to satisfy: DALI returns a window at once, even for an impossible threshold."""
    none = np.zeros((0, 2))
    p = params(thresholds=(1.0,), scaling=(0.3, 0.5), aspect_ratio=(0.5, 2.0), allow_no_crop=False)
    result = find_crop(none, none, p, np.random.default_rng(4))
    assert np.all((result.shape >= 0.3) & (result.shape <= 0.5)) and result.indices.size == 0
    fixed = params(fixed_window=True, thresholds=(1.0,))
    result = find_crop(
        none, none, fixed, np.random.default_rng(4), np.array([600.0, 400]), np.array([200.0, 200])
    )
    np.testing.assert_array_equal(result.shape, [200, 200])


def test_falling_back_to_the_best_window_logs_dalis_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lo, hi = np.array([[0.0, 0.0]]), np.array([[0.1, 0.1]])
    p = params(thresholds=(1.0,), scaling=(0.5, 0.5), allow_no_crop=False, total_num_attempts=10)
    with caplog.at_level("WARNING", logger="feedline"):
        find_crop(lo, hi, p, np.random.default_rng(0))
        find_crop(lo, hi, p, np.random.default_rng(1))
    assert [r.getMessage() for r in caplog.records] == [
        "Could not find a valid cropping window to satisfy the specified requirements (attempted "
        f"10 times). Using the best cropping window so far (best_metric={m:g})"
        for m in _best_metrics(lo, hi, p, seeds=(0, 1))
    ]


def _best_metrics(lo: np.ndarray, hi: np.ndarray, p: CropParams, seeds: tuple[int, ...]):
    for seed in seeds:
        result = find_crop(lo, hi, p, np.random.default_rng(seed))
        crop_lo, crop_hi = result.anchor, result.anchor + result.shape
        yield float(overlap(crop_lo, crop_hi, lo, hi, "iou").min())


def test_prune_threshold_zero_drops_missed_and_arealess_boxes() -> None:
    """With ``bbox_prune_threshold`` a box must overlap the window: at 0 the boxes the window
    misses are dropped, and a box without area never overlaps (DALI 2.4's results)."""
    lo = np.array([[0.0, 0.0], [0.9, 0.9], [0.3, 0.3]])
    hi = np.array([[0.2, 0.2], [1.0, 1.0], [0.3, 0.4]])
    p = params(scaling=(0.3, 0.5), bbox_prune_threshold=0.0, allow_no_crop=False)
    for seed in range(30):
        result = find_crop(lo, hi, p, np.random.default_rng(seed))
        crop_lo, crop_hi = result.anchor, result.anchor + result.shape
        inside = np.prod(np.clip(np.minimum(crop_hi, hi) - np.maximum(crop_lo, lo), 0, None), 1)
        np.testing.assert_array_equal(result.indices, np.flatnonzero(inside > 0))
        assert 2 not in result.indices


def test_boxes_with_swapped_corners_are_accepted_as_dali_accepts_them() -> None:
    swapped = [np.float32([[0.6, 0.6, 0.2, 0.2], [0.1, 0.1, 0.5, 0.5]])] * 4

    def define() -> Any:
        boxes = fn.external_source(source=lambda: swapped)
        return tuple(
            fn.random_bbox_crop(
                boxes, aspect_ratio=[0.5, 2.0], thresholds=[0.1, 0.3], scaling=[0.3, 1.0],
                bbox_layout="xyXY", output_bbox_indices=True,
            )
        )  # fmt: skip

    (anchor, shape, boxes, indices) = run_pipeline(define)[0]
    for i in range(4):  # DALI 2.4 returns the whole image and every box, unchanged
        np.testing.assert_array_equal(anchor.at(i), [0, 0])
        np.testing.assert_array_equal(shape.at(i), [1, 1])
        np.testing.assert_array_equal(boxes.at(i), swapped[i])
        np.testing.assert_array_equal(indices.at(i), [0, 1])
