"""Family ``arrays``: schemas and registration of the array operators (``one_hot``, ``cat``,
``stack``, ``expand_dims``, ``squeeze``, ``cast_like``), with DALI's arguments."""

from __future__ import annotations

from feedline.core.hookspecs import hookimpl
from feedline.core.registry import Registry
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType
from feedline.operators.cpu.common.schemas import register_cpu_operators

_SHAPE = "feedline.operators.cpu.arrays.shape_ops"
_JOIN = "feedline.operators.cpu.arrays.join"

ONE_HOT = OpSchema(
    "one_hot",
    """Produce a one-hot encoding of the input.

    Adds a new axis of ``num_classes`` elements: for an input coordinate ``(x0, ..., xn)`` and
    ``axis = k``, ``output[x0, ..., xk-1, i, xk, ..., xn] = on_value if i == input[x0, ..., xn]
    else off_value`` for every ``i`` in ``[0, num_classes)``. A class value that is no integer
    in that range gives ``off_value`` everywhere. A scalar input becomes a vector of
    ``num_classes``. For backward compatibility with DALI, when ``axis`` is not given and every
    sample of the batch has exactly one element (whatever its number of dimensions), the samples
    are treated as scalars.""",
    inputs=(InputSpec("input", "Class indices (any numeric type)."),),
    args=(
        ArgSpec(
            "axis",
            "int",
            None,
            "Where to put the new axis, in ``[-1, ndim]`` (default -1: appended last; for a "
            "scalar input it becomes the only dimension). Giving it disables the legacy "
            "one-element-means-scalar rule.",
        ),
        ArgSpec(
            "axis_name",
            "str",
            None,
            "One character naming the new axis in the output layout; without it the output "
            "has no layout. An input without a layout (and not scalar) gives no layout either.",
        ),
        ArgSpec("dtype", "dtype", DataType.FLOAT, "The output type."),
        ArgSpec("num_classes", "int", 0, "Number of classes (the new axis' extent); must be > 0."),
        ArgSpec("off_value", "float", 0.0, "Value of the other positions (cast to ``dtype``)."),
        ArgSpec("on_value", "float", 1.0, "Value at the class index (cast to ``dtype``)."),
    ),
    random=False,
)

CAT = OpSchema(
    "cat",
    """Join the inputs along an existing axis.

    Sample ``i`` of the output is the concatenation of sample ``i`` of every input. The inputs
    must have the same type and number of dimensions, and the same shapes except along the
    joined axis; inputs that have a layout must have the same one (the output keeps it).""",
    inputs=(InputSpec("input", "The tensors to join (at least one).", variadic=True),),
    args=(
        ArgSpec(
            "axis",
            "int",
            None,
            "The axis to join along, in ``[-ndim, ndim - 1]``, negative counted from the back "
            "(default 0). Mutually exclusive with ``axis_name``.",
        ),
        ArgSpec(
            "axis_name",
            "str",
            None,
            "The layout name of the axis to join along (the inputs need a layout). Mutually "
            "exclusive with ``axis``.",
        ),
    ),
    random=False,
)

STACK = OpSchema(
    "stack",
    """Join the inputs along a new axis.

    Sample ``i`` of the output stacks sample ``i`` of every input; respective samples must have
    the same shape and all inputs the same type. ``axis = 0`` stacks whole tensors,
    ``axis = ndim`` interleaves their values.""",
    inputs=(InputSpec("input", "The tensors to stack (at least one).", variadic=True),),
    args=(
        ArgSpec(
            "axis",
            "int",
            0,
            "Position of the new axis in the output, in ``[-ndim, ndim]`` (``ndim`` of the "
            "inputs); negative values count from the back (-1 = last).",
        ),
        ArgSpec(
            "axis_name",
            "str",
            None,
            "One character naming the new axis: it is inserted into the inputs' layout at "
            "``axis`` (``axis=0, axis_name='C'`` on ``HW`` gives ``CHW``). Without it the output "
            "has no layout.",
        ),
    ),
    random=False,
)

EXPAND_DIMS = OpSchema(
    "expand_dims",
    """Insert dimensions of extent 1 into the shape (the data is not copied).""",
    inputs=(InputSpec("input", "Input to the operator."),),
    args=(
        ArgSpec(
            "axes",
            "int_vec",
            REQUIRED,
            "Positions of the new dimensions in the output shape, each in "
            "``[0, ndim + len(axes) - 1]``.",
        ),
        ArgSpec(
            "new_axis_names",
            "layout",
            "",
            "Names of the new dimensions, one per axis, inserted into the input layout at "
            "``axes`` (the input needs a layout, unless it is a scalar); without them the output "
            "has no layout, unless ``axes`` is empty (then the input's layout is kept).",
        ),
    ),
    random=False,
)

SQUEEZE = OpSchema(
    "squeeze",
    """Remove the dimensions given as ``axes`` or ``axis_names`` (the data is not copied).

    Removed dimensions must have extent 1, unless the sample's volume is 0 both before and after.
    The output layout is the input layout without the removed dimensions.""",
    inputs=(InputSpec("input", "Input to the operator."),),
    args=(
        ArgSpec(
            "axes",
            "int_vec",
            (),
            "Indices of the dimensions to remove, in ``[-ndim, ndim - 1]``.",
        ),
        ArgSpec(
            "axis_names",
            "layout",
            "",
            "Layout names of the dimensions to remove. Mutually exclusive with ``axes``.",
        ),
    ),
    random=False,
)

CAST_LIKE = OpSchema(
    "cast_like",
    """Cast the first input to the type of the second input.

    Conversions follow ``cast``: float to integer rounds half away from zero and saturates.""",
    inputs=(
        InputSpec("input0", "The data to convert."),
        InputSpec("input1", "The tensor whose element type is taken (its values are unused)."),
    ),
    random=False,
)

SCHEMAS = (ONE_HOT, CAT, STACK, EXPAND_DIMS, SQUEEZE, CAST_LIKE)
KERNELS = {
    "one_hot": f"{_SHAPE}:OneHotKernel",
    "cat": f"{_JOIN}:CatKernel",
    "stack": f"{_JOIN}:StackKernel",
    "expand_dims": f"{_SHAPE}:ExpandDimsKernel",
    "squeeze": f"{_SHAPE}:SqueezeKernel",
    "cast_like": f"{_SHAPE}:CastLikeKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the array operators."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)


__all__ = [
    "CAST_LIKE",
    "CAT",
    "EXPAND_DIMS",
    "KERNELS",
    "ONE_HOT",
    "SCHEMAS",
    "SQUEEZE",
    "STACK",
    "feedline_register_operators",
]
