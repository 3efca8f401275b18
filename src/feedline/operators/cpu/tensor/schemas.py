"""Family ``tensor``: schemas and registration of the operators on whole tensors, whatever they
hold.

``constant``, ``cast``, ``reshape``, ``copy``, ``transpose``, ``pad``, ``slice``,
``normalize``, and the hidden ``_tensor_subscript``/``_subscript_dim_check`` behind
``DataNode[...]``. Kernels (imported on first use): :mod:`.basic` (constant, cast, reshape, copy),
:mod:`.layout` (transpose, pad), :mod:`.slice`, :mod:`.normalize`, :mod:`.subscript`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.graph.subscript import MAX_SUBSCRIPTS
from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType
from feedline.operators.cpu.common.schemas import (
    OUTPUT_DTYPE_ALIAS,
    dtype_arg,
    register_cpu_operators,
)

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "CAST",
    "CONSTANT",
    "COPY",
    "KERNELS",
    "NORMALIZE",
    "OUT_OF_BOUNDS_POLICIES",
    "PAD",
    "RESHAPE",
    "SCHEMAS",
    "SLICE",
    "SUBSCRIPT_DIM_CHECK",
    "TENSOR_SUBSCRIPT",
    "TRANSPOSE",
    "feedline_register_operators",
]

CONSTANT = OpSchema(
    "constant",
    """Produce the same constant sample in every iteration.

    Give ``fdata`` (floats) or ``idata`` (ints) with an optional ``shape`` (a single value is
    broadcast), or ``value`` (any array-like). ``fdata`` and ``idata`` reach ``dtype`` as
    ``cast`` converts: floats round half away from zero, and values outside the type's range
    saturate (``idata=-1`` as ``UINT8`` is 0).""",
    args=(
        ArgSpec("value", "any", None, "The sample as an array-like (feedline extension)."),
        ArgSpec("fdata", "float_vec", None, "Float values (row-major)."),
        ArgSpec("idata", "int_vec", None, "Integer values (row-major)."),
        ArgSpec("shape", "int_vec", None, "Shape of the sample."),
        ArgSpec(
            "dtype",
            "dtype",
            None,
            "Output type (default FLOAT for fdata, INT32 for idata, value's own type).",
        ),
        ArgSpec("layout", "layout", "", "Layout of the sample."),
    ),
    random=False,
)

CAST = OpSchema(
    "cast",
    """Convert the element type.

    Float to integer rounds half away from zero (exactly) and saturates to the target range,
    infinities included; NaN gives what DALI gives (the lowest value for int32 and int64, 2**63
    for uint64, 0 for the other integer types). Float to bool rounds first (0.4 → False,
    0.6 → True, NaN → True); integer to integer saturates.""",
    inputs=(InputSpec("input", "Data to convert."),),
    args=(ArgSpec("dtype", "dtype", doc="The target type."),),
    random=False,
)

RESHAPE = OpSchema(
    "reshape",
    """Reinterpret each sample with a new shape (no data is moved).

    ``shape`` may contain one -1 (inferred) and 0 (keep the input extent); ``rel_shape`` scales
    input extents (it may be shorter than the input's dimensions; one negative value is a wildcard
    inferred from the element count, and only it may stand past the input's last dimension);
    ``src_dims`` picks input dimensions (-1 inserts a unit dimension), which ``rel_shape`` then
    scales. The element count must not change.""",
    inputs=(
        InputSpec("input", "Data to reshape."),
        InputSpec("shape_input", "Per-sample shapes as a 1-D integer input.", optional=True),
    ),
    args=(
        ArgSpec("shape", "int_vec", None, "The output shape.", tensor=True),
        ArgSpec(
            "rel_shape", "float_vec", None, "Output extents relative to the input's.", tensor=True
        ),
        ArgSpec("src_dims", "int_vec", None, "Input dimensions to keep, in order (-1 = new 1)."),
        ArgSpec("layout", "layout", None, "The output layout (default: dropped unless kept)."),
    ),
    random=False,
)

COPY = OpSchema(
    "copy",
    "Copy the input (a new buffer with the same content, layout and source info).",
    inputs=(InputSpec("input", "Data to copy."),),
    random=False,
)


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
    random=False,
)

PAD = OpSchema(
    name="pad",
    doc=(
        "Pads the samples of a batch at the end of the chosen axes with ``fill_value``.\n\n"
        "Each axis grows to the largest extent in the batch or, where ``shape`` gives a "
        "non-negative extent, to ``max(shape, own extent)``; then up to a multiple of "
        "``align``. A single ``shape``/``align`` value applies to every padded axis. "
        "``fill_value`` is converted to the data type as DALI converts it: truncated toward "
        "zero and wrapped for integers (-1 pads uint8 data with 255), a plain conversion for "
        "floats. ``axes`` may be given per sample."
    ),
    inputs=(InputSpec("input", "Data of any type."),),
    args=(
        ArgSpec("fill_value", "float", 0.0, "The padding value.", tensor=True),
        ArgSpec("axes", "int_vec", None, "Axes to pad (negative counts from the back); all.", True),
        ArgSpec("axis_names", "layout", None, "Axes to pad by layout name."),
        ArgSpec("align", "int_vec", None, "Extents become multiples of these.", tensor=True),
        ArgSpec("shape", "int_vec", None, "Minimum extents; -1 = batch maximum.", tensor=True),
    ),
    random=False,
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
        ArgSpec(
            "axes",
            "int_vec",
            None,
            "Axes of the coordinates; default (1, 0); empty: every axis.",
            tensor=True,
        ),
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
        dtype_arg("Output type: the input's, FLOAT, FLOAT16 or UINT8."),
    ),
    deprecated=OUTPUT_DTYPE_ALIAS,
    removed=("image_type",),
    random=False,
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
        dtype_arg(
            "Output type (float32 or an integer type, rounded and saturated).", DataType.FLOAT
        ),
    ),
    random=False,
)

_SUBSCRIPT_PARTS = (
    ("at", "Index of dimension {i} (the dimension is removed)."),
    ("lo", "Start of the range of dimension {i}."),
    ("hi", "End (exclusive) of the range of dimension {i}."),
    ("step", "Step of the range of dimension {i}."),
)
TENSOR_SUBSCRIPT = OpSchema(
    "_tensor_subscript",
    """Index every sample NumPy-style (what ``DataNode[...]`` creates).

    Subscript ``i`` is an index ``at_i`` or a range ``lo_i:hi_i:step_i`` (NumPy's rules for
    missing and negative bounds and negative steps); dimensions past ``num_subscripts`` are kept.
    An index outside its axis, a zero step or more subscripts than dimensions is an error.""",
    inputs=(InputSpec("input", "Data to index."),),
    args=(
        *(
            ArgSpec(f"{part}_{i}", "int", None, doc.format(i=i), tensor=True)
            for i in range(MAX_SUBSCRIPTS)
            for part, doc in _SUBSCRIPT_PARTS
        ),
        ArgSpec("num_subscripts", "int", None, "How many subscripts the expression has."),
    ),
    hidden=True,
)

SUBSCRIPT_DIM_CHECK = OpSchema(
    "_subscript_dim_check",
    """Pass the data through after checking that every sample has at least ``num_subscripts``
    dimensions (what ``DataNode[...]`` of full ranges only creates).""",
    inputs=(InputSpec("input", "Data to check."),),
    args=(ArgSpec("num_subscripts", "int", doc="How many subscripts the expression has."),),
    hidden=True,
)

SCHEMAS = (
    CONSTANT,
    CAST,
    RESHAPE,
    COPY,
    TRANSPOSE,
    PAD,
    SLICE,
    NORMALIZE,
    TENSOR_SUBSCRIPT,
    SUBSCRIPT_DIM_CHECK,
)

_KERNELS = "feedline.operators.cpu.tensor"
KERNELS = {
    "constant": f"{_KERNELS}.basic:ConstantKernel",
    "cast": f"{_KERNELS}.basic:CastKernel",
    "reshape": f"{_KERNELS}.basic:ReshapeKernel",
    "copy": f"{_KERNELS}.basic:CopyKernel",
    "transpose": f"{_KERNELS}.layout:TransposeKernel",
    "pad": f"{_KERNELS}.layout:PadKernel",
    "slice": f"{_KERNELS}.slice:SliceKernel",
    "normalize": f"{_KERNELS}.normalize:NormalizeKernel",
    "_tensor_subscript": f"{_KERNELS}.subscript:TensorSubscriptKernel",
    "_subscript_dim_check": f"{_KERNELS}.subscript:SubscriptDimCheckKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the tensor operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
