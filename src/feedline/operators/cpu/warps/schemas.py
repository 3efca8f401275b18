"""Family ``warps``: schemas and registration of ``experimental.warp_perspective`` and
``experimental.remap``, with DALI's arguments.

Kernels (imported on first use): :mod:`.perspective` and :mod:`.remap`; both run OpenCV.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.types import InterpType
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["KERNELS", "REMAP", "SCHEMAS", "WARP_PERSPECTIVE", "feedline_register_operators"]

_PKG = "feedline.operators.cpu.warps"
_ORIGIN = ArgSpec("pixel_origin", "str", "corner", "Where (0, 0) is: 'corner' (the top-left "
                  "corner of the top-left pixel) or 'center' (its centre, as OpenCV).",
                  choices=("corner", "center"))  # fmt: skip

WARP_PERSPECTIVE = OpSchema(
    "experimental.warp_perspective",
    """Apply a perspective transform (a 3x3 homography) to images.

    With ``inverse_map`` (the default) the matrix maps output coordinates to input
    coordinates, otherwise input to output (OpenCV's ``warpPerspective`` with and without
    ``WARP_INVERSE_MAP``, which DALI's CPU operator runs). The matrix is the ``matrix``
    argument (9 values, row by row) or a second input of 3x3 float32 matrices, not both.
    ``pixel_origin="corner"`` (the default) puts (0, 0) at the top-left corner of the image;
    ``"center"`` at the centre of the top-left pixel, as OpenCV. ``size`` (height, width) sets
    the output size (default: the input's). Channels must be last (at most 4). Types: uint8,
    int16, uint16, float32.""",
    inputs=(
        InputSpec("input", "Images (HW, HWC) or sequences (FHWC).",
                  layouts=("HW", "HWC", "FHWC", "CHW", "FCHW")),
        InputSpec("matrix_input", "3x3 float32 matrices, one per sample.", optional=True),
    ),
    args=(
        ArgSpec("border_mode", "str", "constant", "Pixels outside the input: constant, "
                "replicate, reflect, reflect_101 or wrap.",
                choices=("constant", "replicate", "reflect", "reflect_101", "wrap")),
        ArgSpec("fill_value", "float_vec", (), "With border_mode='constant': one value, or one "
                "per channel (default 0)."),
        ArgSpec("interp_type", "interp", InterpType.INTERP_LINEAR, "INTERP_NN, INTERP_LINEAR or "
                "INTERP_CUBIC."),
        ArgSpec("inverse_map", "bool", True, "The matrix maps output to input coordinates."),
        ArgSpec("matrix", "float_vec", (), "The 3x3 matrix, row by row (9 values).", tensor=True),
        _ORIGIN,
        ArgSpec("size", "float_vec", (), "Output (height, width), rounded; default: the input's.",
                tensor=True),
    ),
)  # fmt: skip

REMAP = OpSchema(
    "experimental.remap",
    """Move pixels by per-pixel maps: ``output(x, y) = input(mapx(x, y), mapy(x, y))``.

    The output has the maps' height and width and the input's channels and type. Sources
    outside the input give 0 (a constant border, as DALI). With ``pixel_origin="corner"`` (the
    default) the maps' coordinates put (0, 0) at the top-left corner of the image; with
    ``"center"`` at the centre of the top-left pixel, as OpenCV's ``remap``. DALI has this
    operator on the GPU only; here it runs on the CPU (OpenCV).""",
    inputs=(
        InputSpec("input", "1- or 3-channel HWC images, or FHWC sequences.",
                  layouts=("HWC", "FHWC")),
        InputSpec("mapx", "float32 x source coordinates (HW, HWC with 1 channel, or per frame)."),
        InputSpec("mapy", "float32 y source coordinates (same shape as mapx)."),
    ),
    args=(
        ArgSpec("interp", "interp", InterpType.INTERP_LINEAR, "INTERP_NN, INTERP_LINEAR or "
                "INTERP_CUBIC."),
        _ORIGIN,
    ),
)  # fmt: skip

SCHEMAS = (WARP_PERSPECTIVE, REMAP)
KERNELS = {
    "experimental.warp_perspective": f"{_PKG}.perspective:WarpPerspectiveKernel",
    "experimental.remap": f"{_PKG}.remap:RemapKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the warp operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
