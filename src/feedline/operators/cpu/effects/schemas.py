"""Family ``effects``: schemas and registration of the image-effect operators (``gaussian_blur``,
``erase``, ``jitter``, ``grid_mask``), with DALI's arguments."""

from __future__ import annotations

from feedline.core.hookspecs import hookimpl
from feedline.core.registry import Registry
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.types import InterpType
from feedline.operators.cpu.common.schemas import register_cpu_operators

_PKG = "feedline.operators.cpu.effects"

GAUSSIAN_BLUR = OpSchema(
    "gaussian_blur",
    """Blur the input with a Gaussian kernel along its spatial axes.

    With only ``sigma``, the window is ``2 * ceil(3 * sigma) + 1`` taps; with only
    ``window_size``, ``sigma = ((window_size - 1) / 2 - 1) * 0.3 + 0.8``. Both accept one value
    for all spatial axes or one per axis, outermost first. Channel (``C``) and frame (``F``)
    axes are not blurred; channels must be first or last. Borders mirror without repeating the
    edge (``dcb|abcd|cba``). Data without a layout is blurred along every axis (1 to 3 of them),
    as in DALI. Integer outputs are rounded and saturated.""",
    inputs=(InputSpec("input", "Images, volumes or sequences (numeric types)."),),
    args=(
        ArgSpec("sigma", "float_vec", (0.0,), "Standard deviation of the kernel.", tensor=True),
        ArgSpec("window_size", "int_vec", (0,), "Diameter of the kernel (odd).", tensor=True),
        ArgSpec("dtype", "dtype", None, "Output type: the input's (default) or FLOAT."),
    ),
    random=False,
)

ERASE = OpSchema(
    "erase",
    """Erase (fill) one or more regions of the input.

    ``anchor`` and ``shape`` hold one value per selected axis for each region, one region after
    the other (``anchor=(y0, x0, y1, x1)`` for ``axis_names="HW"``). Selected axes come from
    ``axes`` or ``axis_names`` (not both); with neither, every axis but ``C``. Other axes are
    erased whole. Region bounds are ``int(anchor)`` and ``int(anchor + shape)`` (truncated, as
    in DALI), clipped to the sample. Without ``anchor`` regions start at 0.""",
    inputs=(InputSpec("input", "Data to erase regions of."),),
    args=(
        ArgSpec("anchor", "float_vec", (), "Region starts (or centres, see centered_anchor).",
                tensor=True),
        ArgSpec("shape", "float_vec", (), "Region extents.", tensor=True),
        ArgSpec("axes", "int_vec", None, "Indices of the axes anchor and shape refer to. "
                "Mutually exclusive with axis_names."),
        ArgSpec("axis_names", "layout", None, "Layout names of the axes anchor and shape refer "
                "to. Without axes or axis_names: every axis except C."),
        ArgSpec("centered_anchor", "bool", False, "Anchors are region centres."),
        ArgSpec("fill_value", "float_vec", (0.0,), "The fill: one value, or one per channel "
                "(the layout needs a C axis).", tensor=True),
        ArgSpec("normalized", "bool", None, "Both anchor and shape are fractions of the extents "
                "(default False). Mutually exclusive with normalized_anchor/normalized_shape."),
        ArgSpec("normalized_anchor", "bool", None, "The anchor is a fraction of the extents."),
        ArgSpec("normalized_shape", "bool", None, "The shape is a fraction of the extents."),
    ),
    random=False,
)  # fmt: skip

JITTER = OpSchema(
    "jitter",
    """Move every pixel by a random whole-pixel offset in ``[-nDegree/2, nDegree/2)``.

    Each offset component is ``randint(nDegree) - nDegree // 2``, drawn per pixel from the
    sample's generator (reproducible for any number of threads); sources outside the image give
    ``fill_value``. DALI has this operator on the GPU only; here it runs on the CPU.""",
    inputs=(InputSpec("input", "HWC or HW images.", layouts=("HWC", "HW")),),
    args=(
        ArgSpec("fill_value", "float", 0.0, "Value of pixels whose source is outside the image."),
        ArgSpec("interp_type", "interp", InterpType.INTERP_NN, "Interpolation type; offsets are "
                "whole pixels, so every type gives the nearest-neighbour result."),
        ArgSpec("mask", "int", 1, "0: leave the sample unchanged; 1: jitter it.", tensor=True),
        ArgSpec("nDegree", "int", 2, "Range of the offsets, in pixels (>= 1)."),
    ),
)  # fmt: skip

GRID_MASK = OpSchema(
    "grid_mask",
    """Zero out pixels in a grid of squares (GridMask, arXiv:2001.04086).

    The squares repeat every ``tile`` pixels in x and y, are ``ratio * tile`` wide, and the grid
    is rotated by ``angle`` radians around the origin and shifted by ``(shift_x, shift_y)``:
    pixel ``(x, y)`` is zeroed when both fractional parts of
    ``(x cos a - y sin a - shift_x) / tile`` and ``(x sin a + y cos a - shift_y) / tile`` are
    below ``ratio``.""",
    inputs=(InputSpec("input", "HWC or HW images.", layouts=("HWC", "HW")),),
    args=(
        ArgSpec("angle", "float", 0.0, "Rotation of the grid, in radians.", tensor=True),
        ArgSpec("ratio", "float", 0.5, "Black square width / tile width, in [0, 1].", tensor=True),
        ArgSpec("shift_x", "float", 0.0, "x translation, applied after rotation.", tensor=True),
        ArgSpec("shift_y", "float", 0.0, "y translation, applied after rotation.", tensor=True),
        ArgSpec("tile", "int", 100, "Grid period in pixels (square plus spacing).", tensor=True),
    ),
    random=False,
)

SCHEMAS = (GAUSSIAN_BLUR, ERASE, JITTER, GRID_MASK)
KERNELS = {
    "gaussian_blur": f"{_PKG}.blur:GaussianBlurKernel",
    "erase": f"{_PKG}.regions:EraseKernel",
    "jitter": f"{_PKG}.jitter:JitterKernel",
    "grid_mask": f"{_PKG}.regions:GridMaskKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the image-effect operators."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)


__all__ = [
    "ERASE",
    "GAUSSIAN_BLUR",
    "GRID_MASK",
    "JITTER",
    "KERNELS",
    "SCHEMAS",
    "feedline_register_operators",
]
