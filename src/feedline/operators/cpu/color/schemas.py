"""Family ``color``: schemas and registration of the colour operators.

``brightness``, ``contrast``, ``brightness_contrast``, ``hue``, ``saturation``, ``hsv``,
``color_twist`` and ``color_space_conversion``. Argument names and defaults follow DALI.
Kernels (imported on first use): :mod:`.adjust` (brightness/contrast and the YIQ colour twist)
and :mod:`.color_space`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, OpSchema
from feedline.core.types import DataType, ImageType
from feedline.operators.cpu.common.schemas import dtype_arg, image_input, register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "BRIGHTNESS",
    "BRIGHTNESS_CONTRAST",
    "COLOR_SPACE_CONVERSION",
    "COLOR_TWIST",
    "CONTRAST",
    "HSV",
    "HUE",
    "KERNELS",
    "SATURATION",
    "SCHEMAS",
    "feedline_register_operators",
]

_BC_NOTE = (
    "``range`` is 1 for float outputs and the type's maximum for integers. Elementwise, so any "
    "layout is accepted. Types: uint8, int16, int32, float32 (input and ``dtype``)."
)
_BRIGHTNESS = ArgSpec("brightness", "float", 1.0, "Brightness multiplier.", tensor=True)
_SHIFT = ArgSpec(
    "brightness_shift", "float", 0.0, "Shift, in units of the output range.", tensor=True
)
_CONTRAST = ArgSpec("contrast", "float", 1.0, "Contrast multiplier (0 = grey).", tensor=True)
_CENTER = ArgSpec(
    "contrast_center",
    "float",
    None,
    "Level unchanged by contrast; default half the input type's range (0.5, 128…).",
    tensor=True,
)

BRIGHTNESS = OpSchema(
    name="brightness",
    doc="Adjusts brightness: ``out = brightness_shift * range + brightness * in``.\n\n" + _BC_NOTE,
    inputs=image_input("Images (any layout)."),
    args=(_BRIGHTNESS, _SHIFT, dtype_arg()),
    random=False,
)

CONTRAST = OpSchema(
    name="contrast",
    doc=(
        "Adjusts contrast: ``out = contrast_center + contrast * (in - contrast_center)``.\n\n"
        + _BC_NOTE
    ),
    inputs=image_input("Images (any layout)."),
    args=(_CONTRAST, _CENTER, dtype_arg()),
    random=False,
)

BRIGHTNESS_CONTRAST = OpSchema(
    name="brightness_contrast",
    doc=(
        "Adjusts brightness and contrast.\n\n``out = brightness_shift * range + brightness * "
        "(contrast_center + contrast * (in - contrast_center))``. " + _BC_NOTE
    ),
    inputs=image_input("Images (any layout)."),
    args=(_BRIGHTNESS, _SHIFT, _CONTRAST, _CENTER, dtype_arg()),
    random=False,
)

_TWIST_NOTE = (
    "Linear in RGB through YIQ as DALI: hue rotates the I/Q plane, saturation scales I and Q. "
    "3-channel images; the channel axis is ``C`` of the layout (HWC, CHW, FHWC…) or the last. "
    "Types: uint8, int16, int32, float16, float32. ``image_type`` RGB or BGR (BGR is handled "
    "as such; DALI ignores it)."
)
_HUE = ArgSpec("hue", "float", 0.0, "Hue change in degrees.", tensor=True)
_SATURATION = ArgSpec(
    "saturation", "float", 1.0, "Saturation factor (0 = grey, >= 0).", tensor=True
)
_IMAGE_TYPE = ArgSpec("image_type", "image_type", ImageType.RGB, "Colour space: RGB or BGR.")
_TWIST_INPUT = image_input("3-channel images.", ("HWC", "FHWC", "DHWC", "CHW", "FCHW"))

HUE = OpSchema(
    name="hue",
    doc="Changes the hue of images.\n\n" + _TWIST_NOTE,
    inputs=_TWIST_INPUT,
    args=(_HUE, _IMAGE_TYPE, dtype_arg()),
    random=False,
)

SATURATION = OpSchema(
    name="saturation",
    doc="Changes the saturation of images.\n\n" + _TWIST_NOTE,
    inputs=_TWIST_INPUT,
    args=(_SATURATION, _IMAGE_TYPE, dtype_arg()),
    random=False,
)

HSV = OpSchema(
    name="hsv",
    doc=(
        "Adjusts hue (additive, degrees), saturation and value (multiplicative) of RGB images."
        "\n\n" + _TWIST_NOTE + " As in DALI 2.4, ``dtype`` defaults to UINT8 whatever the input."
    ),
    inputs=_TWIST_INPUT,
    args=(
        _HUE,
        ArgSpec("saturation", "float", 1.0, "Saturation multiplier.", tensor=True),
        ArgSpec("value", "float", 1.0, "Value (brightness) multiplier.", tensor=True),
        dtype_arg("Output data type.", DataType.UINT8),
    ),
    random=False,
)

COLOR_TWIST = OpSchema(
    name="color_twist",
    doc=(
        "Adjusts hue, saturation, brightness and contrast of images.\n\n``out = brightness * "
        "(contrast * twist(in) + half * (1 - contrast))`` with ``half`` 0.5 for float inputs, "
        "128 for integers. " + _TWIST_NOTE
    ),
    inputs=_TWIST_INPUT,
    args=(
        ArgSpec("brightness", "float", 1.0, "Brightness factor (>= 0).", tensor=True),
        ArgSpec("contrast", "float", 1.0, "Contrast factor (>= 0, 0 = grey).", tensor=True),
        _HUE,
        _SATURATION,
        _IMAGE_TYPE,
        dtype_arg(),
    ),
    random=False,
)

COLOR_SPACE_CONVERSION = OpSchema(
    name="color_space_conversion",
    doc=(
        "Converts uint8 images between RGB, BGR, GRAY and YCbCr (BT.601, studio swing).\n\n"
        "GRAY from RGB is DALI's fixed-point luma (bit-exact); YCbCr is rounded to nearest. "
        "The channel axis is ``C`` of the layout or the last; a conversion to the same space "
        "copies."
    ),
    inputs=image_input("uint8 images.", ("HWC", "FHWC", "DHWC", "CHW", "FCHW")),
    args=(
        ArgSpec("image_type", "image_type", REQUIRED, "Colour space of the input."),
        ArgSpec("output_type", "image_type", REQUIRED, "Colour space of the output."),
    ),
    random=False,
)

SCHEMAS = (
    BRIGHTNESS,
    CONTRAST,
    BRIGHTNESS_CONTRAST,
    HUE,
    SATURATION,
    HSV,
    COLOR_TWIST,
    COLOR_SPACE_CONVERSION,
)

_KERNELS = "feedline.operators.cpu.color"
_BC = f"{_KERNELS}.adjust:BrightnessContrastKernel"
_TWIST = f"{_KERNELS}.adjust:ColorTwistKernel"
KERNELS = {
    "brightness": _BC,
    "contrast": _BC,
    "brightness_contrast": _BC,
    "hue": _TWIST,
    "saturation": _TWIST,
    "hsv": _TWIST,
    "color_twist": _TWIST,
    "color_space_conversion": f"{_KERNELS}.color_space:ColorSpaceConversionKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the colour operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
