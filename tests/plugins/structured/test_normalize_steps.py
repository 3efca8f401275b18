"""Image value and layout steps on real batches, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import types
from feedline.plugins.structured import PipelineDefinition, SampleDataGroup
from feedline.plugins.structured.steps import (
    AxesLayoutSetter,
    FieldNotFoundError,
    ImageMeanStdDevNormalizer,
    ImageRange01Normalizer,
    ImageToTileSizePadder,
    PhotoMetricDistorter,
)
from tests.plugins.structured.helpers import FixedCallable


def one_image(image: np.ndarray, dtype: types.DataType = types.UINT8) -> tuple:
    blueprint = SampleDataGroup()
    blueprint.add_data_field("image", dtype)
    sample = blueprint.get_empty_like_self()
    sample["image"] = image
    return blueprint, sample


def run(blueprint: SampleDataGroup, sample: SampleDataGroup, steps: list) -> list:
    source = FixedCallable(blueprint, sample.get_data(), 1)
    definition = PipelineDefinition(
        source,
        steps,
        use_parallel_external_source=False,
        copy_external_source_passthrough_outputs=False,
    )
    pipe = definition.get_dali_pipeline(batch_size=1, num_threads=1, device_id=None, seed=3)
    pipe.build()
    outputs = pipe.run()
    pipe.close()
    return outputs


IMAGE = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)


def test_range_and_mean_std_normalisation_match_numpy() -> None:
    (ranged,) = run(*one_image(IMAGE), [ImageRange01Normalizer("image")])
    assert np.allclose(ranged.as_array()[0], IMAGE / 255.0)
    mean, std = [1.0, 2.0, 3.0], [2.0, 4.0, 8.0]
    (normed,) = run(*one_image(IMAGE), [ImageMeanStdDevNormalizer("image", mean, std)])
    assert normed.as_array().dtype == np.float32
    assert np.allclose(normed.as_array()[0], (IMAGE - np.array(mean)) / np.array(std), atol=1e-5)


@settings(max_examples=8, deadline=None)
@given(h=st.integers(1, 9), w=st.integers(1, 9), tx=st.integers(1, 4), ty=st.integers(1, 4))
def test_tile_padding_reaches_the_next_multiple_with_zeros(
    h: int, w: int, tx: int, ty: int
) -> None:
    image = np.full((h, w, 3), 7, np.uint8)
    (padded,) = run(*one_image(image), [ImageToTileSizePadder("image", (tx, ty))])
    out = padded.as_array()[0]
    assert out.shape == (-(-h // ty) * ty, -(-w // tx) * tx, 3)
    assert np.array_equal(out[:h, :w], image) and out.sum() == image.sum()


def test_layout_setter_changes_only_the_layout() -> None:
    (out,) = run(*one_image(IMAGE), [AxesLayoutSetter("image", "HWC")])
    assert out.layout() == "HWC" and np.array_equal(out.as_array()[0], IMAGE)


def test_photometric_float_images_are_clamped_to_unit_range() -> None:
    image = np.full((2, 2, 3), 0.95, np.float32)
    step = PhotoMetricDistorter(
        "image", (0.3, 0.3), (0.0, 0.0), (1.0, 1.0), (1.0, 1.0), 1.0, 0.0, 0.0, 0.0, 0.0
    )
    (out,) = run(*one_image(image, types.FLOAT), [step])
    assert np.allclose(out.as_array(), 1.0)


@pytest.mark.parametrize(
    "step",
    [
        ImageRange01Normalizer("picture"),
        ImageMeanStdDevNormalizer("picture", 0.0, 1.0),
        ImageToTileSizePadder("picture", 4),
        AxesLayoutSetter(["picture"], "HWC"),
    ],
)
def test_missing_fields_raise_a_key_error_naming_them(step: object) -> None:
    blueprint, _ = one_image(IMAGE)
    with pytest.raises(KeyError, match="No occurrences of"):
        step.check_input_data_format_and_set_output_data_format(blueprint)  # type: ignore[attr-defined]
    assert issubclass(FieldNotFoundError, ValueError)


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="greater than 0"):
        ImageMeanStdDevNormalizer("image", 0.0, [1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="Tile size"):
        ImageToTileSizePadder("image", 0)
    with pytest.raises(TypeError, match="not both"):
        PhotoMetricDistorter("image", prob_hue_aug=0.1, prob_hue=0.2)


def test_condition_eval_adds_a_logical_mask_per_annotation_group() -> None:
    from feedline.plugins.structured.steps import AnnotationElementConditionEval

    annotation = SampleDataGroup()
    annotation.add_data_field("lidar", types.INT32)
    annotation.add_data_field("vis", types.INT32)
    blueprint = SampleDataGroup()
    blueprint.add_data_group_field("annotation", annotation)
    sample = blueprint.get_empty_like_self()
    sample["annotation"]["lidar"] = [0, 2, 1, 4]
    sample["annotation"]["vis"] = [1, 1, 0, 2]
    step = AnnotationElementConditionEval("annotation", "keep = lidar and not vis < 1", True)
    output_format = step.check_input_data_format_and_set_output_data_format(blueprint)
    assert output_format["annotation"].contained_top_level_field_names == ("keep",)
    (mask,) = run(blueprint, sample, [step])
    assert mask.as_array()[0].tolist() == [False, True, False, True]
    with pytest.raises(KeyError, match="No occurrences of annotations"):
        AnnotationElementConditionEval(
            "boxes", "x = a > 1"
        ).check_input_data_format_and_set_output_data_format(blueprint)


def test_tensor_size_adder_adds_height_and_width_beside_each_tensor() -> None:
    from feedline.structured.processing_steps.tensor_size_adder import TensorSizeAdder

    step = TensorSizeAdder("image", "_hw", types.INT64)
    blueprint, sample = one_image(IMAGE)
    output_format = step.check_input_data_format_and_set_output_data_format(blueprint)
    assert output_format.contained_top_level_field_names == ("image", "image_hw")
    _, size = run(blueprint, sample, [step])
    assert size.as_array()[0].tolist() == [4, 5] and size.as_array().dtype == np.int64
    with pytest.raises(KeyError, match="No occurrences of tensors"):
        TensorSizeAdder("depth", "_hw").check_input_data_format_and_set_output_data_format(
            blueprint
        )
