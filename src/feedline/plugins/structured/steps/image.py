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


def pipeline_has_gpu() -> bool:
    """Whether the pipeline being defined has a GPU (a ``device_id``)."""
    from feedline import Pipeline

    pipeline = Pipeline.current()
    return pipeline is not None and getattr(pipeline, "device_id", None) is not None


def _swap_channels(image: np.ndarray, order: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(image[..., _CHANNEL_ORDERS[int(order)]])


#: The effects in the order ACCV-Lab draws their on/off decisions.
_DECISION_ORDER = ("brightness", "contrast", "saturation", "hue")
#: The effects in the order ACCV-Lab draws their strengths.
_VALUE_ORDER = ("brightness", "contrast", "hue", "saturation")
#: The value of each effect that leaves an image unchanged.
_NEUTRAL = {"brightness": 0.0, "contrast": 1.0, "saturation": 1.0, "hue": 0.0}
#: The brightness range when none is given, as a fraction of the image type's full range.
_DEFAULT_BRIGHTNESS_FRACTION = 0.125


class PhotoMetricDistorter(PipelineStepBase):
    """Colour jitter of every image named ``image_name``, with one draw shared by all of them.

    Each effect happens with its probability, in ACCV-Lab's order: a brightness offset, a
    contrast factor (randomly before or after the colour changes), a saturation factor, a hue
    rotation in degrees, and a random order of the three channels. The image is processed as
    float in ``[0, 1]`` (uint8 divided by 255) and clamped to ``[0, 1]`` after brightness and
    contrast; it keeps its type. Wrap the step (e.g.
    :class:`DataGroupArrayWithNameElementsAppliedStep`) for independent draws per camera.

    All random numbers come from ``fn.random.uniform`` in ACCV-Lab's sequence (five on/off
    draws in ``[0, 1)``, the contrast position in ``[0, 2)``, the strengths, the channel order
    in ``[0, 6)``), so code that scripts those draws sees the same effects.

    The positional order and the ``prob_*_aug`` names are ACCV-Lab's; ``prob_brightness``,
    ``prob_hue``, ``prob_contrast`` and ``prob_saturation`` are accepted as keyword aliases.

    Args:
        image_name: the name of the image fields.
        min_max_brightness: range of the brightness offset, in the image's own units (e.g.
            ``(-32, 32)`` for uint8, ``(-0.125, 0.125)`` for float); ``None`` means an eighth
            of the type's full range either way.
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
        min_max_brightness: Sequence[float] | None = None,
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
        self._brightness = (
            None
            if min_max_brightness is None
            else _check_range(min_max_brightness, "min_max_brightness")
        )
        self._ranges = {
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
        dtypes = {data.get_type_of_item_in_path(path) for path in paths}
        for dtype in dtypes:
            if dtype not in (DataType.UINT8, DataType.FLOAT):
                raise FormatError(f"{self!r}: images must be UINT8 or FLOAT, got {dtype.name}")
        if self._brightness is not None and len(dtypes) > 1:
            raise FormatError(
                f"{self!r}: min_max_brightness is in the images' own units, so all images of "
                "the name must have one type (UINT8 or FLOAT), got both"
            )
        return paths

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        self._paths(data_empty)
        return data_empty

    def _brightness_range(self, dtype: DataType) -> tuple[float, float]:
        if self._brightness is not None:
            return self._brightness
        full = 255.0 if dtype == DataType.UINT8 else 1.0
        fraction = _DEFAULT_BRIGHTNESS_FRACTION * full
        return -fraction, fraction

    def _draws(self, brightness_range: tuple[float, float]) -> dict:
        """Every random number of one sample, drawn in ACCV-Lab's sequence."""
        from feedline import fn
        from feedline import math as fmath

        def uniform(low: float, high: float):
            return fn.random.uniform(range=[low, high]) if low < high else low

        probs = {**self._probs, "swap": self._prob_swap}
        decisions = {
            effect: fn.cast(
                fn.random.uniform(range=[0.0, 1.0]) < probs[effect], dtype=DataType.FLOAT
            )
            for effect in (*_DECISION_ORDER, "swap")
        }
        contrast_first = fmath.floor(fn.random.uniform(range=[0.0, 2.0])) == 1.0
        ranges = {**self._ranges, "brightness": brightness_range}
        values = {effect: uniform(*ranges[effect]) for effect in _VALUE_ORDER}
        order = fmath.floor(fn.random.uniform(range=[0.0, 6.0]))
        chosen = {
            effect: _NEUTRAL[effect] + decisions[effect] * (values[effect] - _NEUTRAL[effect])
            for effect in _VALUE_ORDER
        }
        contrast_first = fn.cast(contrast_first, dtype=DataType.FLOAT)
        chosen["contrast_before"] = 1.0 + contrast_first * (chosen["contrast"] - 1.0)
        chosen["contrast_after"] = 1.0 + (1.0 - contrast_first) * (chosen["contrast"] - 1.0)
        chosen["order"] = fn.cast(decisions["swap"] * fmath.min(order, 5.0), dtype=DataType.INT32)
        return chosen

    def _distort(self, image, draws: dict, scale: float):
        from feedline import fn
        from feedline import math as fmath

        image = fn.cast(image, dtype=DataType.FLOAT)
        if scale != 1.0:
            image = image * (1.0 / scale)
        image = fmath.clamp(image + draws["brightness"] * (1.0 / scale), 0.0, 1.0)
        image = fmath.clamp(image * draws["contrast_before"], 0.0, 1.0)
        image = fn.saturation(
            image, saturation=draws["saturation"], image_type=self._image_type, dtype=DataType.FLOAT
        )
        image = fn.hue(image, hue=draws["hue"], image_type=self._image_type, dtype=DataType.FLOAT)
        image = fmath.clamp(image * draws["contrast_after"], 0.0, 1.0)
        image = fn.python_function(image, draws["order"], function=_swap_channels)
        if scale != 1.0:
            image = fn.cast(fmath.clamp(image * scale, 0.0, scale), dtype=DataType.UINT8)
        return image

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        paths = self._paths(data)
        dtype = data.get_type_of_item_in_path(paths[0])
        draws = self._draws(self._brightness_range(dtype))
        to_gpu = self._on_gpu and pipeline_has_gpu()
        for path in paths:
            image = data.get_item_in_path(path)
            scale = 255.0 if data.get_type_of_item_in_path(path) == DataType.UINT8 else 1.0
            if to_gpu:
                image = image.gpu()
            data.set_item_in_path(path, self._distort(image, draws, scale))
        return data

    def __repr__(self) -> str:
        return f"PhotoMetricDistorter({self._name!r})"
