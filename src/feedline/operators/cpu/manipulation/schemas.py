"""Family ``manipulation``: schemas and registration of DALI's tensor and batch manipulation
operators, with DALI's arguments.

Kernels (imported on first use): :mod:`.sequences` (``per_frame``, ``element_extract``,
``sequence_rearrange``), :mod:`.batch_order` (``permute_batch``, ``batch_permutation``),
:mod:`.values` (``lookup_table``, ``reinterpret``) and :mod:`.properties` (``shapes``,
``get_property``). DALI's older spellings (``SPELLINGS``: ``experimental.peek_image_shape``,
``experimental.resize``, ``experimental.inflate``, ``experimental.decoders.image*``,
``image_decoder*``, ``coco_reader``, ``file_reader``, ``coin_flip``, ``uniform``…) get the current
operator's schema and kernels, registered once that operator exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["KERNELS", "SCHEMAS", "feedline_register_kernels", "feedline_register_operators"]

_PACKAGE = "feedline.operators.cpu.manipulation"
_INPUT = InputSpec("input", "Input to the operator.")

PER_FRAME = OpSchema(
    "per_frame",
    """Mark the input as a sequence: only the layout changes (the data is shared).

    Per-frame values given to a sequence-processing operator's argument must be marked this way
    (one value per frame: the outermost extent of each sample). An input without a layout gets
    ``F`` followed by ``*`` for its other dimensions; a layout starting with ``F`` is kept; any
    other layout is an error unless ``replace`` is set, which replaces its first letter by
    ``F``.""",
    inputs=(_INPUT,),
    args=(
        ArgSpec(
            "replace",
            "bool",
            False,
            "Replace the first letter of a layout that does not start with ``F`` instead of "
            "raising an error.",
        ),
    ),
)


def _element_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """One output per entry of ``element_map``."""
    return tuple(f"element_{i}" for i in range(len(args.get("element_map") or ())))


ELEMENT_EXTRACT = OpSchema(
    "element_extract",
    """Extract elements (frames) of each input sequence, one output per ``element_map`` entry.

    Output ``k`` is ``input[element_map[k]]`` (a slice of the outermost dimension), so the
    outputs have one dimension less: ``FHWC`` sequences give ``HWC`` elements. The input must
    have at least 2 dimensions and, if it has a layout, it must start with ``F``.""",
    inputs=(InputSpec("input", "Sequences (layout ``F...`` or none)."),),
    outputs=_element_outputs,
    args=(
        ArgSpec(
            "element_map",
            "int_vec",
            REQUIRED,
            "Indices of the elements to extract, in ``[0, sequence length)``.",
        ),
    ),
)

SEQUENCE_REARRANGE = OpSchema(
    "sequence_rearrange",
    """Rearrange the frames of each sequence: ``out[i] = input[new_order[i]]``.

    Frames may be repeated or dropped, but the output must not be empty. The outermost
    dimension is the frame index; an input layout, if any, must start with ``F``.""",
    inputs=(InputSpec("input", "Sequences (layout ``F...`` or none), at least 2-D."),),
    args=(
        ArgSpec(
            "new_order",
            "int_vec",
            REQUIRED,
            "The input frame of each output frame, each in ``[0, sequence length)``; may be "
            "given per sample as 1-D tensors.",
            tensor=True,
        ),
    ),
)

PERMUTE_BATCH = OpSchema(
    "permute_batch",
    """Build a batch from samples of the input batch: ``out[i] = input[indices[i]]``.

    Repetitions and omissions are allowed. Samples keep their layout and source info.""",
    inputs=(_INPUT,),
    args=(
        ArgSpec(
            "indices",
            "int_vec",
            REQUIRED,
            "One index per output sample, in ``[0, batch size)``: a list as long as the batch, "
            "or a batch of scalars.",
            tensor=True,
        ),
    ),
)

BATCH_PERMUTATION = OpSchema(
    "batch_permutation",
    """Produce a batch of random int32 scalars that index the samples of the batch.

    By default they are a random permutation of ``0 .. batch_size - 1``. The draw depends only
    on the operator's seed and the iteration.""",
    args=(
        ArgSpec(
            "allow_repetitions",
            "bool",
            False,
            "Draw each index independently, so that indices can repeat and be left out.",
        ),
        ArgSpec(
            "no_fixed_points",
            "bool",
            False,
            "Never map an index to itself (``out[i] != i``); ignored when the batch has one "
            "sample.",
        ),
        ArgSpec(
            "_scope",
            "any",
            None,
            "Set by conditionals, not by the user: inside an ``if`` branch, the branch's batch, "
            "so that the permutation covers the samples that take the branch.",
            tensor=True,
        ),
    ),
)

LOOKUP_TABLE = OpSchema(
    "lookup_table",
    """Map integer input values through a table given by ``keys`` and ``values``.

    The table holds ``values[j]`` at ``keys[j]`` (the last occurrence of a repeated key wins)
    and ``default_value`` elsewhere; input values outside the table (negative, or above the
    largest key) give ``default_value`` too. Values are converted to ``dtype`` with rounding
    to nearest and saturation. Only integer inputs are accepted.""",
    inputs=(InputSpec("input", "Integer data (int8 … uint64)."),),
    args=(
        ArgSpec(
            "default_value",
            "float",
            0.0,
            "Output value for input values that are not keys.",
        ),
        ArgSpec("dtype", "dtype", DataType.FLOAT, "Output data type."),
        ArgSpec("keys", "int_vec", (), "The input values of the table, in ``[0, 65535]``."),
        ArgSpec(
            "values",
            "float_vec",
            (),
            "The output value of each key (as many as ``keys``).",
        ),
    ),
    deprecated={"output_dtype": "dtype"},
)

REINTERPRET = OpSchema(
    "reinterpret",
    """Treat the content of the input as another type, shape and/or layout (no copy).

    With ``dtype``, the bytes of each sample are read as that type: without a shape, the
    innermost dimension is adjusted (its size in bytes must be divisible by the new element
    size). ``shape``, ``rel_shape`` and ``src_dims`` work as in ``reshape``; the size in bytes
    must not change. Without ``layout``, the input layout is kept when the number of
    dimensions does not change, and dropped otherwise.""",
    inputs=(
        InputSpec("data", "Data to reinterpret."),
        InputSpec(
            "shape_input",
            "The output shape per sample as a 1-D integer input (same as ``shape``).",
            optional=True,
        ),
    ),
    args=(
        ArgSpec("dtype", "dtype", None, "Output data type (default: the input's)."),
        ArgSpec("layout", "layout", None, "New layout: one letter per output dimension."),
        ArgSpec(
            "rel_shape",
            "float_vec",
            None,
            "Output extents relative to the input's (``src_dims`` picks which); one may be "
            "negative (inferred). Mutually exclusive with ``shape``.",
            tensor=True,
        ),
        ArgSpec(
            "shape",
            "int_vec",
            None,
            "The output shape; one extent may be -1 (inferred). Mutually exclusive with "
            "``rel_shape``.",
            tensor=True,
        ),
        ArgSpec(
            "src_dims",
            "int_vec",
            None,
            "Input dimensions to keep, in order; -1 inserts a dimension of extent 1.",
            tensor=True,
        ),
    ),
)

SHAPES = OpSchema(
    "shapes",
    "Return the shape of each sample as a 1-D tensor (empty for scalars).",
    inputs=(_INPUT,),
    args=(
        ArgSpec(
            "dtype",
            "dtype",
            DataType.INT64,
            "Type of the extents: INT32, UINT32, INT64, UINT64, FLOAT or FLOAT64.",
            choices=(
                DataType.INT32,
                DataType.UINT32,
                DataType.INT64,
                DataType.UINT64,
                DataType.FLOAT,
                DataType.FLOAT64,
            ),
        ),
    ),
    deprecated={"type": "dtype"},
)

GET_PROPERTY = OpSchema(
    "get_property",
    """Return a property of each input sample as a 1-D uint8 byte array.

    ``key="source_info"``: where the sample comes from (a reader's file path; empty when
    unknown). ``key="layout"``: the batch's layout string (empty when none).""",
    inputs=(_INPUT,),
    args=(
        ArgSpec(
            "key",
            "str",
            REQUIRED,
            "The property: ``source_info`` or ``layout``.",
            choices=("source_info", "layout"),
        ),
    ),
)

SCHEMAS = (
    PER_FRAME,
    ELEMENT_EXTRACT,
    SEQUENCE_REARRANGE,
    PERMUTE_BATCH,
    BATCH_PERMUTATION,
    LOOKUP_TABLE,
    REINTERPRET,
    SHAPES,
    GET_PROPERTY,
)
KERNELS = {
    "per_frame": f"{_PACKAGE}.sequences:PerFrameKernel",
    "element_extract": f"{_PACKAGE}.sequences:ElementExtractKernel",
    "sequence_rearrange": f"{_PACKAGE}.sequences:SequenceRearrangeKernel",
    "permute_batch": f"{_PACKAGE}.batch_order:PermuteBatchKernel",
    "batch_permutation": f"{_PACKAGE}.batch_order:BatchPermutationKernel",
    "lookup_table": f"{_PACKAGE}.values:LookupTableKernel",
    "reinterpret": f"{_PACKAGE}.values:ReinterpretKernel",
    "shapes": f"{_PACKAGE}.properties:ShapesKernel",
    "get_property": f"{_PACKAGE}.properties:GetPropertyKernel",
}

#: DALI's older spellings of operators other families own: ``{old name: current name}``.
SPELLINGS = {
    "experimental.peek_image_shape": "peek_image_shape",
    "experimental.resize": "resize",
    "experimental.tensor_resize": "tensor_resize",
    "experimental.inflate": "decoders.inflate",
    **{
        f"{old}{kind}": f"decoders.image{kind}"
        for old in ("experimental.decoders.image", "image_decoder")
        for kind in ("", "_crop", "_random_crop", "_slice")
    },
    # the names DALI's operators had before its readers and random numbers got their modules
    **{f"{name}_reader": f"readers.{name}" for name in ("coco", "file", "numpy", "tfrecord")},
    "coin_flip": "random.coin_flip",
    "uniform": "random.uniform",
    "normal_distribution": "random.normal",
    "transform_translation": "transforms.translation",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the manipulation operators."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)


@hookimpl
def feedline_register_kernels(registry: Registry) -> None:
    """Register DALI's older spellings with the current operators' schemas and kernels (when
    the plugin owning the current operator is loaded)."""
    for old, current in SPELLINGS.items():
        entry = registry.entry(current)
        if entry is None or registry.entry(old) is not None:
            continue
        doc = f"{entry.schema.doc}\n\n    DALI's older spelling of ``{current}`` (the same kernel)."
        registry.add_alias(old, current, doc)
