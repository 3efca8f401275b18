"""``draw_gaussians``: the vectorised CPU kernel against a pixel-by-pixel reference, its
invariants, its errors, and the operator in a pipeline."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn
from feedline.operators.cpu.heatmaps.gaussians import (
    GaussianObjects,
    check_inputs,
    draw_gaussians,
)
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed
from tests.operators.cpu.heatmaps.gaussian_reference import reference_gaussians

FACTOR = 1.0 / 3.0


@st.composite
def scenes(draw: Any) -> dict[str, Any]:
    """A heatmap (2-D or 3-D, maybe non-zero) and objects, some outside or overlapping."""
    slices = draw(st.integers(1, 3))
    height, width = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    flat = draw(st.booleans()) and slices == 1
    shape = (height, width) if flat else (slices, height, width)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    heat_map = (rng.random(shape) * draw(st.sampled_from([0.0, 0.5]))).astype(np.float32)
    n = draw(st.integers(0, 6))
    return {
        "heat_map": heat_map,
        "active": rng.random(n) < 0.8,
        "class_ids": rng.integers(0, slices, n).astype(np.int32),
        "centers": np.stack(
            [rng.integers(-4, width + 4, n), rng.integers(-4, height + 4, n)], axis=1
        ).astype(np.int32),
        "radii": (rng.random(n) * 6).astype(np.float32),
        "k": [float(v) for v in rng.uniform(0.2, 2.0, slices)],
    }


def _draw(scene: dict[str, Any], order: np.ndarray | None = None) -> np.ndarray:
    order = np.arange(len(scene["radii"])) if order is None else order
    heat_map = scene["heat_map"]
    objects = GaussianObjects(
        scene["active"][order],
        scene["class_ids"][order],
        scene["centers"][order],
        scene["radii"][order],
        1 if heat_map.ndim == 2 else heat_map.shape[0],
    )
    return draw_gaussians(heat_map, objects, scene["k"], FACTOR)


@settings(max_examples=60, deadline=None)
@given(scenes())
def test_the_vectorised_kernel_matches_the_pixel_by_pixel_definition(scene: dict) -> None:
    expected = reference_gaussians(
        scene["heat_map"],
        scene["active"],
        scene["class_ids"],
        scene["centers"].tolist(),
        scene["radii"],
        scene["k"],
        FACTOR,
    )
    got = _draw(scene)
    assert got.dtype == np.float32 and got.shape == scene["heat_map"].shape
    np.testing.assert_allclose(got, expected, rtol=2e-7, atol=0)


@settings(max_examples=30, deadline=None)
@given(scenes(), st.randoms(use_true_random=False))
def test_the_order_of_the_objects_does_not_matter(scene: dict, random: Any) -> None:
    order = list(range(len(scene["radii"])))
    random.shuffle(order)
    np.testing.assert_array_equal(_draw(scene, np.array(order, np.int64)), _draw(scene))


@settings(max_examples=30, deadline=None)
@given(scenes())
def test_drawing_only_raises_values_and_never_touches_the_input(scene: dict) -> None:
    before = scene["heat_map"].copy()
    got = _draw(scene)
    np.testing.assert_array_equal(scene["heat_map"], before)
    assert np.all(got >= before)


def _one(center: tuple[int, int], radius: float, shape: tuple[int, ...] = (9, 11)) -> np.ndarray:
    objects = GaussianObjects(
        np.array([True]),
        np.array([0], np.int32),
        np.array([center], np.int32),
        np.array([radius], np.float32),
        1,
    )
    return draw_gaussians(np.zeros(shape, np.float32), objects, [1.0], FACTOR)


def test_the_peak_is_k_at_the_center_and_falls_off_with_the_distance() -> None:
    got = _one((5, 4), 3.0)
    assert got[4, 5] == 1.0 and got.max() == 1.0
    sigma = 3.0 * FACTOR
    assert got[4, 6] == pytest.approx(np.exp(-1 / (2 * sigma**2)), rel=1e-6)
    # the window is floor(c - r) .. ceil(c + r): one pixel further stays zero
    assert got[4, 8] > 0 and got[4, 9] == 0 and got[8, 5] == 0 and got[7, 5] > 0


def test_a_zero_radius_draws_nothing_and_a_nan_radius_is_skipped() -> None:
    assert not _one((5, 4), 0.0).any()
    assert not _one((5, 4), float("nan")).any()


def test_an_infinite_radius_fills_the_whole_slice_with_k() -> None:
    np.testing.assert_array_equal(_one((5, 4), float("inf")), np.ones((9, 11), np.float32))


def test_a_window_partly_outside_is_clipped_and_one_fully_outside_draws_nothing() -> None:
    assert _one((0, 0), 2.0)[0, 0] == 1.0
    assert not _one((-4, 3), 2.0).any()
    assert _one((-2, 3), 2.0)[3, 0] > 0


_GOOD = (
    np.zeros((2, 4, 4), np.float32),
    np.array([True, False]),
    np.array([1, 7], np.int32),
    np.array([[1, 1], [2, 2]], np.int32),
    np.array([1.0, 1.0], np.float32),
)


@pytest.mark.parametrize(
    ("position", "bad", "message"),
    [
        (0, np.zeros((2, 4, 4)), "heat_map has to be of type FLOAT"),
        (1, np.array([1, 0], np.uint8), "active has to be of type BOOL"),
        (2, np.array([1, 7], np.int64), "class_ids has to be of type INT32"),
        (3, np.array([[1, 1], [2, 2]], np.float32), "centers has to be of type INT32"),
        (4, np.array([1, 1], np.float64), "radii has to be of type FLOAT"),
        (0, np.zeros((1, 2, 4, 4), np.float32), "Heatmap has to have 2 or 3 dimensions"),
        (1, np.array([True]), "active has 1 values for 2 objects"),
        (3, np.array([[1, 1]], np.int32), r"expected \[2, 2\]"),
        (2, np.array([5, 0], np.int32), r"class_id for active sample \(5\) exceeds elements"),
        (2, np.array([-1, 0], np.int32), r"class_id for active sample \(-1\) exceeds elements"),
    ],
)
def test_bad_inputs_are_named(position: int, bad: np.ndarray, message: str) -> None:
    inputs = list(_GOOD)
    inputs[position] = bad
    with pytest.raises((TypeError, ValueError), match=message):
        check_inputs(*inputs, [1.0, 1.0, 1.0])


def test_inactive_objects_are_not_checked_but_a_missing_slice_is() -> None:
    assert check_inputs(*_GOOD, [1.0, 1.0]) == (2, 4, 4)  # class 7 is inactive
    inputs = list(_GOOD)
    inputs[0] = np.zeros((4, 4), np.float32)
    with pytest.raises(ValueError, match=r"class_id for active sample \(1\) has no slice"):
        check_inputs(*inputs, [1.0, 1.0])


def _pipeline_inputs() -> list[Any]:
    heat_maps = [np.zeros((2, 6, 8), np.float32), np.full((2, 5, 5), 0.25, np.float32)]
    active = [np.array([True, True]), np.array([False])]
    class_ids = [np.array([0, 1], np.int32), np.array([1], np.int32)]
    centers = [np.array([[2, 3], [7, 0]], np.int32), np.array([[1, 1]], np.int32)]
    radii = [np.array([2.0, 1.0], np.float32), np.array([3.0], np.float32)]
    return [heat_maps, active, class_ids, centers, radii]


def test_the_operator_draws_each_sample_of_a_batch() -> None:
    batches = _pipeline_inputs()
    ((outputs, _),) = build(
        lambda: fn.draw_gaussians(
            *(feed(b) for b in batches), k_for_classes=[1.0, 0.5], radius_to_sigma_factor=FACTOR
        )
    )
    for i, got in enumerate(outputs):
        expected = reference_gaussians(
            *(b[i] for b in batches[:3]), batches[3][i].tolist(), batches[4][i], [1.0, 0.5], FACTOR
        )
        np.testing.assert_allclose(got, expected, rtol=2e-7)
    assert outputs[0][1, 0, 7] == 0.5
    np.testing.assert_array_equal(outputs[1], batches[0][1])


def test_an_error_in_a_sample_names_the_operator() -> None:
    batches = _pipeline_inputs()
    with pytest.raises(OperatorError, match="exceeds elements in k_for_classes"):
        build(
            lambda: fn.draw_gaussians(
                *(feed(b) for b in batches), k_for_classes=[1.0], radius_to_sigma_factor=FACTOR
            )
        )


def test_check_operator() -> None:
    done = check_operator(
        "draw_gaussians",
        OperatorExample(
            _pipeline_inputs(),
            ["", "", "", "", ""],
            {"k_for_classes": [1.0, 1.0], "radius_to_sigma_factor": 0.5},
        ),
    )
    assert "outputs" in done
