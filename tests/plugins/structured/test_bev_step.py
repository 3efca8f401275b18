"""BEVBBoxesTransformer3D: the augmentation written out by hand for each kind of field, the
invariants tying the fields together, random draws, and upstream's errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import types
from feedline.plugins.structured import SampleDataGroup
from feedline.plugins.structured.steps import BEVBBoxesTransformer3D
from feedline.plugins.structured.steps.bev import augmentation_matrices, wrap_angles
from tests.plugins.structured.step_running import run_named

POINTS = np.array([[1.0, 2.0, 3.0], [-4.0, 0.5, 2.0], [0.0, 0.0, 0.0]], np.float32)
VELOCITIES = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, -1.0], [0.5, 0.5, 0.5]], np.float32)
SIZES = np.array([[4.0, 2.0, 1.5], [1.0, 1.0, 2.0], [3.0, 2.0, 1.0]], np.float32)
YAWS = np.array([0.0, 3.0, -3.1], np.float32)
EGO_TO_WORLD = np.array(
    [[0.0, -1.0, 0.0, 5.0], [1.0, 0.0, 0.0, -2.0], [0.0, 0.0, 1.0, 1.0], [0, 0, 0, 1]],
    np.float32,
)
PROJECTION = np.array(
    [[500.0, 0.0, 320.0, 10.0], [0.0, 500.0, 240.0, 0.0], [0.0, 0.0, 1.0, 50.0]], np.float32
)
ALL_NAMES = ("centers", "velocity", "size", "yaw", "lidar2img", "e2w", "w2e")


def _scene() -> tuple[SampleDataGroup, SampleDataGroup]:
    objects = SampleDataGroup()
    for name in ("centers", "velocity", "size", "yaw"):
        objects.add_data_field(name, types.FLOAT)
    blueprint = SampleDataGroup()
    blueprint.add_data_group_field("objects", objects)
    for name in ("lidar2img", "e2w", "w2e"):
        blueprint.add_data_field(name, types.FLOAT)
    sample = blueprint.get_empty_like_self()
    values = (POINTS, VELOCITIES, SIZES, YAWS)
    for name, value in zip(("centers", "velocity", "size", "yaw"), values, strict=True):
        sample["objects"][name] = value
    sample["lidar2img"] = PROJECTION
    sample["e2w"] = EGO_TO_WORLD
    sample["w2e"] = np.linalg.inv(EGO_TO_WORLD).astype(np.float32)
    return blueprint, sample


def _step(rotation=None, scaling=None, translation=None, axis=2) -> BEVBBoxesTransformer3D:
    return BEVBBoxesTransformer3D(*ALL_NAMES, rotation, axis, scaling, translation)


def _homogeneous(points: np.ndarray) -> np.ndarray:
    return np.concatenate([points, np.ones((len(points), 1))], axis=1).T


def test_fixed_ranges_give_the_hand_computed_augmentation() -> None:
    angle, scale, shift = 0.5, 1.5, [1.0, 2.0, 0.25]
    step = _step([angle, angle], [scale, scale], [0.0, 0.0, 0.0])
    blueprint, sample = _scene()
    fixed = run_named(blueprint, sample, [step])
    cos, sin = np.cos(angle), np.sin(angle)
    rotate = np.array([[cos, -sin, 0], [sin, cos, 0], [0, 0, 1]])
    np.testing.assert_allclose(fixed["objects.centers"], scale * POINTS @ rotate.T, atol=1e-5)
    np.testing.assert_allclose(fixed["objects.velocity"], scale * VELOCITIES @ rotate.T, atol=1e-5)
    np.testing.assert_allclose(fixed["objects.size"], scale * SIZES, atol=1e-6)
    np.testing.assert_allclose(fixed["objects.yaw"], [0.5, 3.5 - 2 * np.pi, -2.6], atol=1e-6)
    moved = run_named(blueprint, sample, [_step(None, None, [0.0, 0.0, 0.0])])
    np.testing.assert_array_equal(moved["objects.centers"], POINTS)
    np.testing.assert_array_equal(moved["objects.yaw"], YAWS)  # no rotation: not wrapped
    shifted = run_named(blueprint, sample, [_step(None, None, shift)])
    assert np.all(np.abs(shifted["objects.centers"] - POINTS) <= np.abs(shift) + 1e-6)
    np.testing.assert_array_equal(shifted["objects.velocity"], VELOCITIES)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_moved_points_project_and_map_to_the_world_as_before(axis: int) -> None:
    step = _step([-np.pi, np.pi], [0.5, 2.0], [3.0, 3.0, 1.0], axis)
    blueprint, sample = _scene()
    out = run_named(blueprint, sample, [step])
    before = _homogeneous(POINTS)
    after = _homogeneous(out["objects.centers"])
    np.testing.assert_allclose(out["e2w"] @ after, EGO_TO_WORLD @ before, atol=1e-4)
    projected = PROJECTION @ before
    moved = out["lidar2img"] @ after
    np.testing.assert_allclose(moved[:2] / moved[2], projected[:2] / projected[2], atol=1e-3)
    np.testing.assert_allclose(out["w2e"] @ out["e2w"], np.eye(4), atol=1e-5)
    # one draw for all fields: the sizes grew by the factor the distances between centers did
    factor = out["objects.size"][0, 0] / SIZES[0, 0]
    assert 0.5 <= factor <= 2.0
    distance = np.linalg.norm(POINTS[0] - POINTS[1])
    moved_distance = np.linalg.norm(out["objects.centers"][0] - out["objects.centers"][1])
    assert moved_distance == pytest.approx(factor * distance, rel=1e-5)
    assert np.all(np.abs(out["objects.yaw"]) <= np.pi + 1e-6)


@given(st.integers(0, 2), st.floats(-10, 10))
def test_rotation_matrices_are_proper_rotations_about_their_axis(axis: int, angle: float) -> None:
    rotation, scaling, moving = augmentation_matrices(angle, axis, 2.0, [1.0, 2.0, 3.0])
    block = rotation[:3, :3]
    np.testing.assert_allclose(block @ block.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(block) == pytest.approx(1.0)
    unit = np.eye(3)[axis]
    np.testing.assert_allclose(block @ unit, unit, atol=1e-12)
    # right-handed: a small positive angle turns the next axis towards the one after it
    following = np.eye(3)[(axis + 1) % 3]
    assert np.dot(np.cross(following, block @ following), unit) == pytest.approx(
        np.sin(angle), abs=1e-9
    )
    np.testing.assert_allclose(scaling @ moving @ [0, 0, 0, 1], [2, 4, 6, 1])


@given(st.floats(-50, 50))
def test_wrapped_angles_are_in_range_and_a_whole_number_of_turns_away(angle: float) -> None:
    (wrapped,) = wrap_angles(np.array([angle]))
    assert -np.pi <= wrapped <= np.pi
    turns = (angle - wrapped) / (2 * np.pi)
    assert turns == pytest.approx(round(turns), abs=1e-9)
    if -np.pi <= angle <= np.pi:
        assert wrapped == angle


def test_names_given_as_lists_and_upstreams_errors() -> None:
    blueprint, _ = _scene()
    step = BEVBBoxesTransformer3D(
        ["centers"], None, None, None, None, None, None, None, None, None, [1, 1, 1]
    )
    assert step.check_input_data_format_and_set_output_data_format(blueprint).type_matches(
        blueprint
    )
    missing = BEVBBoxesTransformer3D(
        "nope", None, None, None, None, None, None, None, None, None, None
    )
    with pytest.raises(ValueError, match="No fields found with name 'nope'"):
        missing.check_input_data_format_and_set_output_data_format(blueprint)
    group = BEVBBoxesTransformer3D(
        "objects", None, None, None, None, None, None, None, None, None, None
    )
    with pytest.raises(ValueError, match="is not a data field"):
        group.check_input_data_format_and_set_output_data_format(blueprint)
    with pytest.raises(AssertionError, match="`rotation_axis` needs to be set too"):
        _step([0.0, 1.0], axis=None)
    with pytest.raises(AssertionError, match="it must have 2 elements"):
        _step(None, [1.0])
    with pytest.raises(AssertionError, match="it must have 3 elements"):
        _step(None, None, [1.0, 2.0])
