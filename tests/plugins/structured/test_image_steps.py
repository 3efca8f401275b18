"""The image steps on real batches: decoding every named field and the colour jitter."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import types
from feedline.plugins.structured import (
    DataGroupArrayWithNameElementsAppliedStep,
    ImageDecoder,
    PhotoMetricDistorter,
    PipelineDefinition,
    SampleDataGroup,
)
from tests.plugins.structured.helpers import FixedCallable, jpeg_bytes

FIXED = {
    "min_max_brightness": (0.1, 0.1),
    "min_max_contrast": (1.0, 1.0),
    "min_max_saturation": (1.0, 1.0),
    "min_max_hue": (0.0, 0.0),
    "prob_brightness": 1.0,
    "prob_contrast": 1.0,
    "prob_saturation": 1.0,
    "prob_hue": 1.0,
}


def run(blueprint: SampleDataGroup, sample: SampleDataGroup, steps: list, batch: int = 6) -> list:
    source = FixedCallable(blueprint, sample.get_data(), batch)
    definition = PipelineDefinition(source, steps, use_parallel_external_source=False)
    pipe = definition.get_dali_pipeline(batch_size=batch, num_threads=1, device_id=None, seed=2)
    pipe.build()
    outputs = [tl.as_array() for tl in pipe.run()]
    pipe.close()
    return outputs


def cameras(dtype: types.DataType, value: np.ndarray) -> tuple[SampleDataGroup, SampleDataGroup]:
    camera = SampleDataGroup()
    camera.add_data_field("image", dtype)
    blueprint = SampleDataGroup()
    blueprint.add_data_group_field_array("cams", camera, 2)
    sample = blueprint.get_empty_like_self()
    for cam in (0, 1):
        sample["cams"][cam]["image"] = value
    return blueprint, sample


@pytest.mark.parametrize("dtype", [types.UINT8, types.FLOAT])
def test_brightness_and_channel_swap(dtype: types.DataType) -> None:
    scale = 255 if dtype is types.UINT8 else 1
    pixel = np.array([10, 100, 200]) / 255 * scale
    blueprint, sample = cameras(dtype, np.tile(pixel, (4, 5, 1)))
    step = PhotoMetricDistorter("image", prob_swap_channels=1.0, **FIXED)
    first, second = run(blueprint, sample, [step])
    assert first.dtype == second.dtype == (np.uint8 if scale == 255 else np.float32)
    expected = pixel + 0.1 * scale
    orders = set()
    for image in (*first, *second):
        values = image[0, 0].astype(np.float64)
        assert np.allclose(np.sort(values), expected, atol=0.6 * scale / 255)
        assert np.allclose(image, image[0, 0])
        order = tuple(np.argsort(values))
        assert order != (0, 1, 2)
        orders.add(order)
    assert len(orders) > 1


def test_one_draw_per_step_and_independent_draws_when_wrapped() -> None:
    blueprint, sample = cameras(types.UINT8, np.full((4, 4, 3), 120, np.uint8))
    jitter = {**FIXED, "min_max_brightness": (-0.3, 0.3)}
    shared = run(blueprint, sample, [PhotoMetricDistorter("image", prob_swap_channels=0, **jitter)])
    assert np.array_equal(shared[0], shared[1])
    wrapped = DataGroupArrayWithNameElementsAppliedStep(
        PhotoMetricDistorter("image", prob_swap_channels=0, **jitter), "cams"
    )
    first, second = run(blueprint, sample, [wrapped])
    assert not np.array_equal(first, second)


def test_decoder_decodes_every_field_of_the_name() -> None:
    blueprint, sample = cameras(types.UINT8, jpeg_bytes(12, 20, 1))
    sample["cams"][1]["image"] = jpeg_bytes(8, 6, 2)
    first, second = run(blueprint, sample, [ImageDecoder("image")], batch=2)
    assert first.shape == (2, 12, 20, 3) and second.shape == (2, 8, 6, 3)
    bgr = run(blueprint, sample, [ImageDecoder("image", as_bgr=True)], batch=2)
    assert np.array_equal(bgr[0], first[..., ::-1])
