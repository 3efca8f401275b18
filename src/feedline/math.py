"""``feedline.math``: elementwise math functions on pipeline batches (DALI's ``nvidia.dali.math``).

Each function takes DataNodes (pipeline batches) or constants (Python ``bool``/``int``/``float``,
NumPy scalars, ``types.Constant``), at least one of them a DataNode, and returns a DataNode. The
result type follows DALI's type promotion: functions such as ``sqrt`` or ``sin`` give FLOAT for
integer inputs and keep FLOAT64; ``min``, ``max``, ``pow`` and ``clamp`` promote their inputs like
``+`` does; booleans are refused where DALI refuses them. Samples broadcast NumPy-style.

Example::

    from feedline import fn, math, pipeline_def

    @pipeline_def(batch_size=8, num_threads=2, device_id=None)
    def pipe():
        x = fn.external_source(source=..., dtype=types.FLOAT)
        return math.clamp(math.sqrt(x) * 16, 0, 255)
"""

from __future__ import annotations

from typing import Any

from feedline.core.graph import DataNode, arithmetic_node

__all__ = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "clamp",
    "cos",
    "cosh",
    "exp",
    "fabs",
    "floor",
    "fpow",
    "log",
    "log2",
    "log10",
    "max",
    "min",
    "pow",
    "rsqrt",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
]


def _call(op: str, *operands: Any) -> DataNode:
    return arithmetic_node(op, operands, caller=f"feedline.math.{op}")


def sqrt(input: Any) -> DataNode:
    """Square root of each element (FLOAT for integer inputs)."""
    return _call("sqrt", input)


def rsqrt(input: Any) -> DataNode:
    """Reciprocal of the square root of each element (FLOAT for integer inputs)."""
    return _call("rsqrt", input)


def cbrt(input: Any) -> DataNode:
    """Cube root of each element (FLOAT for integer inputs)."""
    return _call("cbrt", input)


def exp(input: Any) -> DataNode:
    """Exponential of each element (FLOAT for integer inputs)."""
    return _call("exp", input)


def log(input: Any) -> DataNode:
    """Natural logarithm of each element (FLOAT for integer inputs; ``log(0)`` is ``-inf``)."""
    return _call("log", input)


def log2(input: Any) -> DataNode:
    """Base-2 logarithm of each element (FLOAT for integer inputs)."""
    return _call("log2", input)


def log10(input: Any) -> DataNode:
    """Base-10 logarithm of each element (FLOAT for integer inputs)."""
    return _call("log10", input)


def abs(input: Any) -> DataNode:
    """Absolute value of each element; keeps the type (booleans are refused)."""
    return _call("abs", input)


def fabs(input: Any) -> DataNode:
    """Absolute value of each element as a float (FLOAT for integer inputs)."""
    return _call("fabs", input)


def floor(input: Any) -> DataNode:
    """Floor of each element (FLOAT for integer inputs)."""
    return _call("floor", input)


def ceil(input: Any) -> DataNode:
    """Ceiling of each element (FLOAT for integer inputs)."""
    return _call("ceil", input)


def sin(input: Any) -> DataNode:
    """Sine of each element, in radians (FLOAT for integer inputs)."""
    return _call("sin", input)


def cos(input: Any) -> DataNode:
    """Cosine of each element, in radians (FLOAT for integer inputs)."""
    return _call("cos", input)


def tan(input: Any) -> DataNode:
    """Tangent of each element, in radians (FLOAT for integer inputs)."""
    return _call("tan", input)


def asin(input: Any) -> DataNode:
    """Arc sine of each element (FLOAT for integer inputs; nan outside [-1, 1])."""
    return _call("asin", input)


def acos(input: Any) -> DataNode:
    """Arc cosine of each element (FLOAT for integer inputs; nan outside [-1, 1])."""
    return _call("acos", input)


def atan(input: Any) -> DataNode:
    """Arc tangent of each element (FLOAT for integer inputs)."""
    return _call("atan", input)


def sinh(input: Any) -> DataNode:
    """Hyperbolic sine of each element (FLOAT for integer inputs)."""
    return _call("sinh", input)


def cosh(input: Any) -> DataNode:
    """Hyperbolic cosine of each element (FLOAT for integer inputs)."""
    return _call("cosh", input)


def tanh(input: Any) -> DataNode:
    """Hyperbolic tangent of each element (FLOAT for integer inputs)."""
    return _call("tanh", input)


def asinh(input: Any) -> DataNode:
    """Inverse hyperbolic sine of each element (FLOAT for integer inputs)."""
    return _call("asinh", input)


def acosh(input: Any) -> DataNode:
    """Inverse hyperbolic cosine of each element (FLOAT for integer inputs)."""
    return _call("acosh", input)


def atanh(input: Any) -> DataNode:
    """Inverse hyperbolic tangent of each element (FLOAT for integer inputs)."""
    return _call("atanh", input)


def min(left: Any, right: Any) -> DataNode:
    """Elementwise minimum (``left < right ? left : right``) in the promoted type."""
    return _call("min", left, right)


def max(left: Any, right: Any) -> DataNode:
    """Elementwise maximum (``left > right ? left : right``) in the promoted type."""
    return _call("max", left, right)


def pow(base: Any, exponent: Any) -> DataNode:
    """``base ** exponent`` in the promoted type; integer negative exponents give 0."""
    return _call("pow", base, exponent)


def fpow(base: Any, exponent: Any) -> DataNode:
    """``base ** exponent`` computed in floating point (FLOAT for integer inputs)."""
    return _call("fpow", base, exponent)


def atan2(x: Any, y: Any) -> DataNode:
    """Arc tangent of ``x / y`` in the correct quadrant (FLOAT for integer inputs)."""
    return _call("atan2", x, y)


def clamp(value: Any, lo: Any, hi: Any) -> DataNode:
    """``min(max(value, lo), hi)`` in the type promoted from all three (``hi`` wins if lo > hi).

    Integer literal bounds keep an integer result (INT32, or INT64 for UINT32/UINT64/INT64
    values); a float bound makes it FLOAT.
    """
    return _call("clamp", value, lo, hi)
