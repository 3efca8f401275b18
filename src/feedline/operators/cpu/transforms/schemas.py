"""Family ``transforms``: schemas and registration of DALI's ``transforms.*`` operators.

Each operator produces, per sample, an affine transform ``[M | t]`` of shape
``(ndim, ndim + 1)`` (float32, layout ``**``), or, with sequence inputs or per-frame arguments,
one per frame (``(F, ndim, ndim + 1)``, layout ``F**``). Given a transform as input, the new
transform is applied after it (or before it, with ``reverse_order``). Kernels (imported on first
use): :mod:`.kernels`, with the matrix formulas in :mod:`.matrices`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["KERNELS", "SCHEMAS", "feedline_register_operators"]

_KERNELS = "feedline.operators.cpu.transforms.kernels"

_NOTE = (
    "The output can be given to ``coord_transform`` (``MT``) and ``warp_affine`` (``matrix``) "
    "directly. Sequence inputs (layout starting with ``F``) and per-frame arguments "
    "(``fn.per_frame``) give one matrix per frame."
)
_REVERSE = ArgSpec(
    "reverse_order",
    "bool",
    False,
    "How the transform combines with the input transform: False applies this operator's "
    "transform after the input's (``T @ input``), True before it (``input @ T``). Ignored "
    "without an input.",
)
_INPUT = InputSpec(
    "input",
    "A transform to compose with: float32 ``(ndim, ndim + 1)`` matrices, or sequences of them "
    "(layout ``F**``).",
    optional=True,
)


def _center(what: str) -> ArgSpec:
    return ArgSpec(
        "center",
        "float_vec",
        None,
        f"The point that the {what} keeps fixed: ``ndim`` values (one value is used for every "
        "axis). Default: the origin.",
        tensor=True,
    )


def _transform(name: str, doc: str, *args: ArgSpec) -> OpSchema:
    return OpSchema(
        f"transforms.{name}",
        f"{doc}\n\n    {_NOTE}",
        inputs=(_INPUT,),
        args=(*args, _REVERSE),
    )


TRANSLATION = _transform(
    "translation",
    "Produce a translation affine transform matrix ``[I | offset]``.",
    ArgSpec(
        "offset",
        "float_vec",
        REQUIRED,
        "The translation vector; its length is the number of dimensions.",
        tensor=True,
    ),
)
SCALE = _transform(
    "scale",
    "Produce a scaling affine transform matrix ``diag(scale)`` about ``center``.",
    ArgSpec(
        "scale",
        "float_vec",
        REQUIRED,
        "The scale factor per dimension; its length is the number of dimensions, except that "
        "one value scales every axis of the input transform (or of ``ndim`` axes).",
        tensor=True,
    ),
    _center("scaling"),
    ArgSpec(
        "ndim",
        "int",
        None,
        "Number of dimensions when neither ``scale`` nor an input tells it (a single ``scale`` "
        "value and no input); default 1 then.",
    ),
)
ROTATION = _transform(
    "rotation",
    "Produce a rotation affine transform matrix (counter-clockwise by ``angle`` degrees).\n\n"
    "    The transform is 3-D when ``axis`` is given, 2-D otherwise.",
    ArgSpec("angle", "float", REQUIRED, "The angle, in degrees.", tensor=True),
    ArgSpec(
        "axis",
        "float_vec",
        None,
        "The axis of a 3-D rotation (3 values, not necessarily normalised, non-zero); the "
        "rotation follows the right-hand rule about it.",
        tensor=True,
    ),
    _center("rotation"),
)
SHEAR = _transform(
    "shear",
    "Produce a shear affine transform matrix.\n\n"
    "    2-D: ``[[1, shear_x], [shear_y, 1]]``; 3-D: ``[[1, sxy, sxz], [syx, 1, syz], "
    "[szx, szy, 1]]``. Exactly one of ``shear`` and ``angles`` must be given.",
    ArgSpec(
        "shear",
        "float_vec",
        None,
        "The shear factors: 2 (``shear_x, shear_y``) for 2-D, 6 (``xy, xz, yx, yz, zx, zy``) "
        "for 3-D. A factor is the offset along the first axis per unit along the second.",
        tensor=True,
    ),
    ArgSpec(
        "angles",
        "float_vec",
        None,
        "The shear angles in degrees, in the order of ``shear``; a factor is "
        "``tan(deg2rad(angle))`` (meaningful in (-90, 90)).",
        tensor=True,
    ),
    _center("shear"),
)
CROP = _transform(
    "crop",
    "Produce the affine transform that maps the box ``from_start..from_end`` onto "
    "``to_start..to_end``.\n\n"
    "    Each axis is scaled by ``(to_end - to_start) / (from_end - from_start)`` and moved so "
    "that ``from_start`` lands on ``to_start``: coordinates taken before a crop become "
    "coordinates relative to the crop. The number of dimensions is the longest of the four "
    "arguments; a single value is used for every axis.",
    ArgSpec("from_start", "float_vec", (0.0,), "The lower corner of the source box.", True),
    ArgSpec("from_end", "float_vec", (1.0,), "The upper corner of the source box.", True),
    ArgSpec("to_start", "float_vec", (0.0,), "The lower corner of the destination box.", True),
    ArgSpec("to_end", "float_vec", (1.0,), "The upper corner of the destination box.", True),
    ArgSpec(
        "absolute",
        "bool",
        False,
        "Swap a box's start and end on every axis where the start is greater than the end.",
    ),
)
COMBINE = OpSchema(
    "transforms.combine",
    "Combine two or more affine transforms into one.\n\n"
    "    By default the result applies the inputs in the order listed (the first one first: "
    "``T_n @ ... @ T_1``); ``reverse_order`` applies them the other way round. All inputs must "
    "have the same number of dimensions; sequences must have the same number of frames, and a "
    f"plain transform is used for every frame of a sequence.\n\n    {_NOTE}",
    inputs=(
        InputSpec("input_0", "The first transform, ``(ndim, ndim + 1)`` float32."),
        InputSpec("input_1", "The second transform."),
        InputSpec("inputs", "More transforms (up to 99 in all).", variadic=True),
    ),
    args=(
        ArgSpec(
            "reverse_order",
            "bool",
            False,
            "Apply the inputs in reverse order (the last one first: ``T_1 @ ... @ T_n``).",
        ),
    ),
)

SCHEMAS = (TRANSLATION, SCALE, ROTATION, SHEAR, CROP, COMBINE)
KERNELS = {
    "transforms.translation": f"{_KERNELS}:TranslationKernel",
    "transforms.scale": f"{_KERNELS}:ScaleKernel",
    "transforms.rotation": f"{_KERNELS}:RotationKernel",
    "transforms.shear": f"{_KERNELS}:ShearKernel",
    "transforms.crop": f"{_KERNELS}:CropKernel",
    "transforms.combine": f"{_KERNELS}:CombineKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the affine transforms."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
