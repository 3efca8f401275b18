"""Family ``filters``: schemas and registration of ``filter`` (and its legacy alias
``experimental.filter``), ``laplacian``, ``experimental.median_blur``, ``experimental.erode`` and
``experimental.dilate``, with DALI's arguments.

Kernels (imported on first use): :mod:`.convolution` and :mod:`.morphology`; both run OpenCV.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "DILATE",
    "ERODE",
    "EXPERIMENTAL_FILTER",
    "FILTER",
    "KERNELS",
    "LAPLACIAN",
    "MEDIAN_BLUR",
    "SCHEMAS",
    "feedline_register_operators",
]

_PKG = "feedline.operators.cpu.filters"
_IMAGE_LAYOUTS = ("HW", "HWC", "FHWC", "CHW", "FCHW")

FILTER = OpSchema(
    "filter",
    """Convolve images with a filter (as a correlation: the filter is not flipped).

    The output at ``(y, x)`` is the sum of ``filter[i, j] * input[y - a + i, x - b + j]`` for an
    anchor ``(a, b)``, computed in float32. ``border`` says what lies outside the image:
    ``reflect_101`` (``dcb|abcd|cba``), ``reflect_1001`` (``cba|abcd|dcb``), ``wrap``
    (``bcd|abcd|abc``), ``clamp`` (``aaa|abcd|ddd``) or ``constant`` (the ``fill_value`` input,
    0 without it). ``mode="valid"`` keeps only the positions where the filter lies inside the
    image (the output shrinks by the filter's extent minus one). Sequences (``F…`` layouts)
    take one filter for every frame or one per frame (a ``(F, r, s)`` filter). Integer outputs
    are rounded to nearest (halves to even) and saturated. Types: uint8, int16, uint16,
    float32.""",
    inputs=(
        InputSpec("input", "Images or sequences (HW, HWC, CHW, FHW, FHWC, FCHW)."),
        InputSpec("filter", "float32 2-D filters (or one 2-D filter per frame)."),
        InputSpec(
            "fill_value",
            "Scalar of the input's type, used with border='constant'.",
            optional=True,
        ),
    ),
    args=(
        ArgSpec("anchor", "int_vec", (-1,), "Position of the filter over the input, one value per "
                "filter extent (row, column); -1: the middle (rounded down). Ignored in 'valid' "
                "mode.", tensor=True),
        ArgSpec("border", "str", "reflect_101", "Out-of-image positions: reflect_101 (also "
                "'reflect101', '101'), reflect_1001 (also 'reflect1001', '1001'), wrap, clamp or "
                "constant.",
                choices=("reflect_101", "reflect101", "101", "reflect_1001", "reflect1001",
                         "1001", "wrap", "clamp", "constant")),
        ArgSpec("dtype", "dtype", None, "Output type: the input's (default) or FLOAT."),
        ArgSpec("mode", "str", "same", "'same': output as large as the input; 'valid': only "
                "positions where the whole filter is inside.", choices=("same", "valid")),
    ),
)  # fmt: skip

EXPERIMENTAL_FILTER = replace(
    FILTER,
    name="experimental.filter",
    doc="Legacy alias of ``filter`` (DALI moved it out of ``experimental``).\n\n" + FILTER.doc,
)

LAPLACIAN = OpSchema(
    "laplacian",
    """Compute the Laplacian: the sum of the second derivatives along each spatial axis.

    Each second derivative is a separable convolution: a derivative window of ``window_size``
    taps along its own axis (``[1, -2, 1]`` convolved with binomial taps) and binomial
    smoothing windows along the other axes. Without ``smoothing_size`` the smoothing windows
    of a derivative are as long as its derivative window; a smoothing size of 1 means no
    smoothing. ``window_size`` and ``smoothing_size`` take one value or one per spatial axis
    (outermost first). Each derivative is multiplied by its ``scale``, or with
    ``normalized_kernel`` by ``2 ** (n + 2 - s)`` (``s``: the sum of its window sizes, ``n``:
    the number of spatial axes). Borders mirror without repeating the edge (reflect_101).
    Computed in float32; integer outputs are rounded (halves to even) and saturated. Channel
    (``C``) and frame (``F``) axes are not spatial; channels must be first or last; 2-D
    (images) and 3-D (volumes) data.""",
    inputs=(InputSpec("input", "Images, volumes or sequences of them."),),
    args=(
        ArgSpec("dtype", "dtype", None, "Output type: the input's (default) or FLOAT."),
        ArgSpec("normalized_kernel", "bool", False, "Scale each derivative by "
                "2 ** (n + 2 - s); not together with scale."),
        ArgSpec("scale", "float_vec", None, "Factor of each derivative: one value or one per "
                "spatial axis (1.0 when not given).", tensor=True),
        ArgSpec("smoothing_size", "int_vec", None, "Smoothing window sizes (odd, 1 to 23), one "
                "value or one per spatial axis; default: the derivative window's size.",
                tensor=True),
        ArgSpec("window_size", "int_vec", (3,), "Derivative window sizes (odd, 3 to 23), one "
                "value or one per spatial axis.", tensor=True),
    ),
)  # fmt: skip

MEDIAN_BLUR = OpSchema(
    "experimental.median_blur",
    """Replace each pixel by the median of a ``window_size`` window around it, per channel.

    Windows reaching outside the image repeat the edge pixels. DALI has this operator on the
    GPU only; here it runs on the CPU (OpenCV for square windows, NumPy otherwise). Types:
    uint8, int16, uint16, float32.""",
    inputs=(InputSpec("input", "Images in HWC or CHW layout, or sequences of them.",
                      layouts=_IMAGE_LAYOUTS),),
    args=(
        ArgSpec("window_size", "int_vec", (3, 3), "Window (height, width), odd; one value for "
                "a square window.", tensor=True),
    ),
)  # fmt: skip

_MORPHOLOGY_ARGS = (
    ArgSpec("anchor", "int_vec", (-1, -1), "Anchor (x, y) of the structuring element; -1: its "
            "centre.", tensor=True),
    ArgSpec("border_mode", "str", "constant", "Pixels outside the image: constant (never "
            "chosen by the minimum or maximum), replicate, reflect, reflect_101 or wrap.",
            choices=("constant", "replicate", "reflect", "reflect_101", "wrap")),
    ArgSpec("iterations", "int", 1, "Number of times the operation is applied (>= 1)."),
    ArgSpec("mask_size", "int_vec", (3, 3), "Size (width, height) of the rectangular "
            "structuring element.", tensor=True),
)  # fmt: skip

ERODE = OpSchema(
    "experimental.erode",
    """Erode images: each pixel becomes the minimum over the structuring element around it.

    The element is a ``mask_size`` rectangle placed at ``anchor``; ``iterations`` repeats the
    operation. DALI has this operator on the GPU only; here it runs on the CPU (OpenCV).""",
    inputs=(InputSpec("input", "Images in HWC or CHW layout, or sequences of them.",
                      layouts=_IMAGE_LAYOUTS),),
    args=_MORPHOLOGY_ARGS,
)  # fmt: skip

DILATE = OpSchema(
    "experimental.dilate",
    """Dilate images: each pixel becomes the maximum over the structuring element around it.

    The element is a ``mask_size`` rectangle placed at ``anchor``; ``iterations`` repeats the
    operation. DALI has this operator on the GPU only; here it runs on the CPU (OpenCV).""",
    inputs=(InputSpec("input", "Images in HWC or CHW layout, or sequences of them.",
                      layouts=_IMAGE_LAYOUTS),),
    args=_MORPHOLOGY_ARGS,
)  # fmt: skip

SCHEMAS = (FILTER, EXPERIMENTAL_FILTER, LAPLACIAN, MEDIAN_BLUR, ERODE, DILATE)
KERNELS = {
    "filter": f"{_PKG}.convolution:FilterKernel",
    "experimental.filter": f"{_PKG}.convolution:FilterKernel",
    "laplacian": f"{_PKG}.convolution:LaplacianKernel",
    "experimental.median_blur": f"{_PKG}.morphology:MedianBlurKernel",
    "experimental.erode": f"{_PKG}.morphology:ErodeKernel",
    "experimental.dilate": f"{_PKG}.morphology:DilateKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the filter operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
