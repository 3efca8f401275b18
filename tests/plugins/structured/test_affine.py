"""AffineTransformer: the resize, the transformation chain, and fields staying aligned."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline import types
from feedline.plugins.structured import AffineTransformer, PipelineDefinition, SampleDataGroup
from feedline.plugins.structured.steps.affine import (
    ResizingAnchor,
    ResizingMode,
    build_matrix,
    resize_matrix,
    transform_boxes,
    transform_points,
    transform_projection,
)
from tests.plugins.structured.helpers import FixedCallable

A = AffineTransformer


def chain(steps: list, hw: tuple = (40, 60), draws: list | None = None, **resize) -> np.ndarray:
    count = sum(s.num_draws for s in steps) + (4 if resize.get("jitter") else 0)
    values = np.zeros(count) if draws is None else np.asarray(draws, np.float64)
    settings = {"output_hw": hw, "mode": ResizingMode.STRETCH, "anchor": None, "jitter": None}
    settings.update(resize)
    inputs = (np.array(hw), values) if count else (np.array(hw),)
    return build_matrix(*inputs, steps=steps, **settings)


def moved(matrix: np.ndarray, *xy: float) -> np.ndarray:
    return transform_points(np.array([xy], np.float32), matrix)[0]


@pytest.mark.parametrize(
    ("mode", "anchor", "corners"),
    [
        (ResizingMode.STRETCH, None, [0, 0, 100, 50]),
        (ResizingMode.PAD, ResizingAnchor.CENTER, [0, 12.5, 100, 37.5]),
        (ResizingMode.PAD, ResizingAnchor.TOP_OR_LEFT, [0, 0, 100, 25]),
        (ResizingMode.PAD, ResizingAnchor.BOTTOM_OR_RIGHT, [0, 25, 100, 50]),
        (ResizingMode.CROP, ResizingAnchor.CENTER, [-50, 0, 150, 50]),
        (ResizingMode.CROP, ResizingAnchor.BOTTOM_OR_RIGHT, [-100, 0, 100, 50]),
    ],
)
def test_resize_modes_and_anchors(mode, anchor, corners) -> None:
    matrix = resize_matrix((50, 200), (50, 100), mode, anchor)[:2]
    box = transform_boxes(np.array([[0, 0, 200, 50]], np.float32), matrix)
    assert np.allclose(box, [corners])


@given(
    angle=st.floats(-180, 180),
    scale=st.floats(0.2, 3),
    shear=st.tuples(st.floats(-40, 40), st.floats(-40, 40)),
)
def test_turning_and_scaling_keep_the_viewport_centre(angle, scale, shear) -> None:
    steps = [A.Rotation(1.0, angle), A.UniformScaling(1.0, scale), A.Shearing(1.0, shear)]
    assert np.allclose(moved(chain(steps), 30, 20), [30, 20], atol=1e-3)


def test_each_step_moves_points_as_documented() -> None:
    assert np.allclose(moved(chain([A.Translation(1.0, [3, -2])]), 1, 1), [4, -1])
    quarter = chain([A.Rotation(1.0, 90.0)])  # anti-clockwise on screen: right goes up
    assert np.allclose(moved(quarter, 40, 20), [30, 10], atol=1e-4)
    mirror = chain([A.NonUniformScaling(1.0, [-1.0, 1.0])])
    assert np.allclose(moved(mirror, 10, 5), [50, 5])
    shear = chain([A.Shearing(1.0, [45.0, 0.0])])
    assert np.allclose(moved(shear, 30, 30), [40, 30], atol=1e-4)


def test_random_ranges_and_probabilities_read_their_draws() -> None:
    step = A.Translation(0.5, [0, 10], [10, 20])
    assert step.num_draws == 3
    assert np.allclose(moved(chain([step], draws=[0.2, 0.5, 0.25]), 0, 0), [5, 12.5])
    assert np.allclose(moved(chain([step], draws=[0.7, 0.5, 0.25]), 0, 0), [0, 0]), "not taken"
    scaling = A.UniformScaling(1.0, 1.0, 3.0)
    assert np.allclose(moved(chain([scaling], draws=[0, 0.5]), 40, 20), [50, 20])


def test_selection_takes_one_option_and_skips_the_draws_of_the_others() -> None:
    left, right = A.Translation(1.0, [-5, 0]), A.Translation(1.0, [0, 0], [10, 10])
    selection = A.Selection(1.0, [0.3, 0.7], [left, [right]])
    assert selection.num_draws == 2 + left.num_draws + right.num_draws
    first = chain([selection], draws=[0, 0.1, 0, 0, 0, 0, 0.5, 0.5])
    second = chain([selection], draws=[0, 0.9, 0, 0, 0, 0, 0.5, 0.5])
    assert np.allclose(moved(first, 0, 0), [-5, 0]) and np.allclose(moved(second, 0, 0), [5, 5])
    with pytest.raises(ValueError, match="sum up to 1"):
        A.Selection(1.0, [0.3, 0.3], [left, right])
    with pytest.raises(ValueError, match="does not match"):
        A.Selection(1.0, [1.0], [left, right])


def test_shifts_that_need_upright_content_refuse_to_follow_turning_steps() -> None:
    align = A.ShiftToAlignWithOriginalImageBorder(
        1.0, A.ShiftToAlignWithOriginalImageBorder.Border.TOP
    )
    for turning in (A.Rotation(1.0, 5.0), A.Selection(1.0, [1.0], [A.Shearing(0.5, [5, 0])])):
        with pytest.raises(
            ValueError, match="Cannot perform `ShiftToAlignWithOriginalImageBorder`"
        ):
            A((10, 10), image_field_names="image", transformation_steps=[turning, align])


@given(scale=st.floats(1.0, 3.0), draws=st.tuples(st.floats(0, 0.999), st.floats(0, 0.999)))
def test_shift_inside_keeps_the_viewport_covered(scale, draws) -> None:
    steps = [
        A.UniformScaling(1.0, scale),
        A.Translation(1.0, [500.0, -500.0]),
        A.ShiftInsideOriginalImage(1.0, True, True),
    ]
    matrix = chain(steps, draws=[0, 0, 0, 0, 0, 0, *draws])
    low, high = moved(matrix, 0, 0), moved(matrix, 60, 40)
    assert low[0] <= 1e-3 and low[1] <= 1e-3 and high[0] >= 60 - 1e-3 and high[1] >= 40 - 1e-3


def test_align_to_the_bottom_border() -> None:
    bottom = A.ShiftToAlignWithOriginalImageBorder.Border.BOTTOM
    steps = [A.UniformScaling(1.0, 0.5), A.ShiftToAlignWithOriginalImageBorder(1.0, bottom)]
    assert np.allclose(moved(chain(steps), 60, 40), [45, 40])


def test_output_jitter_mirrors_and_shifts_about_the_output_centre() -> None:
    jitter = {"prob_flip": 1.0, "scale_range": (1.0, 1.0), "translation_range": (-0.1, 0.1)}
    matrix = chain([], hw=(50, 200), output_hw=(50, 100), jitter=jitter, draws=[0, 1, 0.5, 0])
    box = transform_boxes(np.array([[10, 5, 30, 20]], np.float32), matrix)
    assert np.allclose(box, [[95, 5, 105, 20]])


def test_different_image_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="sizes of images do not match"):
        build_matrix(
            np.array([4, 5, 3]), np.array([4, 6, 3]), steps=[], output_hw=(4, 4),
            mode=ResizingMode.STRETCH, anchor=None, jitter=None,
        )  # fmt: skip


def test_projection_and_odd_point_rows() -> None:
    matrix = np.array([[2, 0, 1], [0, 3, 0]], np.float32)
    projection = np.arange(12, dtype=np.float32).reshape(3, 4)
    expected = np.vstack([matrix, [0, 0, 1]]) @ projection
    assert np.allclose(transform_projection(projection, matrix), expected)
    homogeneous = np.vstack([projection, [0, 0, 0, 1]])
    moved = transform_projection(homogeneous, matrix)
    assert np.allclose(moved[:3], expected) and np.allclose(moved[3], [0, 0, 0, 1])
    with pytest.raises(ValueError, match="3 or 4 rows"):
        transform_projection(np.eye(2), matrix)
    with pytest.raises(ValueError, match="x, y pairs"):
        transform_points(np.zeros((2, 3)), matrix)
    assert transform_points(np.zeros((0, 4)), matrix).shape == (0, 4)


def white_box_sample() -> tuple[SampleDataGroup, dict]:
    blueprint = SampleDataGroup()
    blueprint.add_data_field("image", types.UINT8)
    blueprint.add_data_field("boxes", types.FLOAT)
    blueprint.add_data_field("points", types.FLOAT)
    blueprint.add_data_field("projection", types.FLOAT)
    sample = blueprint.get_empty_like_self()
    image = np.zeros((60, 90, 3), np.uint8)
    image[10:30, 20:50] = 255
    sample["image"] = image
    sample["boxes"] = [[20, 10, 50, 30]]
    sample["points"] = [[20, 10, 50, 30]]
    sample["projection"] = np.eye(3, dtype=np.float32)
    return blueprint, sample.get_data()


def run_step(step: AffineTransformer, batch: int = 8) -> list:
    blueprint, values = white_box_sample()
    definition = PipelineDefinition(
        FixedCallable(blueprint, values, batch), [step], use_parallel_external_source=False
    )
    pipe = definition.get_dali_pipeline(batch_size=batch, num_threads=1, device_id=None, seed=11)
    pipe.build()
    outputs = [tl.as_array() for tl in pipe.run()]
    pipe.close()
    return outputs


@pytest.mark.parametrize(
    ("mode", "anchor"), [("stretch", None), ("pad", "center"), ("crop", "center")]
)
def test_images_boxes_and_projections_stay_aligned(mode: str, anchor: str | None) -> None:
    steps = [A.UniformScaling(1.0, 0.7, 1.2), A.Translation(1.0, [-6, -6], [6, 6])]
    step = AffineTransformer(
        (64, 64), mode, anchor, "image", None, "projection", "points", steps,
        box_field_names="boxes", prob_flip=0.5,
    )  # fmt: skip
    images, boxes, points, projections = run_step(step)
    flips = 0
    for image, box, point, projection in zip(images, boxes, points, projections, strict=True):
        ys, xs = np.nonzero(image[..., 0] > 127)
        found = [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]
        assert np.allclose(found, np.clip(box[0], 0, 64), atol=1.5), (found, box[0])
        flips += point[0][0] > point[0][2]
        assert np.allclose(np.sort(point[0][::2]), box[0][::2])
        assert np.allclose(transform_points(np.array([[20, 10]]), projection[:2]), point[0][:2])
    assert 0 < flips < 8


def test_size_fields_stand_in_for_images_and_become_the_output_size() -> None:
    blueprint = SampleDataGroup()
    blueprint.add_data_field("hw", types.INT32)
    blueprint.add_data_field("points", types.FLOAT)
    values = {"hw": np.array([20, 40], np.int32), "points": np.array([[40, 20]], np.float32)}
    sample = blueprint.get_empty_like_self()
    sample["hw"], sample["points"] = values["hw"], values["points"]
    step = AffineTransformer((10, 10), "pad", "top_or_left", image_hw_field_names="hw",
                             point_field_names="points")  # fmt: skip
    definition = PipelineDefinition(
        FixedCallable(blueprint, sample.get_data(), 2), [step], use_parallel_external_source=False
    )
    pipe = definition.get_dali_pipeline(batch_size=2, num_threads=1, device_id=None)
    pipe.build()
    sizes, points = (tl.as_array() for tl in pipe.run())
    pipe.close()
    assert sizes.tolist() == [[10, 10]] * 2
    assert np.allclose(points, [[[10, 5]]] * 2)


def test_missing_fields_raise_key_errors_naming_them() -> None:
    blueprint, _ = white_box_sample()
    step = AffineTransformer((8, 8), image_field_names="image", point_field_names="landmarks")
    with pytest.raises(KeyError, match="No occurrences of point sets with name `landmarks`"):
        step.check_input_data_format_and_set_output_data_format(blueprint)
