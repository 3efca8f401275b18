"""BoundingBoxToHeatmapConverter: the per-object geometry against values worked out by hand,
the heatmap against the pixel-by-pixel Gaussian definition, optional outputs, and upstream's
argument and format errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import types
from feedline.plugins.structured import SampleDataGroup
from feedline.plugins.structured.steps import BoundingBoxToHeatmapConverter
from feedline.plugins.structured.steps.heatmap_geometry import HeatmapRules, heatmap_geometry
from tests.operators.cpu.heatmaps.gaussian_reference import reference_gaussians
from tests.plugins.structured.step_running import run_named

IMAGE_HW = (40, 80)
HEATMAP_HW = (20, 20)  # x scaled by 1/4, y by 1/2
BOXES = np.array(
    [
        [8.0, 4.0, 40.0, 20.0],  # inside: heatmap [2, 2, 10, 10]
        [60.0, 30.0, 100.0, 60.0],  # clipped to [15, 15, 19, 19]: 16 of 100 -> inactive
        [44.0, 30.0, 4.0, 10.0],  # corners swapped: [1, 5, 11, 15]
        [0.0, 0.0, 2.0, 2.0],  # tiny: 0.5 x 1 in the heatmap
    ],
    np.float32,
)
CATEGORIES = np.array([0, 1, 1, 0], np.int32)


def _rules(**changes: Any) -> HeatmapRules:
    rules: dict[str, Any] = {
        "heatmap_hw": HEATMAP_HW,
        "num_categories": 2,
        "min_object_size": None,
        "per_category_min_object_sizes": None,
        "min_fraction_area_clipping": 0.25,
        "min_radius": 0.5,
        "max_radius": 10.0,
        "radius_scaling_factor": 0.8,
    }
    rules.update(changes)
    return HeatmapRules(**rules)


def test_geometry_scales_clips_and_rates_each_object() -> None:
    found = heatmap_geometry(BOXES, None, IMAGE_HW, CATEGORIES, None, _rules())
    np.testing.assert_allclose(
        found.bboxes, [[2, 2, 10, 10], [15, 15, 19, 19], [11, 15, 1, 5], [0, 0, 0.5, 1]]
    )
    np.testing.assert_allclose(found.height_width, [[8, 8], [4, 4], [10, 10], [1, 0.5]])
    assert found.active.tolist() == [True, False, True, True]
    # box centers (image) -> heatmap: (24, 12) -> (6, 6); (80, 45) -> (19, 19) clipped
    assert found.centers.tolist() == [[6, 6], [19, 19], [6, 10], [0, 0]]
    np.testing.assert_allclose(found.center_offsets, [[0, 0], [0, 0], [0, 0], [0.25, 0.5]])
    # nearest edge 4 -> 3.2; the clipped box's center 19 is on its edge -> 0 -> min 0.5
    np.testing.assert_allclose(found.radii, [3.2, 0.5, 4.0, 0.5])


def test_explicit_centers_sizes_categories_and_validity_switch_objects_off() -> None:
    centers = np.array([[36.0, 6.0], [80.0, 45.0], [24.0, 20.0], [1.0, 1.0]], np.float32)
    rules = _rules(per_category_min_object_sizes=np.array([[1, 1], [9, 9]], np.float32))
    found = heatmap_geometry(BOXES, centers, IMAGE_HW, CATEGORIES, None, rules)
    assert found.active.tolist() == [True, False, True, False]  # class 0 needs 1 x 1
    np.testing.assert_allclose(found.radii[0], 0.8)  # center (9, 3): 1 pixel from the top
    assert found.centers[0].tolist() == [9, 3]
    unknown = heatmap_geometry(BOXES, None, IMAGE_HW, np.array([0, 1, 2, -1]), None, _rules())
    assert unknown.active.tolist() == [True, False, False, False]
    invalid = heatmap_geometry(BOXES, None, IMAGE_HW, None, np.array([0, 1, 1, 1], bool), _rules())
    assert invalid.active.tolist() == [False, False, True, True]
    global_minimum = heatmap_geometry(
        BOXES, None, IMAGE_HW, None, None, _rules(min_object_size=(2, 2))
    )
    assert global_minimum.active.tolist() == [True, False, True, False]


def _scene(with_image: bool = False) -> tuple[SampleDataGroup, SampleDataGroup]:
    annotation = SampleDataGroup()
    annotation.add_data_field("boxes", types.FLOAT)
    annotation.add_data_field("cls", types.INT32)
    camera = SampleDataGroup()
    camera.add_data_field(
        "image" if with_image else "hw", types.UINT8 if with_image else types.INT32
    )
    camera.add_data_group_field("annotation", annotation)
    blueprint = SampleDataGroup()
    blueprint.add_data_group_field_array("cams", camera, 2)
    sample = blueprint.get_empty_like_self()
    for index in range(2):
        cam = sample["cams"][index]
        if with_image:
            cam["image"] = np.zeros((*IMAGE_HW, 3), np.uint8)
        else:
            cam["hw"] = np.array(IMAGE_HW, np.int32)
        cam["annotation"]["boxes"] = BOXES[index:]
        cam["annotation"]["cls"] = CATEGORIES[index:]
    return blueprint, sample


def _expected_heatmap(index: int, slices: int) -> np.ndarray:
    found = heatmap_geometry(BOXES[index:], None, IMAGE_HW, CATEGORIES[index:], None, _rules())
    ids = CATEGORIES[index:] if slices > 1 else np.zeros(len(found.radii), np.int32)
    empty = np.zeros((slices, *HEATMAP_HW), np.float32)
    drawn = reference_gaussians(
        empty, found.active, ids, found.centers.tolist(), found.radii, [1.0] * slices, 1 / 3
    )
    return drawn if slices > 1 else drawn[0]


@pytest.mark.parametrize("per_category", [True, False])
def test_the_step_draws_every_annotation(per_category: bool) -> None:
    step = BoundingBoxToHeatmapConverter(
        "annotation",
        "boxes",
        "heat",
        list(HEATMAP_HW),
        image_hw_field_name="hw",
        categories_in_name="cls",
        num_categories=2,
        use_per_category_heatmap=per_category,
        is_active_opt_out_name="on",
        center_opt_out_name="center",
        center_offset_opt_out_name="offset",
        height_width_bboxes_heatmap_opt_out_name="hw_heat",
        bboxes_heatmap_opt_out_name="boxes_heat",
    )
    out = run_named(*_scene(), [step])
    for index in range(2):
        prefix = f"cams.[{index}].annotation."
        expected = _expected_heatmap(index, 2 if per_category else 1)
        np.testing.assert_allclose(out[prefix + "heat"], expected, rtol=2e-7)
        found = heatmap_geometry(BOXES[index:], None, IMAGE_HW, CATEGORIES[index:], None, _rules())
        assert out[prefix + "on"].tolist() == found.active.tolist()
        assert out[prefix + "center"].dtype == np.int32
        np.testing.assert_array_equal(out[prefix + "center"], found.centers)
        np.testing.assert_array_equal(out[prefix + "offset"], found.center_offsets)
        np.testing.assert_array_equal(out[prefix + "hw_heat"], found.height_width)
        np.testing.assert_array_equal(out[prefix + "boxes_heat"], found.bboxes)


def test_the_image_gives_the_size_and_optional_outputs_stay_out() -> None:
    step = BoundingBoxToHeatmapConverter(
        "annotation", "boxes", "heat", HEATMAP_HW, "image", None, "cls", 2
    )
    out = run_named(*_scene(with_image=True), [step])
    assert sorted(k for k in out if k.startswith("cams.[0].annotation")) == [
        "cams.[0].annotation.boxes",
        "cams.[0].annotation.cls",
        "cams.[0].annotation.heat",
    ]
    np.testing.assert_allclose(out["cams.[1].annotation.heat"], _expected_heatmap(1, 2), rtol=2e-7)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"image_hw_field_name": "hw", "image_field_name": "img"}, ValueError, "Exactly one of"),
        ({"image_hw_field_name": "hw"}, AssertionError, "categories_in_name must be provided"),
        ({"image_hw_field_name": "hw", "categories_in_name": "c"}, AssertionError,
         "num_categories must be a positive integer"),
        ({"image_hw_field_name": "hw", "use_per_category_heatmap": False,
          "min_object_size": [1, 1], "per_category_min_object_sizes": [[1, 1]],
          "categories_in_name": "c", "num_categories": 1}, AssertionError, "mutually exclusive"),
        ({"image_hw_field_name": "hw", "categories_in_name": "c", "num_categories": 2,
          "per_category_min_object_sizes": [[1, 1]]}, AssertionError, "length equal to"),
        ({"image_hw_field_name": "hw", "categories_in_name": "c", "num_categories": 1,
          "per_category_min_object_sizes": [[1, 1, 1]]}, AssertionError, r"\[height, width\] pair"),
        ({"image_hw_field_name": "hw", "use_per_category_heatmap": False, "heatmap_hw": [0, 4]},
         AssertionError, "must be positive"),
    ],
)  # fmt: skip
def test_arguments_that_do_not_fit_raise_as_upstream(
    kwargs: dict, error: type, message: str
) -> None:
    kwargs = {"heatmap_hw": [4, 4], **kwargs}
    with pytest.raises(error, match=message):
        BoundingBoxToHeatmapConverter("annotation", "boxes", "heat", **kwargs)


def test_format_errors_are_key_errors_with_upstreams_messages() -> None:
    blueprint, _ = _scene()

    def check(**kwargs: Any) -> None:
        arguments = {"image_hw_field_name": "hw", "use_per_category_heatmap": False, **kwargs}
        step = BoundingBoxToHeatmapConverter("annotation", "boxes", "heat", [4, 4], **arguments)
        step.check_input_data_format_and_set_output_data_format(blueprint)

    with pytest.raises(KeyError, match="No occurrences of images found"):
        BoundingBoxToHeatmapConverter(
            "labels",
            "boxes",
            "heat",
            [4, 4],
            image_hw_field_name="hw",
            use_per_category_heatmap=False,
        ).check_input_data_format_and_set_output_data_format(blueprint)
    with pytest.raises(KeyError, match="no image size information was found"):
        check(image_hw_field_name="size")
    with pytest.raises(KeyError, match="no image was found"):
        check(image_hw_field_name=None, image_field_name="image")
    with pytest.raises(KeyError, match="no 'centers' fields was not found"):
        check(center_opt_in_name="centers")
    with pytest.raises(KeyError, match="must not contain the field 'cls'"):
        check(is_active_opt_out_name="cls")


def test_an_annotation_without_objects_gives_empty_results() -> None:
    empty = np.zeros((0, 4), np.float32)
    found = heatmap_geometry(empty, None, IMAGE_HW, np.zeros(0, np.int32), None, _rules())
    assert found.active.shape == (0,) and found.centers.shape == (0, 2)
    assert found.bboxes.shape == (0, 4) and found.radii.dtype == np.float32
