"""The array functions: ACCV-Lab's python operator functions and the graph functions' kernels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline.plugins.structured import array_functions as af

finite = st.floats(-1e3, 1e3, allow_nan=False, width=32)


@given(
    hnp.arrays(
        np.float32, st.tuples(st.integers(0, 5), st.sampled_from([2, 4, 6])), elements=finite
    )
)
def test_points_move_pair_by_pair(points: np.ndarray) -> None:
    matrix = np.array([[2.0, 0.0, 1.0], [0.0, -1.0, 3.0], [0.0, 0.0, 1.0]], np.float32)
    moved = af.apply_transform_to_points(points, matrix)
    assert moved.shape == points.shape and moved.dtype == points.dtype
    assert np.allclose(moved[:, 0::2], points[:, 0::2] * 2 + 1, rtol=1e-5, atol=1e-3)
    assert np.allclose(moved[:, 1::2], 3 - points[:, 1::2], rtol=1e-5, atol=1e-3)


def test_point_rows_must_hold_pairs() -> None:
    with pytest.raises(ValueError, match="divisible by 2"):
        af.apply_transform_to_points(np.zeros((1, 3)), np.eye(3))


def test_post_transform_goes_after_the_projection() -> None:
    projection = np.arange(12, dtype=np.float64).reshape(3, 4)
    shift = np.array([[1.0, 0.0, 5.0], [0.0, 1.0, 0.0]])
    result = af.add_post_transform_to_projection_matrix(projection, shift)
    assert np.allclose(result, np.vstack([shift, [0, 0, 1]]) @ projection)


def test_clipping_reports_sizes_fractions_and_centres() -> None:
    rects = np.array([[-10.0, 0.0, 10.0, 10.0], [2.0, 2.0, 4.0, 6.0]])
    centres = np.array([[0.0, 5.0], [3.0, 4.0]])
    halve = np.diag([0.5, 0.5, 1.0])
    clipped, moved_centres, hw, fraction = af.apply_clipping_and_get_with_clipping_info(
        rects, centres, halve, (20, 20)
    )
    assert np.allclose(clipped, [[0, 0, 5, 5], [1, 1, 2, 3]])
    assert np.allclose(hw, [[5, 5], [2, 1]])
    assert np.allclose(fraction, [0.5, 1.0])
    assert np.allclose(moved_centres, [[0, 2.5], [1.5, 2]])


def test_activity_by_class_size_and_area() -> None:
    hw = np.array([[10, 10], [2, 10], [10, 10], [10, 10]], np.float32)
    classes = np.array([0, 0, 1, 5])
    fractions = np.array([1.0, 1.0, 0.2, 1.0])
    per_class = np.array([[5, 5], [1, 1]], np.float32)
    active = af.get_is_active(hw, classes, fractions, None, per_class, 2, 0.5)
    assert active.tolist() == [True, False, False, False]
    anyone = af.get_is_active(hw, None, fractions, np.array([3, 3]), None, 0, 0.5)
    assert anyone.tolist() == [True, False, False, True]
    assert af.get_is_active(hw, None, fractions, None, None, 0, 0.0).all()


def test_pad_to_common_size_pads_every_axis() -> None:
    padded = af.pad_to_common_size(np.ones((1, 3)), np.ones((2, 1)), fill_value=-1.0)
    assert [p.shape for p in padded] == [(2, 3), (2, 3)]
    assert padded[1][0].tolist() == [1, -1, -1]


def test_visibility_paints_far_to_near() -> None:
    boxes = np.array([[0, 0, 10, 10], [2, 2, 4, 4], [0, 0, 10, 10], [50, 50, 60, 60]], np.float32)
    depths = np.array([5.0, 9.0, 1.0, 1.0], np.float32)
    shown = af.visible_boxes(boxes, depths, np.array([20, 20]), shrink=False)
    assert shown.tolist() == [False, False, True, False], "the nearest full box hides the others"
    reflected = af.visible_boxes(boxes[:, [2, 3, 0, 1]], depths, np.array([20, 20]), shrink=False)
    assert reflected.tolist() == shown.tolist()
    sliver = np.array([[1.2, 1.2, 1.8, 1.8]], np.float32)
    assert af.visible_boxes(sliver, np.ones(1), np.array([5, 5]), shrink=False).tolist() == [True]
    assert af.visible_boxes(sliver, np.ones(1), np.array([5, 5]), shrink=True).tolist() == [False]


def test_size_check_clips_to_the_image_first() -> None:
    boxes = np.array([[-5, 0, 3, 4], [0, 0, 4, 4]], np.float32)
    assert af.large_enough_boxes(boxes, np.array([10, 10]), 4.0).tolist() == [False, True]


@given(st.lists(finite, max_size=8), st.floats(0.5, 10))
def test_wrapping_lands_in_range_on_the_same_period(values: list[float], period: float) -> None:
    data = np.array(values, np.float64)
    wrapped = af.wrap_into_range(data, -period / 2, period / 2, period)
    assert np.all(np.abs(wrapped) <= period / 2 + 1e-6)
    steps = (data - wrapped) / period
    assert np.allclose(steps, np.round(steps), atol=1e-6)


def test_rotation_vector_and_homogeneous_matrices() -> None:
    quarter = af.rotation_from_vector(np.array([0, 0, np.pi / 2]), as_homog=False, eps=1e-7)
    assert np.allclose(quarter @ [1, 0, 0], [0, 1, 0], atol=1e-6)
    assert np.allclose(af.rotation_from_vector(np.zeros(3), True, 1e-7), np.eye(4))
    assert np.allclose(af.scaling_from_vector(np.array([1, 2, 3]), True), np.diag([1, 2, 3, 1]))
    assert af.translation_from_vector(np.array([1, 2, 3]))[:3, 3].tolist() == [1, 2, 3]


def test_matrix_application_variants() -> None:
    matrix = np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 0.0], [0.0, 0.0, 1.0]])
    rows = np.array([[1.0, 1.0], [2.0, 0.0]])
    moved = af.matrix_applied(rows, matrix, True, True, False, False, False)
    assert np.allclose(moved, [[3, 3], [5, 0]])
    back = af.matrix_applied(moved, matrix, True, True, False, True, False)
    assert np.allclose(back, rows)
    vector = af.matrix_applied(np.array([1.0, 1.0, 1.0]), matrix, False, False, True, False, False)
    assert vector.shape == (3,) and np.allclose(vector, matrix.T @ [1, 1, 1])
    assert np.allclose(
        af.matrix_applied(rows, np.eye(2) * 2, False, False, False, False, True), rows * 2
    )


def test_centres_and_radii() -> None:
    boxes = np.array([[0, 0, 10, 4], [10, 4, 0, 0]], np.float32)
    centres = af.box_centres(boxes)
    assert np.allclose(centres, [[5, 2], [5, 2]])
    assert np.allclose(af.box_radii(boxes, centres, 0.5), [1.0, 1.0])
    outside = af.box_radii(boxes[:1], np.array([[20.0, 2.0]], np.float32), 1.0)
    assert outside.tolist() == [0.0]
    assert af.box_radii(np.zeros((0, 4)), np.zeros((0, 2)), 1.0).shape == (0,)
