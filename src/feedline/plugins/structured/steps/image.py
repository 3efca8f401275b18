"""Image steps: decoding every encoded image of a name, and photometric (colour) jitter."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from feedline.plugins.structured.paths import Name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import FormatError, PipelineStepBase
from feedline.plugins.structured.steps.structural import find_data_fields
from feedline.types import DataType, ImageType

__all__ = ["ImageDecoder", "PhotoMetricDistorter"]

#: The six orders of three colour channels (the first keeps them).
_CHANNEL_ORDERS = np.array(
    [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]], dtype=np.int64
)


class ImageDecoder(PipelineStepBase):
    """Decodes every UINT8 data field named ``image_name`` (encoded file bytes) to an HWC image.

    Args:
        image_name: the name of the fields holding encoded images.
        use_device_mixed: decode to GPU memory (``device="mixed"``; needs a GPU pipeline).
        hw_decoder_load: ACCV-Lab's share of images for a hardware JPEG decoder; validated and
            accepted for ported code. It tunes speed only and feedline's decoder chooses its
            hardware path itself, so it changes no result.
        as_bgr: channel order BGR instead of RGB.
    """

    def __init__(
        self,
        image_name: Name,
        use_device_mixed: bool = False,
        hw_decoder_load: float = 0.65,
        as_bgr: bool = False,
    ) -> None:
        if not 0.0 <= float(hw_decoder_load) <= 1.0:
            raise ValueError(
                f"ImageDecoder: hw_decoder_load must be in [0, 1], got {hw_decoder_load}"
            )
        self._name = image_name
        self._device = "mixed" if use_device_mixed else "cpu"
        self._output_type = ImageType.BGR if as_bgr else ImageType.RGB

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        find_data_fields(data_empty, self._name, repr(self), DataType.UINT8, "images")
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        for path in find_data_fields(data, self._name, repr(self), DataType.UINT8, "images"):
            decoded = fn.decoders.image(
                data.get_item_in_path(path), device=self._device, output_type=self._output_type
            )
            data.set_item_in_path(path, decoded)
        return data

    def __repr__(self) -> str:
        return f"ImageDecoder({self._name!r})"


def _check_range(value: Sequence[float], what: str) -> tuple[float, float]:
    low, high = (float(v) for v in value)
    if low > high:
        raise ValueError(f"PhotoMetricDistorter: {what} must be (min, max), got {tuple(value)}")
    return low, high


def _check_prob(value: float, what: str) -> float:
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"PhotoMetricDistorter: {what} must be in [0, 1], got {value}")
    return float(value)


def _alias(effect: str, upstream: float | None, alias: float | None) -> float:
    if upstream is not None and alias is not None:
        raise TypeError(f"PhotoMetricDistorter: give prob_{effect}_aug or prob_{effect}, not both")
    chosen = upstream if upstream is not None else alias
    return 0.5 if chosen is None else chosen


def _on_gpu_pipeline() -> bool:
    from feedline import Pipeline

    pipeline = Pipeline.current()
    return pipeline is not None and getattr(pipeline, "device_id", None) is not None


def _swap_channels(image: np.ndarray, order: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(image[..., _CHANNEL_ORDERS[int(order)]])


class PhotoMetricDistorter(PipelineStepBase):
    """Colour jitter of every image named ``image_name``, with one draw shared by all of them.

    Each effect happens with its probability: a brightness offset (in units of the type's full
    range, e.g. ``(-0.125, 0.125)``), a hue rotation in degrees, a contrast factor, a saturation
    factor, and a random order of the three channels. Images keep their type (uint8 or float;
    float images are clamped to ``[0, 1]`` afterwards). Wrap the step (e.g.
    :class:`DataGroupArrayWithNameElementsAppliedStep`) for independent draws per camera.

    The positional order and the ``prob_*_aug`` names are ACCV-Lab's; ``prob_brightness``,
    ``prob_hue``, ``prob_contrast`` and ``prob_saturation`` are accepted as keyword aliases.

    Args:
        image_name: the name of the image fields.
        min_max_brightness: range of the brightness offset.
        min_max_hue: range of the hue rotation (degrees).
        min_max_contrast: range of the contrast factor.
        min_max_saturation: range of the saturation factor.
        prob_brightness_aug: probability of the brightness offset.
        prob_hue_aug: probability of the hue rotation.
        prob_contrast_aug: probability of the contrast change.
        prob_saturation_aug: probability of the saturation change.
        prob_swap_channels: probability of a random channel order.
        is_bgr: the images are BGR (else RGB).
        enforce_process_on_gpu: process on the GPU (images move there) when the pipeline has
            one; a CPU-only pipeline processes on the CPU.
    """

    def __init__(
        self,
        image_name: Name,
        min_max_brightness: Sequence[float] = (-0.125, 0.125),
        min_max_hue: Sequence[float] = (-18.0, 18.0),
        min_max_contrast: Sequence[float] = (0.5, 1.5),
        min_max_saturation: Sequence[float] = (0.5, 1.5),
        prob_brightness_aug: float | None = None,
        prob_hue_aug: float | None = None,
        prob_contrast_aug: float | None = None,
        prob_saturation_aug: float | None = None,
        prob_swap_channels: float = 0.5,
        is_bgr: bool = False,
        enforce_process_on_gpu: bool = True,
        *,
        prob_brightness: float | None = None,
        prob_hue: float | None = None,
        prob_contrast: float | None = None,
        prob_saturation: float | None = None,
    ) -> None:
        prob_brightness = _alias("brightness", prob_brightness_aug, prob_brightness)
        prob_hue = _alias("hue", prob_hue_aug, prob_hue)
        prob_contrast = _alias("contrast", prob_contrast_aug, prob_contrast)
        prob_saturation = _alias("saturation", prob_saturation_aug, prob_saturation)
        self._on_gpu = bool(enforce_process_on_gpu)
        self._name = image_name
        self._ranges = {
            "brightness": _check_range(min_max_brightness, "min_max_brightness"),
            "contrast": _check_range(min_max_contrast, "min_max_contrast"),
            "saturation": _check_range(min_max_saturation, "min_max_saturation"),
            "hue": _check_range(min_max_hue, "min_max_hue"),
        }
        self._probs = {
            "brightness": _check_prob(prob_brightness, "prob_brightness_aug"),
            "contrast": _check_prob(prob_contrast, "prob_contrast_aug"),
            "saturation": _check_prob(prob_saturation, "prob_saturation_aug"),
            "hue": _check_prob(prob_hue, "prob_hue_aug"),
        }
        self._prob_swap = _check_prob(prob_swap_channels, "prob_swap_channels")
        self._image_type = ImageType.BGR if is_bgr else ImageType.RGB

    def _paths(self, data: SampleDataGroup) -> list[tuple[Name, ...]]:
        paths = find_data_fields(data, self._name, repr(self), kind="images")
        for path in paths:
            dtype = data.get_type_of_item_in_path(path)
            if dtype not in (DataType.UINT8, DataType.FLOAT):
                raise FormatError(f"{self!r}: images must be UINT8 or FLOAT, got {dtype.name}")
        return paths

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        self._paths(data_empty)
        return data_empty

    def _draw(self, effect: str, neutral: float):
        from feedline import fn

        low, high = self._ranges[effect]
        value = fn.random.uniform(range=[low, high]) if low < high else low
        apply = fn.random.coin_flip(probability=self._probs[effect])
        return neutral + apply * (value - neutral)

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn
        from feedline import math as fmath

        paths = self._paths(data)
        shift = self._draw("brightness", 0.0)
        contrast = self._draw("contrast", 1.0)
        saturation = self._draw("saturation", 1.0)
        hue = self._draw("hue", 0.0)
        swap = fn.random.coin_flip(probability=self._prob_swap)
        order = swap * fn.random.uniform(values=[1.0, 2.0, 3.0, 4.0, 5.0])
        to_gpu = self._on_gpu and _on_gpu_pipeline()
        for path in paths:
            image = data.get_item_in_path(path)
            is_float = data.get_type_of_item_in_path(path) == DataType.FLOAT
            if to_gpu:
                image = image.gpu()
            image = fn.brightness_contrast(image, brightness_shift=shift, contrast=contrast)
            image = fn.color_twist(
                image, saturation=saturation, hue=hue, image_type=self._image_type
            )
            if is_float:
                image = fmath.clamp(image, 0.0, 1.0)
            image = fn.python_function(image, order, function=_swap_channels)
            data.set_item_in_path(path, image)
        return data

    def __repr__(self) -> str:
        return f"PhotoMetricDistorter({self._name!r})"
