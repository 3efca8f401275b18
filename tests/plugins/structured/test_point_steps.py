"""Point steps against NumPy: clamping into a box and the inside-the-box mask."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from feedline import types
from feedline.plugins.structured import SampleDataGroup
from feedline.plugins.structured.steps import CoordinateCropper, PointsInRangeCheck
from tests.plugins.structured.test_normalize_steps import run

LOW, HIGH = [-1.0, 0.0, 2.0], [1.0, 5.0, 3.0]


def points_sample(points: np.ndarray) -> tuple[SampleDataGroup, SampleDataGroup]:
    objects = SampleDataGroup()
    objects.add_data_field("centers", types.FLOAT)
    blueprint = SampleDataGroup()
    blueprint.add_data_group_field("objects", objects)
    sample = blueprint.get_empty_like_self()
    sample["objects"]["centers"] = points
    return blueprint, sample


coordinates = arrays(
    np.float32,
    st.tuples(st.integers(0, 6), st.just(3)),
    elements=st.floats(-8, 8, width=32),
)


@settings(max_examples=10, deadline=None)
@given(points=coordinates)
def test_cropping_clamps_and_the_mask_marks_points_inside(points: np.ndarray) -> None:
    blueprint, sample = points_sample(points)
    steps = [
        PointsInRangeCheck("centers", "inside", LOW, HIGH),
        CoordinateCropper("centers", LOW, HIGH),
    ]
    cropped, inside = run(blueprint, sample, steps)
    expected_inside = np.all((points >= LOW) & (points <= HIGH), axis=1)
    assert np.array_equal(np.asarray(inside[0]).reshape(-1), expected_inside)
    assert np.allclose(np.asarray(cropped[0]), np.clip(points, LOW, HIGH))


def test_point_steps_check_their_arguments_and_fields() -> None:
    blueprint, _ = points_sample(np.zeros((1, 3), np.float32))
    with pytest.raises(KeyError, match="No fields containing points"):
        CoordinateCropper("boxes", LOW, HIGH).check_input_data_format_and_set_output_data_format(
            blueprint
        )
    with pytest.raises(ValueError, match="minimum <= maximum"):
        CoordinateCropper("centers", HIGH, LOW)
    twice = PointsInRangeCheck("centers", "centers", LOW, HIGH)
    with pytest.raises(ValueError, match="Cannot add is_inside flag"):
        twice.check_input_data_format_and_set_output_data_format(blueprint)


def test_element_remover_keeps_the_masked_rows_of_every_listed_field() -> None:
    from feedline.plugins.structured.steps import ConditionalElementRemover

    annotation = SampleDataGroup()
    annotation.add_data_field("boxes", types.FLOAT)
    annotation.add_data_field("ids", types.INT32)
    annotation.add_data_field("keep", types.BOOL)
    blueprint = SampleDataGroup()
    blueprint.add_data_group_field("annotation", annotation)
    sample = blueprint.get_empty_like_self()
    boxes = np.arange(12, dtype=np.float32).reshape(4, 3)
    sample["annotation"]["boxes"] = boxes.T  # elements along axis 1
    sample["annotation"]["ids"] = [5, 6, 7, 8]
    sample["annotation"]["keep"] = [True, False, False, True]
    step = ConditionalElementRemover("annotation", "keep", ["boxes", "ids"], [1, 0], [2, 1], True)
    output_format = step.check_input_data_format_and_set_output_data_format(blueprint)
    assert output_format["annotation"].contained_top_level_field_names == ("boxes", "ids")
    kept_boxes, kept_ids = run(blueprint, sample, [step])
    assert np.array_equal(np.asarray(kept_boxes[0]), boxes[[0, 3]].T)
    assert np.asarray(kept_ids[0]).tolist() == [5, 8]
    with pytest.raises(ValueError, match="one entry per field"):
        ConditionalElementRemover("annotation", "keep", ["boxes"], [0, 1], [2], False)
