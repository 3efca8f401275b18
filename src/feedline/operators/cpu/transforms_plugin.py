"""Plugin registering the geometry and colour operators.

``flip``, ``rotate``, ``warp_affine``, ``transpose``, ``pad``, ``paste``, ``slice``,
``normalize``, ``brightness``, ``contrast``, ``brightness_contrast``, ``hue``, ``saturation``,
``hsv``, ``color_twist``, ``color_space_conversion`` and ``noise.gaussian``. Argument names and
defaults follow DALI; kernels are ``"module:attr"`` strings, imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType, ImageType, InterpType

OUT_OF_BOUNDS_POLICIES = (
    "error",
    "pad",
    "constant",
    "edge",
    "clamp",
    "reflect",
    "reflect_1001",
    "reflect_101",
    "wrap",
    "trim_to_shape",
)
"""``slice``'s ways of handling a window outside the input."""

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["KERNELS", "SCHEMAS", "feedline_register_operators"]

_CPU = "feedline.operators.cpu"
_FLIP_LAYOUTS = ("FDHWC", "FHWC", "DHWC", "HWC", "FCDHW", "FCHW", "CDHW", "CHW", "HW")
_WARP_LAYOUTS = ("HWC", "FHWC", "HW", "CHW")
_OUTPUT_DTYPE = {"output_dtype": "dtype"}


def _dtype(doc: str = "Output data type; default: the input's.", default: object = None) -> ArgSpec:
    return ArgSpec("dtype", "dtype", default, doc)


def _image(doc: str, layouts: tuple[str, ...] | None = None) -> tuple[InputSpec, ...]:
    return (InputSpec("input", doc, layouts=layouts),)


_GEOMETRY_NOTE = (
    "Coordinates: ``(0, 0)`` is the top-left corner of the first pixel, pixel centres are at "
    "``+0.5``. Points outside the input take ``fill_value`` or, without it, the nearest border "
    "pixel. Only ``INTERP_NN`` and ``INTERP_LINEAR`` are supported (as in DALI). Inputs: "
    "uint8, int16, int32 or float32; integer outputs are rounded and saturated."
)
_WARP_ARGS = (
    ArgSpec(
        "size",
        "float_vec",
        None,
        "Output ``(height, width)`` in pixels, rounded to the nearest integer.",
        tensor=True,
    ),
    ArgSpec("fill_value", "float", None, "Value outside the source; default: clamp to border."),
    ArgSpec("interp_type", "interp", InterpType.INTERP_LINEAR, "INTERP_NN or INTERP_LINEAR."),
    _dtype(),
)

FLIP = OpSchema(
    name="flip",
    doc=(
        "Flips images, sequences and volumes horizontally (W), vertically (H) and/or along "
        "depth (D).\n\nAny non-zero value flips. Data without a layout is taken as HW/HWC/"
        "FHWC/FDHWC by its number of dimensions (DALI assumes HWC). ``HW`` is accepted too."
    ),
    inputs=_image("Images of any type.", _FLIP_LAYOUTS),
    args=(
        ArgSpec("horizontal", "int", 1, "Flip the horizontal dimension.", tensor=True),
        ArgSpec("vertical", "int", 0, "Flip the vertical dimension.", tensor=True),
        ArgSpec("depthwise", "int", 0, "Flip the depth dimension.", tensor=True),
    ),
)

ROTATE = OpSchema(
    name="rotate",
    doc=(
        "Rotates images by ``angle`` degrees, counter-clockwise on screen (y points down).\n\n"
        "Without ``size`` or ``keep_size`` the canvas is the rotated bounding box rounded up, "
        "each extent grown by one pixel where needed to keep the parity of the input extent it "
        "is mostly aligned with (as DALI). The canvas centre maps to the image centre. "
        + _GEOMETRY_NOTE
    ),
    inputs=_image("2-D images or sequences.", _WARP_LAYOUTS),
    args=(
        ArgSpec("angle", "float", REQUIRED, "Rotation angle in degrees.", tensor=True),
        ArgSpec("axis", "float_vec", None, "3-D rotation axis (volumes are not supported).", True),
        ArgSpec("keep_size", "bool", False, "Keep the input size (when ``size`` is not given)."),
        *_WARP_ARGS,
    ),
    deprecated=_OUTPUT_DTYPE,
)

WARP_AFFINE = OpSchema(
    name="warp_affine",
    doc=(
        "Applies an affine transform to images.\n\n``out(x, y) = in(M11 x + M12 y + M13, "
        "M21 x + M22 y + M23)`` for the destination-to-source matrix ``M`` (as OpenCV's "
        "``warpAffine`` with ``WARP_INVERSE_MAP``). With ``inverse_map=False`` the matrix maps "
        "source to "
        "destination and is inverted first. The output size defaults to the input's. "
        + _GEOMETRY_NOTE
    ),
    inputs=(
        InputSpec("data", "Images or sequences to warp.", layouts=_WARP_LAYOUTS),
        InputSpec("mtx", "Per-sample 2x3 matrices instead of ``matrix``.", optional=True),
    ),
    args=(
        ArgSpec(
            "matrix",
            "float_vec",
            None,
            "``(M11, M12, M13, M21, M22, M23)``; or give the second input.",
            tensor=True,
        ),
        ArgSpec(
            "inverse_map",
            "bool",
            True,
            "True: ``matrix`` maps destination to source (DALI's default); False: the inverse.",
        ),
        *_WARP_ARGS,
    ),
    deprecated=_OUTPUT_DTYPE,
)

TRANSPOSE = OpSchema(
    name="transpose",
    doc=(
        "Reorders dimensions: output dimension ``i`` is input dimension ``perm[i]``.\n\n"
        "The output layout is ``output_layout`` if given, else the permuted input layout "
        "(``transpose_layout=True``) or the input layout unchanged."
    ),
    inputs=(InputSpec("input", "Data of any type and dimensionality."),),
    args=(
        ArgSpec("perm", "int_vec", None, "Permutation of the dimensions; default: reversed."),
        ArgSpec("output_layout", "layout", None, "Explicit output layout."),
        ArgSpec("transpose_layout", "bool", True, "Permute the layout's axis names too."),
    ),
)

PAD = OpSchema(
    name="pad",
    doc=(
        "Pads the samples of a batch at the end of the chosen axes with ``fill_value``.\n\n"
        "Each axis grows to the largest extent in the batch or, where ``shape`` gives a "
        "non-negative extent, to ``max(shape, own extent)``; then up to a multiple of "
        "``align``. A single ``shape``/``align`` value applies to every padded axis. "
        "``fill_value`` must fit the data type (non-integers are truncated for integer data). "
        "``axes`` is a constant (DALI also accepts it per sample)."
    ),
    inputs=(InputSpec("input", "Data of any type."),),
    args=(
        ArgSpec("fill_value", "float", 0.0, "The padding value.", tensor=True),
        ArgSpec("axes", "int_vec", None, "Axes to pad (negative counts from the back); all."),
        ArgSpec("axis_names", "layout", None, "Axes to pad by layout name."),
        ArgSpec("align", "int_vec", None, "Extents become multiples of these.", tensor=True),
        ArgSpec("shape", "int_vec", None, "Minimum extents; -1 = batch maximum.", tensor=True),
    ),
)

PASTE = OpSchema(
    name="paste",
    doc=(
        "Pastes uint8 HWC images onto a larger canvas filled with ``fill_value``.\n\n"
        "Canvas extent: ``max(extent * ratio, min_canvas_size)`` truncated; the image's corner "
        "is at ``paste_x/y * (canvas - extent)`` truncated (0 = left/top, 1 = right/bottom)."
    ),
    inputs=_image("uint8 HWC images.", ("HWC",)),
    args=(
        ArgSpec("fill_value", "int_vec", REQUIRED, "Canvas colour: 1 or n_channels values."),
        ArgSpec("min_canvas_size", "float", 0.0, "Minimum canvas extent.", tensor=True),
        ArgSpec("n_channels", "int", 3, "Number of channels of the images."),
        ArgSpec("paste_x", "float", 0.5, "Horizontal position in [0, 1].", tensor=True),
        ArgSpec("paste_y", "float", 0.5, "Vertical position in [0, 1].", tensor=True),
        ArgSpec("ratio", "float", REQUIRED, "Canvas size / input size (>= 1).", tensor=True),
    ),
)

_SLICE_COORDS = (
    ("start", "int_vec", "Start coordinates (absolute)."),
    ("rel_start", "float_vec", "Start coordinates (relative, [0, 1])."),
    ("end", "int_vec", "End coordinates (absolute)."),
    ("rel_end", "float_vec", "End coordinates (relative)."),
    ("shape", "int_vec", "Shape of the slice (absolute)."),
    ("rel_shape", "float_vec", "Shape of the slice (relative)."),
)

SLICE = OpSchema(
    name="slice",
    doc=(
        "Extracts a window (slice) of the data.\n\n"
        "Coordinates are listed for ``axes`` (default ``(1, 0)``: x then y) or ``axis_names`` "
        "(default ``'WH'`` when the layout has W and H). Give start and end or shape through "
        "the named arguments, or the ``anchor`` and ``shape`` inputs (floats are relative "
        "unless ``normalized_anchor/shape=False``; integers are absolute). Relative windows "
        "have their start and end rounded to nearest. ``out_of_bounds_policy``: ``error``, "
        "``pad``/``constant`` (``fill_values``, one or per channel), ``edge``/``clamp``, "
        "``reflect``/``reflect_1001``, ``reflect_101``, ``wrap``, ``trim_to_shape``."
    ),
    inputs=(
        InputSpec("data", "Data to slice."),
        InputSpec("anchor", "1-D window start per sample.", optional=True),
        InputSpec("window_shape", "1-D window shape per sample.", optional=True),
    ),
    args=(
        ArgSpec("axes", "int_vec", None, "Axes of the coordinates; default (1, 0).", tensor=True),
        ArgSpec("axis_names", "layout", None, "Axes of the coordinates by layout name."),
        *(ArgSpec(name, kind, None, doc, tensor=True) for name, kind, doc in _SLICE_COORDS),
        ArgSpec("normalized_anchor", "bool", True, "Float anchor input is relative."),
        ArgSpec("normalized_shape", "bool", True, "Float shape input is relative."),
        ArgSpec("fill_values", "float_vec", (0.0,), "Padding values (one or per channel)."),
        ArgSpec(
            "out_of_bounds_policy",
            "str",
            "error",
            "What to do outside the input.",
            choices=OUT_OF_BOUNDS_POLICIES,
        ),
        _dtype("Output type: the input's, FLOAT, FLOAT16 or UINT8."),
    ),
    deprecated=_OUTPUT_DTYPE,
)

NORMALIZE = OpSchema(
    name="normalize",
    doc=(
        "Normalizes: ``out = scale * (in - mean) / stddev + shift``.\n\n"
        "``mean``/``stddev`` are computed over ``axes``/``axis_names`` (default: all) per "
        "sample, or over the batch with ``batch=True``, unless given (scalars, or per-sample "
        "tensors broadcastable to the input with extent 1 on reduced axes). ``epsilon`` is "
        "added to the variance, also for a given ``stddev`` (as DALI 2.4 does); zero variance "
        "gives ``shift``. Inputs: (u)int8/16/32 or float32."
    ),
    inputs=(InputSpec("input", "Data to normalize."),),
    args=(
        ArgSpec("mean", "any", None, "Mean to subtract (scalar or per-sample tensor).", True),
        ArgSpec("stddev", "any", None, "Standard deviation (scalar or per-sample tensor).", True),
        ArgSpec("axes", "int_vec", None, "Reduced axes; default: all."),
        ArgSpec("axis_names", "layout", None, "Reduced axes by layout name."),
        ArgSpec("batch", "bool", False, "Compute the statistics over the whole batch."),
        ArgSpec("ddof", "int", 0, "Delta degrees of freedom of the computed variance."),
        ArgSpec("epsilon", "float", 0.0, "Added to the variance."),
        ArgSpec("scale", "float", 1.0, "Output scale."),
        ArgSpec("shift", "float", 0.0, "Value the mean maps to."),
        _dtype("Output type (float32 or an integer type, rounded and saturated).", DataType.FLOAT),
    ),
)

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
    inputs=_image("Images (any layout)."),
    args=(_BRIGHTNESS, _SHIFT, _dtype()),
)

CONTRAST = OpSchema(
    name="contrast",
    doc=(
        "Adjusts contrast: ``out = contrast_center + contrast * (in - contrast_center)``.\n\n"
        + _BC_NOTE
    ),
    inputs=_image("Images (any layout)."),
    args=(_CONTRAST, _CENTER, _dtype()),
)

BRIGHTNESS_CONTRAST = OpSchema(
    name="brightness_contrast",
    doc=(
        "Adjusts brightness and contrast.\n\n``out = brightness_shift * range + brightness * "
        "(contrast_center + contrast * (in - contrast_center))``. " + _BC_NOTE
    ),
    inputs=_image("Images (any layout)."),
    args=(_BRIGHTNESS, _SHIFT, _CONTRAST, _CENTER, _dtype()),
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
_TWIST_INPUT = _image("3-channel images.", ("HWC", "FHWC", "DHWC", "CHW", "FCHW"))

HUE = OpSchema(
    name="hue",
    doc="Changes the hue of images.\n\n" + _TWIST_NOTE,
    inputs=_TWIST_INPUT,
    args=(_HUE, _IMAGE_TYPE, _dtype()),
)

SATURATION = OpSchema(
    name="saturation",
    doc="Changes the saturation of images.\n\n" + _TWIST_NOTE,
    inputs=_TWIST_INPUT,
    args=(_SATURATION, _IMAGE_TYPE, _dtype()),
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
        _dtype("Output data type.", DataType.UINT8),
    ),
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
        _dtype(),
    ),
)

COLOR_SPACE_CONVERSION = OpSchema(
    name="color_space_conversion",
    doc=(
        "Converts uint8 images between RGB, BGR, GRAY and YCbCr (BT.601, studio swing).\n\n"
        "GRAY from RGB is DALI's fixed-point luma (bit-exact); YCbCr is rounded to nearest. "
        "The channel axis is ``C`` of the layout or the last; a conversion to the same space "
        "copies."
    ),
    inputs=_image("uint8 images.", ("HWC", "FHWC", "DHWC", "CHW", "FCHW")),
    args=(
        ArgSpec("image_type", "image_type", REQUIRED, "Colour space of the input."),
        ArgSpec("output_type", "image_type", REQUIRED, "Colour space of the output."),
    ),
)

NOISE_GAUSSIAN = OpSchema(
    name="noise.gaussian",
    doc=(
        "Adds Gaussian noise; the output has the input's shape, type and layout.\n\n"
        "Noise comes from each sample's generator (reproducible for any thread count); integer "
        "outputs are rounded and saturated. Types: (u)int8…(u)int64 and float32."
    ),
    inputs=(InputSpec("input", "Data of any layout."),),
    args=(
        ArgSpec("mean", "float", 0.0, "Mean of the noise.", tensor=True),
        ArgSpec("stddev", "float", 1.0, "Standard deviation of the noise (>= 0).", tensor=True),
    ),
)

SCHEMAS = (
    FLIP,
    ROTATE,
    WARP_AFFINE,
    TRANSPOSE,
    PAD,
    PASTE,
    SLICE,
    NORMALIZE,
    BRIGHTNESS,
    CONTRAST,
    BRIGHTNESS_CONTRAST,
    HUE,
    SATURATION,
    HSV,
    COLOR_TWIST,
    COLOR_SPACE_CONVERSION,
    NOISE_GAUSSIAN,
)

_BC = f"{_CPU}.color:BrightnessContrastKernel"
_TWIST = f"{_CPU}.color:ColorTwistKernel"
KERNELS = {
    "flip": f"{_CPU}.flip:FlipKernel",
    "rotate": f"{_CPU}.warp:RotateKernel",
    "warp_affine": f"{_CPU}.warp:WarpAffineKernel",
    "transpose": f"{_CPU}.layout_ops:TransposeKernel",
    "pad": f"{_CPU}.layout_ops:PadKernel",
    "paste": f"{_CPU}.layout_ops:PasteKernel",
    "slice": f"{_CPU}.slice:SliceKernel",
    "normalize": f"{_CPU}.normalize:NormalizeKernel",
    "brightness": _BC,
    "contrast": _BC,
    "brightness_contrast": _BC,
    "hue": _TWIST,
    "saturation": _TWIST,
    "hsv": _TWIST,
    "color_twist": _TWIST,
    "color_space_conversion": f"{_CPU}.color_space:ColorSpaceConversionKernel",
    "noise.gaussian": f"{_CPU}.noise:GaussianNoiseKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the geometry and colour operators with their CPU kernels."""
    for schema in SCHEMAS:
        registry.add_operator(schema, kernels={"cpu": KERNELS[schema.name]})
