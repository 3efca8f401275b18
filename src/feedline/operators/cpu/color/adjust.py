"""Colour adjustments: ``brightness``, ``contrast``, ``brightness_contrast`` and the colour-twist
family ``hue``, ``saturation``, ``hsv`` and ``color_twist``.

Brightness/contrast (DALI's formula)::

    out = brightness_shift * range(out_type) + brightness * (center + contrast * (in - center))

where ``range`` is 1 for floating-point outputs and the largest value of an integer type, and the
default ``center`` is half of the input type's positive range (0.5 for floats, 128 for uint8).

The colour twist is linear in RGB. Following DALI, colours go to YIQ (``RGB2YIQ`` below and its
exact inverse), hue rotates the I/Q plane, saturation scales I and Q, value scales all three::

    M = brightness * contrast * YIQ2RGB @ Hue(hue) @ diag(1, s, s) @ (value * RGB2YIQ)
    out = M @ rgb + brightness * half * (1 - contrast)

with ``half`` 0.5 for floating-point inputs and 128 for integer ones. Integer outputs are rounded
(halves away from zero) and saturated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import ImageType
from feedline.operators.cpu.common.tensors import (
    check_dtype,
    output_dtype,
    saturate_cast,
    type_range,
)

__all__ = [
    "RGB2YIQ",
    "YIQ2RGB",
    "BrightnessContrastKernel",
    "ColorTwistKernel",
    "bc_affine",
    "bc_args",
    "brightness_contrast",
    "channel_axis",
    "color_twist",
    "twist_matrix",
    "twist_params",
]

RGB2YIQ = np.array(
    [[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]], dtype=np.float64
)
YIQ2RGB = np.linalg.inv(RGB2YIQ)

BC_TYPES = (np.uint8, np.int16, np.int32, np.float32)
TWIST_TYPES = (np.uint8, np.int16, np.int32, np.float16, np.float32)


def _positive_range(dtype: np.dtype) -> float:
    return 1.0 if dtype.kind == "f" else type_range(dtype)[1]


def _default_center(dtype: np.dtype) -> float:
    return 0.5 if dtype.kind == "f" else (type_range(dtype)[1] + 1) / 2


def bc_affine(
    in_dtype: np.dtype,
    out_type: np.dtype,
    brightness: float = 1.0,
    brightness_shift: float = 0.0,
    contrast: float = 1.0,
    contrast_center: float | None = None,
) -> tuple[np.floating, np.floating, type]:
    """``(gain, offset, work type)`` of brightness/contrast: ``out = in * gain + offset``
    computed in the work type (float64 for 32/64-bit integer inputs, else float32)."""
    center = _default_center(in_dtype) if contrast_center is None else contrast_center
    wide = in_dtype.kind in "iu" and in_dtype.itemsize >= 4
    work = np.float64 if wide else np.float32
    b, c, center_w = work(brightness), work(contrast), work(center)
    gain = b * c
    offset = work(brightness_shift) * work(_positive_range(out_type)) + b * (
        center_w - c * center_w
    )
    return gain, offset, work


def bc_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :func:`bc_affine` given an operator's (per-sample) arguments."""
    center = args.get("contrast_center")
    return {
        "brightness": _arg(args, "brightness", 1.0),
        "brightness_shift": _arg(args, "brightness_shift", 0.0),
        "contrast": _arg(args, "contrast", 1.0),
        "contrast_center": None if center is None else float(center),
    }


def brightness_contrast(
    image: np.ndarray,
    brightness: float = 1.0,
    brightness_shift: float = 0.0,
    contrast: float = 1.0,
    contrast_center: float | None = None,
    dtype: np.dtype | None = None,
) -> np.ndarray:
    """Apply DALI's brightness/contrast formula (see the module doc) to any layout."""
    out_type = np.dtype(dtype) if dtype is not None else image.dtype
    gain, offset, work = bc_affine(
        image.dtype, out_type, brightness, brightness_shift, contrast, contrast_center
    )
    if image.dtype == np.uint8:
        table = np.arange(256, dtype=work) * gain + offset
        return saturate_cast(table, out_type)[image]
    values = image.astype(work) * gain + offset
    return saturate_cast(values, out_type)


def twist_matrix(
    hue: float = 0.0,
    saturation: float = 1.0,
    value: float = 1.0,
    brightness: float = 1.0,
    contrast: float = 1.0,
) -> np.ndarray:
    """The 3x3 RGB matrix of the colour twist (hue in degrees, see the module doc)."""
    radians = math.radians(hue)
    cos, sin = math.cos(radians), math.sin(radians)
    rotate = np.array([[1.0, 0.0, 0.0], [0.0, cos, sin], [0.0, -sin, cos]])
    scale = np.diag([1.0, saturation, saturation])
    return brightness * contrast * (YIQ2RGB @ rotate @ scale @ (value * RGB2YIQ))


def channel_axis(op: str, layout: str, image: np.ndarray) -> int:
    """The channel axis of a colour image (``C`` in the layout, else the last axis).

    Raises:
        ValueError: the layout has no ``C`` axis.
    """
    if not layout:
        return image.ndim - 1
    axis = layout.find("C")
    if axis < 0:
        raise ValueError(f"{op}: layout {layout!r} has no channel axis 'C'")
    return axis


def color_twist(
    image: np.ndarray,
    matrix: np.ndarray,
    offset: float,
    axis: int = -1,
    dtype: np.dtype | None = None,
) -> np.ndarray:
    """Apply ``out = matrix @ pixel + offset`` along the 3-channel ``axis``."""
    out_type = np.dtype(dtype) if dtype is not None else image.dtype
    moved = np.moveaxis(image, axis, -1)
    work = np.float64 if image.dtype == np.int32 or out_type == np.int32 else np.float32
    values = moved.astype(work) @ matrix.T.astype(work)
    if offset:
        values += work(offset)
    return np.ascontiguousarray(np.moveaxis(saturate_cast(values, out_type), -1, axis))


def _arg(args: Mapping[str, Any], name: str, default: float) -> float:
    value = args.get(name, default)
    return default if value is None else float(value)


def _checked_output_type(
    op: str, image: np.ndarray, args: Mapping[str, Any], types: tuple[type, ...]
) -> np.dtype:
    """The output type of ``op`` on ``image`` after checking the image is of one of ``types``
    (an empty image passes through, as in DALI)."""
    check_dtype(op, image, types)
    return output_dtype(op, args.get("dtype"), image.dtype, types)


class BrightnessContrastKernel(SampleKernel):
    """``brightness``, ``contrast`` and ``brightness_contrast`` (elementwise, any layout)."""

    implied_layouts: ClassVar[Mapping[int, str]] = {3: "HWC", 4: "FHWC"}

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Adjust one sample."""
        (image,) = inputs
        op = self.ctx.schema.name
        out_type = _checked_output_type(op, image, args, BC_TYPES)
        return brightness_contrast(image, dtype=out_type, **bc_args(args))


class ColorTwistKernel(SampleKernel):
    """``hue``, ``saturation``, ``hsv`` and ``color_twist`` on 3-channel RGB or BGR images."""

    implied_layouts: ClassVar[Mapping[int, str]] = {3: "HWC", 4: "FHWC"}

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Twist the colours of one sample."""
        (image,) = inputs
        matrix, offset, axis, out_type = twist_params(
            self.ctx.schema.name, image, sample.layouts[0], args
        )
        return color_twist(image, matrix, offset, axis, out_type)


def twist_params(
    op: str, image: Any, layout: str, args: Mapping[str, Any]
) -> tuple[np.ndarray, float, int, np.dtype]:
    """``(matrix, offset, channel axis, output type)`` of the colour twist of one sample.

    Raises:
        TypeError: unsupported input or output type.
        ValueError: not 3 channels, an unsupported ``image_type``, a negative factor.
    """
    out_type = _checked_output_type(op, image, args, TWIST_TYPES)
    axis = channel_axis(op, layout, image)
    if image.shape[axis] != 3:
        raise ValueError(
            f"{op}: expected 3 colour channels, got {image.shape[axis]} "
            f"(shape {image.shape}, layout {layout!r})"
        )
    image_type = args.get("image_type", ImageType.RGB)
    if image_type not in (ImageType.RGB, ImageType.BGR):
        raise ValueError(
            f"{op}: argument 'image_type' = {ImageType(image_type).name} is not supported; "
            "expected RGB or BGR"
        )
    for name in ("saturation", "brightness", "contrast"):
        if _arg(args, name, 1.0) < 0:
            raise ValueError(f"{op}: argument {name!r} = {args[name]} must be non-negative")
    brightness = _arg(args, "brightness", 1.0)
    contrast = _arg(args, "contrast", 1.0)
    matrix = twist_matrix(
        _arg(args, "hue", 0.0),
        _arg(args, "saturation", 1.0),
        _arg(args, "value", 1.0),
        brightness,
        contrast,
    )
    if image_type == ImageType.BGR:
        matrix = matrix[::-1, ::-1]
    half = 0.5 if image.dtype.kind == "f" else 128.0
    return matrix, brightness * half * (1.0 - contrast), axis, out_type
