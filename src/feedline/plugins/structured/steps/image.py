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
        as_bgr: channel order BGR instead of RGB.
    """

    def __init__(self, image_name: Name, use_device_mixed: bool = False, as_bgr: bool = False):
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


def _swap_channels(image: np.ndarray, order: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(image[..., _CHANNEL_ORDERS[int(order)]])


class PhotoMetricDistorter(PipelineStepBase):
    """Colour jitter of every image named ``image_name``, with one draw shared by all of them.

    Each effect happens with its probability: a brightness offset (in units of the type's full
    range, e.g. ``(-0.125, 0.125)``), a contrast factor, a saturation factor, a hue rotation in
    degrees, and a random order of the three channels. Images keep their type (uint8 or float).
    Wrap the step (e.g. :class:`DataGroupArrayWithNameElementsAppliedStep`) for independent
    draws per camera.
    """

    def __init__(
        self,
        image_name: Name,
        min_max_brightness: Sequence[float] = (-0.125, 0.125),
        min_max_contrast: Sequence[float] = (0.5, 1.5),
        min_max_saturation: Sequence[float] = (0.5, 1.5),
        min_max_hue: Sequence[float] = (-18.0, 18.0),
        prob_brightness: float = 0.5,
        prob_contrast: float = 0.5,
        prob_saturation: float = 0.5,
        prob_hue: float = 0.5,
        prob_swap_channels: float = 0.5,
        is_bgr: bool = False,
    ) -> None:
        self._name = image_name
        self._ranges = {
            "brightness": _check_range(min_max_brightness, "min_max_brightness"),
            "contrast": _check_range(min_max_contrast, "min_max_contrast"),
            "saturation": _check_range(min_max_saturation, "min_max_saturation"),
            "hue": _check_range(min_max_hue, "min_max_hue"),
        }
        self._probs = {
            "brightness": _check_prob(prob_brightness, "prob_brightness"),
            "contrast": _check_prob(prob_contrast, "prob_contrast"),
            "saturation": _check_prob(prob_saturation, "prob_saturation"),
            "hue": _check_prob(prob_hue, "prob_hue"),
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

        paths = self._paths(data)
        shift = self._draw("brightness", 0.0)
        contrast = self._draw("contrast", 1.0)
        saturation = self._draw("saturation", 1.0)
        hue = self._draw("hue", 0.0)
        swap = fn.random.coin_flip(probability=self._prob_swap)
        order = swap * fn.random.uniform(values=[1.0, 2.0, 3.0, 4.0, 5.0])
        for path in paths:
            image = data.get_item_in_path(path)
            image = fn.brightness_contrast(image, brightness_shift=shift, contrast=contrast)
            image = fn.color_twist(
                image, saturation=saturation, hue=hue, image_type=self._image_type
            )
            image = fn.python_function(image, order, function=_swap_channels)
            data.set_item_in_path(path, image)
        return data

    def __repr__(self) -> str:
        return f"PhotoMetricDistorter({self._name!r})"
