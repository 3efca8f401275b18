"""Steps: blueprint inference through a chain, build-time format and type errors naming the field,
the sub-tree wrappers, and the ready steps' format checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import fn, types
from feedline.plugins.structured import (
    AffineTransformer,
    DataGroupArrayWithNameElementsAppliedStep,
    DataGroupInPathAppliedStep,
    DataGroupsWithNameAppliedStep,
    ImageDecoder,
    PaddingToUniform,
    PhotoMetricDistorter,
    PipelineDefinition,
    PipelineStepBase,
    SampleDataGroup,
    UnneededFieldRemover,
)
from feedline.plugins.structured.steps import DataGroupArrayInPathElementsAppliedStep, FormatError
from tests.plugins.structured.helpers import FixedCallable, camera_format, jpeg_bytes


class ToFloat(PipelineStepBase):
    """Declares every field named ``name`` FLOAT and adds a sibling ``<name>_scale``; the
    ``actual``/``forget`` knobs make ``_process`` disagree with that declaration."""

    def __init__(
        self, name: str, actual: Any = types.FLOAT, retype: Any = types.FLOAT, forget: bool = False
    ) -> None:
        self.name, self.actual, self.retype, self.forget = name, actual, retype, forget

    def _paths(self, data: SampleDataGroup) -> tuple:
        paths = data.find_all_occurrences(self.name)
        if not paths:
            raise FormatError(f"no field {self.name!r}")
        return paths

    def _check_and_adjust_data_format_input_to_output(self, data_empty):
        for path in self._paths(data_empty):
            data_empty.change_type_of_data_and_remove_data(path, types.FLOAT)
            data_empty.get_parent_of_path(path).add_data_field(f"{self.name}_scale", types.FLOAT)
        return data_empty

    def _process(self, data):
        for path in self._paths(data):
            node = data.get_item_in_path(path)
            data.change_type_of_data_and_remove_data(path, self.retype)
            data.set_item_in_path(path, fn.cast(node * np.float32(1 / 255), dtype=self.actual))
            if not self.forget:
                parent = data.get_parent_of_path(path)
                parent.add_data_field(f"{self.name}_scale", types.FLOAT)
                parent[f"{self.name}_scale"] = fn.random.uniform(range=[1, 2])
        return data

    def __repr__(self) -> str:
        return f"ToFloat({self.name!r})"


def two_cameras() -> SampleDataGroup:
    root = SampleDataGroup()
    root.add_data_group_field_array("cams", camera_format(), 2)
    root.add_data_field("tag", types.STRING)
    return root


def two_camera_input(count: int = 4) -> FixedCallable:
    sample = two_cameras()
    for cam in (0, 1):
        sample["cams"][cam]["image"] = jpeg_bytes(16, 24, cam)
        sample["cams"][cam]["annotation"]["bboxes"] = [[2, 2, 10, 8]]
        sample["cams"][cam]["annotation"]["cls"] = ["car"]
    sample["tag"] = "t"
    return FixedCallable(two_cameras(), sample.get_data(), count)


def define(steps: list, **kwargs: Any) -> PipelineDefinition:
    return PipelineDefinition(
        two_camera_input(), steps, use_parallel_external_source=False, **kwargs
    )


def build(definition: PipelineDefinition) -> Any:
    return definition.get_dali_pipeline(batch_size=2, num_threads=1, device_id=None, seed=5)


def test_blueprint_inference_through_a_chain_of_steps_matches_the_built_outputs() -> None:
    steps = [
        ImageDecoder("image"),
        DataGroupArrayWithNameElementsAppliedStep(ToFloat("image"), "cams"),
        None,
        UnneededFieldRemover("cls"),
        PaddingToUniform("annotation", fill_value=-1),
    ]
    definition = define(steps)
    before = definition.input_data_structure
    out = definition.check_and_get_output_data_structure()
    assert definition.input_data_structure.type_matches(before)
    assert out.field_names_flat == (
        "cams.[0].image",
        "cams.[0].annotation.bboxes",
        "cams.[0].image_scale",
        "cams.[1].image",
        "cams.[1].annotation.bboxes",
        "cams.[1].image_scale",
        "tag",
    )
    assert out.get_type_of_item_in_path(("cams", 1, "image")) is types.FLOAT
    assert out.get_type_of_item_in_path("tag") is types.STRING
    pipe = build(definition)
    pipe.build()
    outputs = pipe.run()
    assert [tl.dtype for tl in outputs] == [
        types.FLOAT,
        types.FLOAT,
        types.FLOAT,
        types.FLOAT,
        types.FLOAT,
        types.FLOAT,
        types.UINT8,
    ]
    assert outputs[0].as_array().shape == (2, 16, 24, 3)
    assert float(np.max(outputs[0].as_array())) <= 1.0
    pipe.close()


def test_a_step_that_does_not_fit_its_input_is_named_before_anything_is_built() -> None:
    definition = define([ImageDecoder("image"), UnneededFieldRemover("image"), ToFloat("image")])
    with pytest.raises(FormatError, match=r"step 2 \(ToFloat\('image'\)\).*no field 'image'"):
        definition.check_and_get_output_data_structure()
    with pytest.raises(FormatError, match="step 2"):
        build(definition)


def test_output_type_mismatch_is_found_at_build_and_names_the_field() -> None:
    wrapped = DataGroupArrayWithNameElementsAppliedStep(
        ToFloat("image", retype=types.INT32, actual=types.INT32), "cams"
    )
    definition = define([ImageDecoder("image"), wrapped])
    definition.check_and_get_output_data_structure()  # the declaration alone is consistent
    with pytest.raises(
        FormatError,
        match=(
            r"in 'cams.\[0\]'.*differs from its declared format: field 'image' should have type "
            r"FLOAT but has INT32"
        ),
    ):
        build(definition)


def test_missing_output_field_is_found_at_build_and_named() -> None:
    definition = define([ImageDecoder("image"), ToFloat("image", forget=True)])
    with pytest.raises(FormatError, match=r"field 'cams.\[0\].image_scale' is missing"):
        build(definition)


def test_node_of_the_wrong_type_is_found_at_build_and_named() -> None:
    definition = define([ImageDecoder("image"), ToFloat("image", actual=types.FLOAT64)])
    with pytest.raises(TypeError, match=r"'image' is declared FLOAT .* has type FLOAT64") as info:
        build(definition)
    assert "step 1 (ToFloat('image'))" in "".join(getattr(info.value, "__notes__", []))
    unchecked = define(
        [ImageDecoder("image"), ToFloat("image", actual=types.FLOAT64)], check_data_format=False
    )
    build(unchecked).close()


def test_a_field_left_without_data_is_reported() -> None:
    class Drop(PipelineStepBase):
        def _check_and_adjust_data_format_input_to_output(self, data_empty):
            data_empty.change_type_of_data_and_remove_data("tag", types.INT32)
            return data_empty

        def _process(self, data):
            data.change_type_of_data_and_remove_data("tag", types.INT32)
            return data

    with pytest.raises(FormatError, match="field 'tag' holds NoneType, not a graph node"):
        build(define([Drop()]))


def test_step_returning_something_else_is_reported() -> None:
    class Bad(PipelineStepBase):
        def _check_and_adjust_data_format_input_to_output(self, data_empty):
            return data_empty

        def _process(self, data):
            return data.to_dictionary()

    with pytest.raises(FormatError, match="returned dict"):
        build(define([Bad()]))


def test_wrappers_select_their_subtrees() -> None:
    blueprint = two_cameras()
    by_path = DataGroupInPathAppliedStep(ToFloat("image"), ("cams", 1))
    out = by_path.check_input_data_format_and_set_output_data_format(blueprint)
    assert out.get_type_of_item_in_path(("cams", 0, "image")) is types.UINT8
    assert out.get_type_of_item_in_path(("cams", 1, "image")) is types.FLOAT
    assert blueprint.get_type_of_item_in_path(("cams", 1, "image")) is types.UINT8
    by_name = DataGroupsWithNameAppliedStep(ToFloat("bboxes"), ["annotation"])
    out = by_name.check_input_data_format_and_set_output_data_format(blueprint)
    assert out.path_exists(("cams", 0, "annotation", "bboxes_scale"))
    per_element = DataGroupArrayInPathElementsAppliedStep(ToFloat("image"), "cams")
    out = per_element.check_input_data_format_and_set_output_data_format(blueprint)
    assert out.get_num_occurrences("image_scale") == 2
    errors = [
        (DataGroupInPathAppliedStep(ToFloat("image"), "tag"), "no data group field at 'tag'"),
        (DataGroupsWithNameAppliedStep(ToFloat("image"), "zzz"), "no data group field named"),
        (DataGroupArrayInPathElementsAppliedStep(ToFloat("image"), ("cams", 0)), "not an array"),
        (DataGroupArrayWithNameElementsAppliedStep(ToFloat("image"), "q"), "no data group field"),
        (DataGroupInPathAppliedStep(ToFloat("zzz"), "cams"), r"in 'cams'.*no field 'zzz'"),
    ]
    for step, message in errors:
        with pytest.raises(FormatError, match=message):
            step.check_input_data_format_and_set_output_data_format(blueprint)
    lenient = DataGroupsWithNameAppliedStep(ToFloat("image"), "zzz", False)
    assert lenient.check_input_data_format_and_set_output_data_format(blueprint).type_matches(
        blueprint
    )
    with pytest.raises(TypeError, match="PipelineStepBase"):
        DataGroupInPathAppliedStep("not a step", "cams")
    with pytest.raises(ValueError, match="empty"):
        DataGroupInPathAppliedStep(ToFloat("image"), ())
    with pytest.raises(ValueError, match="at least one"):
        DataGroupsWithNameAppliedStep(ToFloat("image"), [])


def test_wrapped_random_steps_draw_independently_per_camera() -> None:
    steps = [
        ImageDecoder("image"),
        DataGroupArrayWithNameElementsAppliedStep(ToFloat("image"), "cams"),
    ]
    pipe = build(define(steps))
    pipe.build()
    outputs = dict(
        zip(
            define(steps).check_and_get_output_data_structure().field_names_flat,
            pipe.run(),
            strict=True,
        )
    )
    first = outputs["cams.[0].image_scale"].as_array()
    second = outputs["cams.[1].image_scale"].as_array()
    assert not np.allclose(first, second)
    pipe.close()


def test_ready_steps_reject_unfit_formats() -> None:
    blueprint = two_cameras()
    blueprint.change_type_of_data_and_remove_data(("cams", 0, "image"), types.FLOAT)
    cases = [
        (ImageDecoder("image"), r"'cams.\[0\].image' has type FLOAT, expected UINT8"),
        (ImageDecoder("picture"), "no data field named 'picture'"),
        (PhotoMetricDistorter("tag"), "UINT8 or FLOAT"),
        (AffineTransformer((8, 8), image_field_names="tag"), "UINT8 or FLOAT"),
        (
            AffineTransformer((8, 8), image_field_names="image", box_field_names="cls"),
            "has type INT32, expected FLOAT",
        ),
        (PaddingToUniform("zzz"), "No fields to be padded with name .zzz."),
    ]
    for step, message in cases:
        with pytest.raises(FormatError, match=message):
            step.check_input_data_format_and_set_output_data_format(blueprint)


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (lambda: AffineTransformer((0, 4), image_field_names="image"), "output_hw"),
        (lambda: AffineTransformer((4, 4), "fit", image_field_names="image"), "resizing_mode"),
        (lambda: AffineTransformer((4, 4), "pad", image_field_names="image"), "resizing_anchor"),
        (lambda: AffineTransformer((4, 4), "stretch", "center", "image"), "resizing_anchor"),
        (lambda: AffineTransformer((4, 4), image_field_names="i", prob_flip=2), "prob_flip"),
        (
            lambda: AffineTransformer((4, 4), image_field_names="i", scale_range=(2, 1)),
            "scale_range",
        ),
        (
            lambda: AffineTransformer((4, 4), image_field_names="i", translation_range=(1, 0)),
            "translation_range",
        ),
        (lambda: AffineTransformer((4, 4)), "exactly one of 'image_field_names'"),
        (
            lambda: AffineTransformer((4, 4), image_field_names="i", image_hw_field_names="hw"),
            "exactly one of 'image_field_names'",
        ),
        (lambda: PhotoMetricDistorter("image", min_max_hue=(5, -5)), "min_max_hue"),
        (lambda: PhotoMetricDistorter("image", prob_hue=1.5), "prob_hue"),
        (lambda: UnneededFieldRemover([]), "at least one"),
    ],
)
def test_step_arguments_are_validated(factory: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory()
