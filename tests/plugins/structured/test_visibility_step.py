"""VisibleBboxSelector: the occlusion and size rules against a pixel-by-pixel definition, and the
step in a pipeline (field lookup, result path, errors as upstream)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import types
from feedline.plugins.structured import SampleDataGroup
from feedline.plugins.structured.steps import VisibleBboxSelector
from feedline.plugins.structured.steps.visibility import minimum_size_mask, occlusion_visibility
from tests.plugins.structured.step_running import run_named

HW = (12, 16)


def _reference_visible(boxes: np.ndarray, depths: np.ndarray, hw: tuple[int, int]) -> list[bool]:
    """A box is visible when some image pixel it covers (corners rounded outwards) is covered by
    no box in front of it: nearer, or equally near and later in the list."""
    visible = []
    for i, box in enumerate(boxes):
        x0, x1 = np.floor(min(box[0], box[2])), np.ceil(max(box[0], box[2]))
        y0, y1 = np.floor(min(box[1], box[3])), np.ceil(max(box[1], box[3]))
        seen = False
        for y in range(hw[0]):
            for x in range(hw[1]):
                if not (x0 <= x < x1 and y0 <= y < y1):
                    continue
                covered = False
                for j, other in enumerate(boxes):
                    in_front = depths[j] < depths[i] or (depths[j] == depths[i] and j > i)
                    if not in_front:
                        continue
                    ox0, ox1 = np.floor(min(other[0], other[2])), np.ceil(max(other[0], other[2]))
                    oy0, oy1 = np.floor(min(other[1], other[3])), np.ceil(max(other[1], other[3]))
                    covered |= bool(ox0 <= x < ox1 and oy0 <= y < oy1)
                seen |= not covered
        visible.append(seen)
    return visible


@st.composite
def box_sets(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(0, 6))
    coordinate = st.floats(-4, 20, allow_nan=False, width=32)
    boxes = np.array([[draw(coordinate) for _ in range(4)] for _ in range(n)], np.float32)
    depths = np.array([draw(st.sampled_from([0.5, 1.0, 2.0, 3.0])) for _ in range(n)], np.float32)
    return boxes.reshape(n, 4), depths


@settings(max_examples=40, deadline=None)
@given(box_sets())
def test_occlusion_matches_the_pixel_definition(scene: tuple[np.ndarray, np.ndarray]) -> None:
    boxes, depths = scene
    got = occlusion_visibility(boxes, depths, HW)
    assert got.dtype == bool and got.tolist() == _reference_visible(boxes, depths, HW)


@settings(max_examples=40, deadline=None)
@given(box_sets(), st.floats(0, 6))
def test_minimum_size_measures_the_box_clipped_to_the_image(scene: tuple, minimum: float) -> None:
    boxes, _ = scene
    expected = [
        abs(min(max(b[2], 0), HW[1]) - min(max(b[0], 0), HW[1])) >= minimum
        and abs(min(max(b[3], 0), HW[0]) - min(max(b[1], 0), HW[0])) >= minimum
        for b in boxes.tolist()
    ]
    assert minimum_size_mask(boxes, minimum, HW).tolist() == expected


BOXES = np.array(
    [[2, 2, 8, 8], [1, 1, 9, 9], [10, 2, 14, 3], [20, 20, 30, 30], [12, 6, 14, 10]], np.float32
)
DEPTHS = np.array([5.0, 1.0, 1.0, 1.0, 2.0], np.float32)


def _scene() -> tuple[SampleDataGroup, SampleDataGroup]:
    objects = SampleDataGroup()
    objects.add_data_field("boxes", types.FLOAT)
    objects.add_data_field("depth", types.FLOAT)
    blueprint = SampleDataGroup()
    blueprint.add_data_field("image", types.UINT8)
    blueprint.add_data_field("size", types.INT32)
    blueprint.add_data_group_field("objects", objects)
    sample = blueprint.get_empty_like_self()
    sample["image"] = np.zeros((*HW, 3), np.uint8)
    sample["size"] = np.array(HW, np.int32)
    sample["objects"]["boxes"] = BOXES
    sample["objects"]["depth"] = DEPTHS
    return blueprint, sample


@pytest.mark.parametrize(
    ("size_source", "occlusion", "minimum", "expected"),
    [
        ({"image_hw": list(HW)}, True, None, [False, True, True, False, True]),
        ({"image_field_name": "image"}, False, 2.0, [True, True, False, False, True]),
        ({"image_hw_field_name": "size"}, True, 2.0, [False, True, False, False, True]),
    ],
)
def test_the_step_adds_the_mask_where_asked(
    size_source: dict, occlusion: bool, minimum: float | None, expected: list[bool]
) -> None:
    step = VisibleBboxSelector(
        "boxes",
        ("objects", "visible"),
        check_for_bbox_occlusion=occlusion,
        check_for_minimum_size=minimum is not None,
        depths_field_name="depth",
        minimum_bbox_size=minimum,
        **size_source,
    )
    out = run_named(*_scene(), [step])
    assert out["objects.visible"].tolist() == expected
    np.testing.assert_array_equal(out["objects.boxes"], BOXES)


def test_positional_order_is_upstreams() -> None:
    step = VisibleBboxSelector("boxes", "visible", None, None, list(HW), True, False, "depth")
    out = run_named(*_scene(), [step])
    assert out["visible"].tolist() == [False, True, True, False, True]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"image_hw": [1, 1], "image_field_name": "image"}, "Exactly one of 'image_field_name'"),
        ({"image_hw": [1, 1], "check_for_minimum_size": False, "check_for_bbox_occlusion": False},
         "At least one of the parameters"),
        ({"image_hw": [1, 1], "depths_field_name": "d"}, "``minimum_size`` has to be set"),
        ({"image_hw": [1, 1], "minimum_bbox_size": 1.0}, "``depths_field_name`` has to be set"),
    ],
)  # fmt: skip
def test_arguments_that_do_not_fit_raise_as_upstream(kwargs: dict, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        VisibleBboxSelector("boxes", "visible", **kwargs)


def test_missing_duplicate_and_existing_fields_raise_value_errors() -> None:
    blueprint, _ = _scene()
    twice = blueprint.get_empty_like_self()
    twice.add_data_group_field("more", blueprint["objects"].get_empty_like_self())
    two_depths = blueprint.get_empty_like_self()
    two_depths.add_data_field("depth", types.FLOAT)

    def check(data: SampleDataGroup, bboxes: str = "boxes", result: object = "v", **kw) -> None:
        step = VisibleBboxSelector(bboxes, result, depths_field_name="depth", **kw)
        step.check_input_data_format_and_set_output_data_format(data)

    with pytest.raises(ValueError, match="No bounding box fields found with name: 'nope'"):
        check(blueprint, "nope", image_hw=[1, 1], minimum_bbox_size=1)
    with pytest.raises(ValueError, match="More than one occurence of box fields"):
        check(twice, image_hw=[1, 1], minimum_bbox_size=1)
    with pytest.raises(ValueError, match="More than one occurence of depths field"):
        check(two_depths, image_hw=[1, 1], minimum_bbox_size=1)
    with pytest.raises(ValueError, match="No image size field found with name: 'hw'"):
        check(blueprint, image_hw_field_name="hw", minimum_bbox_size=1)
    with pytest.raises(ValueError, match="already has a child with name 'depth'"):
        check(blueprint, result=("objects", "depth"), image_hw=[1, 1], minimum_bbox_size=1)
