"""The image steps on real batches: decoding every named field and the colour jitter."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import fn, types
from feedline.plugins.structured import (
    DataGroupArrayWithNameElementsAppliedStep,
    ImageDecoder,
    PhotoMetricDistorter,
    PipelineDefinition,
    SampleDataGroup,
)
from feedline.plugins.structured.steps.base import FormatError
from tests.plugins.structured.helpers import FixedCallable, jpeg_bytes

FIXED = {
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
    brightness = (0.1 * scale, 0.1 * scale)  # in the image's own units
    step = PhotoMetricDistorter(
        "image", min_max_brightness=brightness, prob_swap_channels=1.0, **FIXED
    )
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
    jitter = {**FIXED, "min_max_brightness": (-60, 60)}
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


class ScriptedUniform:
    """Stands in for ``fn.random.uniform``: records each range asked for, returns a set value."""

    def __init__(self, values: dict[tuple[float, float], float]) -> None:
        self.values = values
        self.ranges: list[tuple[float, float]] = []

    def __call__(self, range: list[float], **_: object):
        key = (float(range[0]), float(range[1]))
        self.ranges.append(key)
        value = np.float32(self.values.get(key, 0.0))
        return fn.python_function(range, function=lambda _: value)


def scripted_run(
    monkeypatch: pytest.MonkeyPatch, script: ScriptedUniform, image: np.ndarray, **kwargs: object
) -> np.ndarray:
    monkeypatch.setattr(fn.random, "uniform", script)
    dtype = types.UINT8 if image.dtype == np.uint8 else types.FLOAT
    blueprint, sample = cameras(dtype, image)
    step = PhotoMetricDistorter("image", **kwargs)
    return run(blueprint, sample, [step], batch=1)[0][0]


def test_draws_follow_the_upstream_sequence(monkeypatch: pytest.MonkeyPatch) -> None:
    script = ScriptedUniform({(0.0, 1.0): 0.9})
    image = np.full((2, 2, 3), 0.25, np.float32)
    out = scripted_run(
        monkeypatch,
        script,
        image,
        min_max_brightness=(-0.2, 0.2),
        min_max_hue=(-5.0, 5.0),
        min_max_contrast=(0.7, 1.3),
        min_max_saturation=(0.6, 1.4),
    )
    decisions, rest = script.ranges[:5], script.ranges[5:]
    assert decisions == [(0.0, 1.0)] * 5
    assert rest == [(0.0, 2.0), (-0.2, 0.2), (0.7, 1.3), (-5.0, 5.0), (0.6, 1.4), (0.0, 6.0)]
    assert np.array_equal(out, image), "every on/off draw of 0.9 is above 0.5: nothing happens"


@pytest.mark.parametrize("contrast_first", [0.0, 1.0])
def test_contrast_goes_before_or_after_the_colour_changes(
    monkeypatch: pytest.MonkeyPatch, contrast_first: float
) -> None:
    script = ScriptedUniform({(0.0, 1.0): 0.1, (0.0, 2.0): contrast_first, (0.0, 6.0): 0.0})
    out = scripted_run(
        monkeypatch,
        script,
        np.full((1, 1, 3), 0.8, np.float32),
        min_max_brightness=(0.3, 0.3),  # clamps 0.8 to 1.0
        min_max_contrast=(0.5, 0.5),
        min_max_saturation=(1.0, 1.0),
        min_max_hue=(0.0, 0.0),
    )
    assert np.allclose(out, 0.5, atol=1e-5), "brightness clamps first, contrast halves after"


def test_default_brightness_is_an_eighth_of_the_full_range() -> None:
    blueprint, sample = cameras(types.UINT8, np.full((2, 2, 3), 128, np.uint8))
    step = PhotoMetricDistorter("image", prob_swap_channels=0.0, **FIXED)
    shifts = np.concatenate([out[:, 0, 0, 0] for out in run(blueprint, sample, [step], 32)])
    shifts = shifts.astype(np.int64) - 128
    assert shifts.min() >= -32 and shifts.max() <= 32
    assert shifts.max() - shifts.min() > 16


def test_explicit_brightness_needs_one_image_type() -> None:
    camera = SampleDataGroup()
    camera.add_data_field("image", types.UINT8)
    other = SampleDataGroup()
    other.add_data_field("image", types.FLOAT)
    blueprint = SampleDataGroup()
    blueprint.add_data_group_field("a", camera)
    blueprint.add_data_group_field("b", other)
    step = PhotoMetricDistorter("image", min_max_brightness=(-10, 10))
    with pytest.raises(FormatError, match="one type"):
        step.check_input_data_format_and_set_output_data_format(blueprint)
