"""Family ``constants``: schemas and registration of ``zeros``, ``zeros_like``, ``ones``,
``ones_like``, ``full`` and ``full_like``, with DALI's arguments. Kernels (imported on first
use): :mod:`.kernels`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["KERNELS", "SCHEMAS", "feedline_register_operators"]

_KERNELS = "feedline.operators.cpu.constants.kernels"

_SHAPE = ArgSpec(
    "shape",
    "int_vec",
    None,
    "Shape of the output data (non-negative extents); default: a scalar.",
    tensor=True,
)
_LAYOUT = ArgSpec(
    "layout",
    "layout",
    None,
    "Output layout; when set and not empty, it must have one letter per output dimension.",
)
_LIKE = InputSpec("data_like", "The data whose shape, type and layout the output takes.")
_FILL = InputSpec(
    "fill_value",
    "The fill value: a scalar, or an array broadcastable (NumPy-style, from the innermost "
    "dimension) to the output shape.",
)


def _filled(name: str, what: str) -> OpSchema:
    return OpSchema(
        name,
        f"Return new data of the given shape and type, filled with {what}.",
        args=(ArgSpec("dtype", "dtype", DataType.INT32, "Output data type."), _LAYOUT, _SHAPE),
    )


def _filled_like(name: str, what: str) -> OpSchema:
    return OpSchema(
        name,
        f"Return new data with the shape, type and layout of the input, filled with {what}.",
        inputs=(_LIKE,),
        args=(ArgSpec("dtype", "dtype", None, "Overrides the output data type."),),
    )


ZEROS = _filled("zeros", "zeros")
ONES = _filled("ones", "ones")
ZEROS_LIKE = _filled_like("zeros_like", "zeros")
ONES_LIKE = _filled_like("ones_like", "ones")
FULL = OpSchema(
    "full",
    """Return new data of the given shape, filled with a fill value (of the fill value's type).

    A fill value that is not a scalar is broadcast to ``shape`` as NumPy does: dimensions are
    matched from the innermost, each must agree or be 1, and missing outer dimensions count as
    1. Without ``shape`` the output is a scalar holding the fill value's first element (as in
    DALI). The input's layout is not passed on.""",
    inputs=(_FILL,),
    args=(_LAYOUT, _SHAPE),
)
FULL_LIKE = OpSchema(
    "full_like",
    """Return new data with the shape, type and layout of ``data_like``, filled with a value.

    The fill value is broadcast to the shape as in ``full`` and converted to the type of
    ``data_like`` (rounded to nearest and saturated for integer types).""",
    inputs=(_LIKE, _FILL),
)

SCHEMAS = (ZEROS, ZEROS_LIKE, ONES, ONES_LIKE, FULL, FULL_LIKE)
KERNELS = {
    "zeros": f"{_KERNELS}:ZerosKernel",
    "ones": f"{_KERNELS}:OnesKernel",
    "zeros_like": f"{_KERNELS}:ZerosLikeKernel",
    "ones_like": f"{_KERNELS}:OnesLikeKernel",
    "full": f"{_KERNELS}:FullKernel",
    "full_like": f"{_KERNELS}:FullLikeKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the constant-filled operators."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
