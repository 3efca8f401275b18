"""Family ``conditional``: schemas and registration of the operators behind conditionals.

A conditional pipeline splits a batch by a per-sample predicate into the samples that take the
``if`` branch and those that take the ``else`` branch (``_conditional.split``), runs each branch
on its part, and merges the branches' results back in sample order (``_conditional.merge``).
``_conditional.not_`` and ``_conditional.validate_logical`` serve ``not``, ``and`` and ``or``.
The names follow DALI's (``fn._conditional.split`` …); they are hidden from ``dir(fn)``.
Kernels (imported on first use): :mod:`.kernels`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "KERNELS",
    "MERGE",
    "NOT",
    "SCHEMAS",
    "SPLIT",
    "VALIDATE_LOGICAL",
    "feedline_register_operators",
]

_PREDICATE = ArgSpec(
    "predicate",
    "bool",
    REQUIRED,
    "One scalar (0-d) per sample, of any numeric type: a non-zero value selects the ``true`` side.",
    tensor=True,
)

SPLIT = OpSchema(
    name="_conditional.split",
    doc=(
        "Splits a batch in two by ``predicate``: the samples whose predicate is true, then the "
        "others, each in their original order (the batches are smaller than the input's, "
        "possibly empty). The samples are not copied."
    ),
    inputs=(InputSpec("input", "Data of any type, shape and layout."),),
    outputs=("true", "false"),
    args=(
        _PREDICATE,
        ArgSpec(
            "_if_stmt",
            "bool",
            False,
            "Set by the ``if`` statement of a conditional pipeline: a predicate that is not a "
            "scalar is then reported as the condition of an ``if``.",
        ),
    ),
    hidden=True,
)

MERGE = OpSchema(
    name="_conditional.merge",
    doc=(
        "Merges the outputs of two branches back into one batch in sample order: sample ``i`` "
        "comes from ``true_input`` where ``predicate[i]`` is true, from ``false_input`` "
        "otherwise (the inverse of ``_conditional.split`` by the same predicate). Both sides "
        "must agree on type, number of dimensions and layout."
    ),
    inputs=(
        InputSpec("true_input", "The samples of the ``if`` branch."),
        InputSpec("false_input", "The samples of the ``else`` branch."),
    ),
    args=(_PREDICATE,),
    hidden=True,
)

NOT = OpSchema(
    name="_conditional.not_",
    doc=(
        "Python's ``not`` per sample: a ``bool`` scalar that is true where the input (a scalar "
        "of any numeric type) is zero."
    ),
    inputs=(InputSpec("input", "One scalar (0-d) per sample."),),
    hidden=True,
)

VALIDATE_LOGICAL = OpSchema(
    name="_conditional.validate_logical",
    doc=(
        "Passes its input through after checking that every sample is a ``bool`` scalar, as "
        "the operands of ``and``/``or`` in a conditional pipeline must be."
    ),
    inputs=(InputSpec("input", "One ``bool`` scalar (0-d) per sample."),),
    args=(
        ArgSpec("expression_name", "str", REQUIRED, "``and`` or ``or`` (for the error message)."),
        ArgSpec("expression_side", "str", REQUIRED, "``left`` or ``right`` (for the message)."),
    ),
    hidden=True,
)

SCHEMAS = (SPLIT, MERGE, NOT, VALIDATE_LOGICAL)

_KERNELS = "feedline.operators.cpu.conditional.kernels"
KERNELS = {
    "_conditional.split": f"{_KERNELS}:SplitKernel",
    "_conditional.merge": f"{_KERNELS}:MergeKernel",
    "_conditional.not_": f"{_KERNELS}:NotKernel",
    "_conditional.validate_logical": f"{_KERNELS}:ValidateLogicalKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the conditional operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
