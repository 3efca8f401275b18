"""Result types of the arithmetic operators: DALI's type promotion (docs/semantics/arithmetic.md).

Binary promotion is commutative and n-ary operators fold it from the left:

* equal types stay;
* a float with a non-float gives the float; two floats give the wider;
* two integers of the same signedness give the wider;
* a signed ``intX`` with an unsigned ``uintY`` gives ``intX`` when ``X > Y``, else the signed type
  twice as wide as ``Y`` (capped at ``int64``); ``bool`` counts as an unsigned type narrower than
  ``uint8``.

On top of that each operator family has its own rules (``/`` is always floating, comparisons give
``bool``, bitwise operators reject floats, ``bool ⊕ bool`` is refused by arithmetic…), all in
:func:`result_dtype`. ``float16`` is not supported on the CPU, as in DALI 2.4.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.types import DataType, from_numpy_dtype, to_numpy_dtype

__all__ = ["OPS", "ArithmeticTypeError", "OpInfo", "infer_dtype", "promote", "result_dtype"]


class ArithmeticTypeError(TypeError, RuntimeError):
    """Input types an arithmetic operator refuses.

    A ``TypeError``, and also a ``RuntimeError`` as DALI raises for the same inputs (so code
    catching DALI's error catches it too).
    """


_BOOL = np.dtype(np.bool_)
_FLOAT32 = np.dtype(np.float32)
_INT64 = np.dtype(np.int64)
_SUPPORTED = frozenset(
    np.dtype(t)
    for t in (
        np.bool_,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.float32,
        np.float64,
    )
)


@dataclass(frozen=True)
class OpInfo:
    """How one arithmetic operator types its result.

    Attributes:
        name: the operator name without the ``arithmetic.`` prefix.
        arity: number of inputs.
        rule: the typing family (see :func:`result_dtype`).
        symbol: how the operator is written in messages (``"+"``, ``"math.sqrt"``).
    """

    name: str
    arity: int
    rule: str
    symbol: str


def _table() -> dict[str, OpInfo]:
    entries: list[tuple[str, int, str, str]] = [
        ("add", 2, "arith", "+"),
        ("sub", 2, "arith", "-"),
        ("mul", 2, "mul", "*"),
        ("truediv", 2, "floating", "/"),
        ("floordiv", 2, "arith", "//"),
        ("mod", 2, "arith", "%"),
        ("pow", 2, "arith", "**"),
        ("min", 2, "arith", "math.min"),
        ("max", 2, "arith", "math.max"),
        ("atan2", 2, "floating", "math.atan2"),
        ("fpow", 2, "floating", "math.fpow"),
        ("clamp", 3, "arith", "math.clamp"),
        ("bitand", 2, "bitwise", "&"),
        ("bitor", 2, "bitwise", "|"),
        ("bitxor", 2, "bitwise", "^"),
        ("lshift", 2, "bitwise", "<<"),
        ("rshift", 2, "bitwise", ">>"),
        ("neg", 1, "keep", "unary -"),
        ("abs", 1, "keep", "abs"),
        ("bitnot", 1, "bitnot", "~"),
    ]
    entries += [
        (name, 2, "compare", symbol)
        for name, symbol in (
            ("eq", "=="),
            ("ne", "!="),
            ("lt", "<"),
            ("le", "<="),
            ("gt", ">"),
            ("ge", ">="),
        )
    ]
    float_functions = [
        "fabs",
        "floor",
        "ceil",
        "sqrt",
        "rsqrt",
        "cbrt",
        "exp",
        "log",
        "log2",
        "log10",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
    ]
    entries += [(name, 1, "float_unary", f"math.{name}") for name in float_functions]
    return {name: OpInfo(name, arity, rule, symbol) for name, arity, rule, symbol in entries}


OPS: dict[str, OpInfo] = _table()
"""Every arithmetic operator by name (without the ``arithmetic.`` prefix)."""


def _width(dtype: np.dtype) -> int:
    """Bit width used by the signed/unsigned rule (bool is narrower than any integer)."""
    return 0 if dtype == _BOOL else dtype.itemsize * 8


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """The promoted type of two supported NumPy dtypes (commutative, ignores operator rules)."""
    if a == b:
        return a
    a_float, b_float = a.kind == "f", b.kind == "f"
    if a_float or b_float:
        if a_float and b_float:
            return a if a.itemsize >= b.itemsize else b
        return a if a_float else b
    a_signed, b_signed = a.kind == "i", b.kind == "i"
    if a_signed == b_signed:
        return a if _width(a) >= _width(b) else b
    signed, unsigned = (a, b) if a_signed else (b, a)
    if _width(signed) > _width(unsigned):
        return signed
    return np.dtype(f"int{min(2 * _width(unsigned), 64)}")


def _type_name(dtype: np.dtype) -> str:
    known = dtype in _SUPPORTED or dtype == np.float16
    return from_numpy_dtype(dtype).name if known else str(dtype)


def _describe(info: OpInfo, dtypes: Sequence[np.dtype]) -> str:
    names = ", ".join(_type_name(d) for d in dtypes)
    return f"arithmetic operator {info.symbol!r} ({info.name}) with input types ({names})"


def _dali_name(info: OpInfo) -> str:
    """The operator's name in DALI's messages: the Python symbol, or the function's name."""
    return {"**": "pow", "unary -": "-"}.get(info.symbol, info.symbol.removeprefix("math."))


def _bool_refused(info: OpInfo, dtypes: Sequence[np.dtype]) -> str:
    """DALI's message for an operator that refuses boolean inputs, then the types."""
    name = _dali_name(info)
    if info.arity == 1:
        text = (
            f"Input to arithmetic operator `{name}` cannot be a boolean. Consider using bitwise "
            "operator `~` or an numeric type."
        )
    else:
        text = (
            f"Inputs to arithmetic operator `{name}` cannot be booleans. Consider using bitwise "
            "operators `|`, `&`, `^` or anumeric type as one of the inputs to force type "
            "promotions of the booleans. Note: using `*` (multiplication) is still allowed for "
            "boolean inputs."
        )
    return f"{text} ({_describe(info, dtypes)})"


def _lookup(op: str) -> OpInfo:
    name = op.removeprefix("arithmetic.")
    try:
        return OPS[name]
    except KeyError:
        raise ValueError(
            f"unknown arithmetic operator {op!r}; known: {', '.join(sorted(OPS))}"
        ) from None


@functools.lru_cache(maxsize=4096)
def _result(name: str, dtypes: tuple[np.dtype, ...]) -> np.dtype:
    info = OPS[name]
    if len(dtypes) != info.arity:
        raise TypeError(
            f"arithmetic operator {info.symbol!r} ({name}) takes {info.arity} input(s), "
            f"got {len(dtypes)}"
        )
    for dtype in dtypes:
        if dtype == np.float16:
            raise TypeError(f"{_describe(info, dtypes)}: float16 is not supported on the CPU")
        if dtype not in _SUPPORTED:
            raise TypeError(f"{_describe(info, dtypes)}: {dtype} data is not numeric")
    rule = info.rule
    all_bool = all(d == _BOOL for d in dtypes)
    any_float = any(d.kind == "f" for d in dtypes)
    if all_bool and rule in ("arith", "floating", "keep", "float_unary"):
        raise ArithmeticTypeError(_bool_refused(info, dtypes))
    if any_float and rule in ("bitwise", "bitnot"):
        raise ArithmeticTypeError(
            f"Inputs to bitwise operator `{_dali_name(info)}` must be of integral type. "
            f"({_describe(info, dtypes)}: bitwise operators need integer or bool inputs)"
        )
    if rule == "compare":
        return _BOOL
    result = functools.reduce(promote, dtypes)
    if rule in ("floating", "float_unary") and result.kind != "f":
        return _FLOAT32
    return result


def result_dtype(op: str, dtypes: Sequence[Any]) -> np.dtype:
    """The NumPy result dtype of arithmetic operator ``op`` applied to inputs of ``dtypes``.

    Args:
        op: the operator name, with or without the ``arithmetic.`` prefix (``"add"``).
        dtypes: the input element types (NumPy dtypes or anything ``np.dtype`` accepts).

    Raises:
        ValueError: unknown operator.
        TypeError: wrong number of inputs or a combination the operator refuses (the message names
            the operator and the types); a refused combination is an
            :class:`ArithmeticTypeError` in DALI's words, also a ``RuntimeError`` as in DALI.
    """
    info = _lookup(op)
    return _result(info.name, tuple(np.dtype(d) for d in dtypes))


def infer_dtype(op: str, dtypes: Sequence[DataType]) -> DataType:
    """The result :class:`DataType` of arithmetic operator ``op`` for input ``dtypes``.

    The core calls this at ``Pipeline.build()`` so that a bad combination fails before the first
    batch; the same rules apply at run time.

    Raises:
        ValueError: unknown operator.
        TypeError: a combination the operator refuses, or a non-numeric type.
    """
    info = _lookup(op)
    np_dtypes = []
    for dtype in dtypes:
        try:
            np_dtypes.append(to_numpy_dtype(dtype))
        except TypeError:
            raise TypeError(
                f"arithmetic operator {info.symbol!r} ({info.name}): input type "
                f"{DataType(dtype).name} is not numeric"
            ) from None
    return from_numpy_dtype(_result(info.name, tuple(np_dtypes)))
