"""Family ``math``: schemas and registration of the arithmetic operators (``arithmetic.<op>``)
behind ``x + y`` and ``feedline.math``.

The schemas are hidden from ``dir(fn)``: users reach them through DataNode operators and
:mod:`feedline.math`. Kernels live in :mod:`.kernels` (type promotion: :mod:`.promotion`),
imported only when a pipeline first uses one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["KERNEL", "KERNELS", "SCHEMAS", "feedline_register_operators"]

KERNEL = "feedline.operators.cpu.math.kernels:ArithmeticKernel"

_TYPES_NOTE = (
    "The result type follows DALI's type promotion; samples broadcast NumPy-style "
    "(outer unit dimensions are added)."
)

_BINARY = {
    "add": "Elementwise sum ``left + right``.",
    "sub": "Elementwise difference ``left - right``.",
    "mul": "Elementwise product ``left * right`` (also allowed on two booleans).",
    "truediv": "Elementwise division ``left / right``; integers give FLOAT, ``x / 0`` is inf/nan.",
    "floordiv": (
        "Elementwise ``left // right``: integers truncate toward zero (as in C) and division "
        "by zero is an error; on floats it is plain division."
    ),
    "mod": (
        "Elementwise ``left % right`` with the sign of the dividend (C's ``%``/``fmod``); "
        "integer modulo by zero is an error."
    ),
    "pow": "Elementwise ``left ** right``; an integer base with a negative exponent gives 0.",
    "min": "Elementwise minimum (``left < right ? left : right``).",
    "max": "Elementwise maximum (``left > right ? left : right``).",
    "atan2": "Elementwise arc tangent of ``left / right`` in the right quadrant; ints give FLOAT.",
    "fpow": "Elementwise floating-point power ``left ** right``; ints give FLOAT.",
    "eq": "Elementwise ``left == right`` (BOOL).",
    "ne": "Elementwise ``left != right`` (BOOL).",
    "lt": "Elementwise ``left < right`` (BOOL).",
    "le": "Elementwise ``left <= right`` (BOOL).",
    "gt": "Elementwise ``left > right`` (BOOL).",
    "ge": "Elementwise ``left >= right`` (BOOL).",
    "bitand": "Elementwise bitwise ``left & right`` (integers and booleans).",
    "bitor": "Elementwise bitwise ``left | right`` (integers and booleans).",
    "bitxor": "Elementwise bitwise ``left ^ right`` (integers and booleans).",
    "lshift": "Elementwise ``left << right`` (integers and booleans).",
    "rshift": "Elementwise ``left >> right`` (integers and booleans).",
}

_UNARY = {
    "neg": "Elementwise negation ``-input``; keeps the type (unsigned values wrap).",
    "abs": "Elementwise absolute value; keeps the type.",
    "bitnot": "Elementwise bitwise ``~input``; logical not on booleans.",
    "fabs": "Elementwise absolute value as a float; ints give FLOAT.",
    "floor": "Elementwise floor; ints give FLOAT.",
    "ceil": "Elementwise ceiling; ints give FLOAT.",
    "sqrt": "Elementwise square root; ints give FLOAT.",
    "rsqrt": "Elementwise reciprocal square root; ints give FLOAT.",
    "cbrt": "Elementwise cube root; ints give FLOAT.",
    "exp": "Elementwise exponential; ints give FLOAT.",
    "log": "Elementwise natural logarithm; ints give FLOAT.",
    "log2": "Elementwise base-2 logarithm; ints give FLOAT.",
    "log10": "Elementwise base-10 logarithm; ints give FLOAT.",
    "sin": "Elementwise sine; ints give FLOAT.",
    "cos": "Elementwise cosine; ints give FLOAT.",
    "tan": "Elementwise tangent; ints give FLOAT.",
    "asin": "Elementwise arc sine; ints give FLOAT.",
    "acos": "Elementwise arc cosine; ints give FLOAT.",
    "atan": "Elementwise arc tangent; ints give FLOAT.",
    "sinh": "Elementwise hyperbolic sine; ints give FLOAT.",
    "cosh": "Elementwise hyperbolic cosine; ints give FLOAT.",
    "tanh": "Elementwise hyperbolic tangent; ints give FLOAT.",
    "asinh": "Elementwise inverse hyperbolic sine; ints give FLOAT.",
    "acosh": "Elementwise inverse hyperbolic cosine; ints give FLOAT.",
    "atanh": "Elementwise inverse hyperbolic tangent; ints give FLOAT.",
}

_BINARY_INPUTS = (InputSpec("left", "First operand."), InputSpec("right", "Second operand."))
_UNARY_INPUTS = (InputSpec("input", "The operand."),)
_CLAMP_INPUTS = (
    InputSpec("input", "The values to clamp."),
    InputSpec("lo", "Lower bound."),
    InputSpec("hi", "Upper bound (wins when ``lo > hi``)."),
)


def _schema(name: str, doc: str, inputs: tuple[InputSpec, ...]) -> OpSchema:
    return OpSchema(f"arithmetic.{name}", f"{doc}\n\n{_TYPES_NOTE}", inputs=inputs, hidden=True)


SCHEMAS: tuple[OpSchema, ...] = (
    *(_schema(name, doc, _BINARY_INPUTS) for name, doc in _BINARY.items()),
    *(_schema(name, doc, _UNARY_INPUTS) for name, doc in _UNARY.items()),
    _schema("clamp", "Elementwise ``min(max(input, lo), hi)``.", _CLAMP_INPUTS),
)
"""Every arithmetic operator schema."""
KERNELS = dict.fromkeys((schema.name for schema in SCHEMAS), KERNEL)


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the ``arithmetic.*`` operators with their CPU kernel."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
