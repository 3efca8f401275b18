"""The type-promotion table of the arithmetic operators, against DALI 2.4.0's observed results."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline.core.types import DataType, from_numpy_dtype
from feedline.operators.cpu.math.promotion import OPS, infer_dtype, promote, result_dtype

SHORT = {
    "b": np.bool_,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "f32": np.float32,
    "f64": np.float64,
}
NAMES = list(SHORT)

# Result of `left + right` on DALI 2.4.0 (CPU) for every pair of input types: row = left,
# column = right (in NAMES order). ERR = DALI refuses the pipeline.
ADD_TABLE = [
    "  b ERR  u8 u16 u32 u64  i8 i16 i32 i64 f32 f64",
    " u8  u8  u8 u16 u32 u64 i16 i16 i32 i64 f32 f64",
    "u16 u16 u16 u16 u32 u64 i32 i32 i32 i64 f32 f64",
    "u32 u32 u32 u32 u32 u64 i64 i64 i64 i64 f32 f64",
    "u64 u64 u64 u64 u64 u64 i64 i64 i64 i64 f32 f64",
    " i8  i8 i16 i32 i64 i64  i8 i16 i32 i64 f32 f64",
    "i16 i16 i16 i32 i64 i64 i16 i16 i32 i64 f32 f64",
    "i32 i32 i32 i32 i64 i64 i32 i32 i32 i64 f32 f64",
    "i64 i64 i64 i64 i64 i64 i64 i64 i64 i64 f32 f64",
    "f32 f32 f32 f32 f32 f32 f32 f32 f32 f32 f32 f64",
    "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64",
]
TABLE = {
    (row.split()[0], right): cell
    for row in ADD_TABLE
    for right, cell in zip(NAMES, row.split()[1:], strict=True)
}
PAIRS = list(itertools.product(NAMES, NAMES))
SAME_AS_ADD = ["add", "sub", "floordiv", "mod", "pow", "min", "max"]


def outcome(op: str, *types: str) -> str:
    """The short name of the result type, or ERR when the operator refuses the types."""
    try:
        dtype = result_dtype(op, [SHORT[t] for t in types])
    except TypeError:
        return "ERR"
    return next(k for k, v in SHORT.items() if np.dtype(v) == dtype)


def test_table_is_square_and_symmetric() -> None:
    assert len(TABLE) == len(NAMES) ** 2
    assert all(TABLE[a, b] == TABLE[b, a] for a, b in PAIRS)


@pytest.mark.parametrize("op", SAME_AS_ADD)
def test_arithmetic_follows_the_table(op: str) -> None:
    got = {(a, b): outcome(op, a, b) for a, b in PAIRS}
    assert got == TABLE


def test_mul_allows_two_booleans() -> None:
    expected = dict(TABLE)
    expected["b", "b"] = "b"
    assert {(a, b): outcome("mul", a, b) for a, b in PAIRS} == expected


@pytest.mark.parametrize("op", ["truediv", "atan2", "fpow"])
def test_floating_ops_turn_integers_into_float32(op: str) -> None:
    expected = {k: ("f32" if v[0] in "ui" or v == "b" else v) for k, v in TABLE.items()}
    assert {(a, b): outcome(op, a, b) for a, b in PAIRS} == expected


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_give_bool_for_every_pair(op: str) -> None:
    assert {outcome(op, a, b) for a, b in PAIRS} == {"b"}


@pytest.mark.parametrize("op", ["bitand", "bitor", "bitxor", "lshift", "rshift"])
def test_bitwise_ops_refuse_floats_and_allow_booleans(op: str) -> None:
    expected = {
        (a, b): "ERR" if "f" in a + b else ("b" if a == b == "b" else TABLE[a, b]) for a, b in PAIRS
    }
    assert {(a, b): outcome(op, a, b) for a, b in PAIRS} == expected


@pytest.mark.parametrize("op", ["neg", "abs"])
def test_neg_and_abs_keep_the_type_but_refuse_bool(op: str) -> None:
    assert {t: outcome(op, t) for t in NAMES} == {t: "ERR" if t == "b" else t for t in NAMES}


def test_bitnot_keeps_the_type_but_refuses_floats() -> None:
    expected = {t: "ERR" if t.startswith("f") else t for t in NAMES}
    assert {t: outcome("bitnot", t) for t in NAMES} == expected


FLOAT_FUNCTIONS = sorted(name for name, info in OPS.items() if info.rule == "float_unary")


def test_float_function_list_matches_dali() -> None:
    assert (
        sorted(
            [
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
        )
        == FLOAT_FUNCTIONS
    )


@pytest.mark.parametrize("op", FLOAT_FUNCTIONS)
def test_math_functions_give_float32_on_integers(op: str) -> None:
    expected = {t: "ERR" if t == "b" else (t if t.startswith("f") else "f32") for t in NAMES}
    assert {t: outcome(op, t) for t in NAMES} == expected


@pytest.mark.parametrize(
    ("op", "types", "expected"),
    [
        # Observed on DALI 2.4.0, literals already typed (int → i32, float → f32).
        ("add", ("u8", "u8"), "u8"),
        ("add", ("u8", "i8"), "i16"),
        ("add", ("i8", "u16"), "i32"),
        ("add", ("i32", "u32"), "i64"),
        ("add", ("i32", "u64"), "i64"),
        ("add", ("u8", "i32"), "i32"),
        ("add", ("u8", "f32"), "f32"),
        ("add", ("u8", "b"), "u8"),
        ("mod", ("u8", "i32"), "i32"),
        ("pow", ("u8", "i32"), "i32"),
        ("lshift", ("u8", "i32"), "i32"),
        ("max", ("u8", "i8"), "i16"),
        ("clamp", ("u8", "i32", "f32"), "f32"),
        ("clamp", ("u8", "i32", "i32"), "i32"),
        ("clamp", ("u32", "i32", "i32"), "i64"),
        ("clamp", ("u64", "i32", "i32"), "i64"),
        ("clamp", ("i64", "i32", "i32"), "i64"),
        ("clamp", ("i16", "u8", "i8"), "i16"),
        ("clamp", ("b", "i32", "i32"), "i32"),
        ("clamp", ("i8", "b", "b"), "i8"),
        ("clamp", ("b", "b", "b"), "ERR"),
        ("truediv", ("i64", "i64"), "f32"),
        ("truediv", ("i32", "f64"), "f64"),
        ("bitnot", ("b",), "b"),
    ],
)
def test_observed_examples(op: str, types: tuple[str, ...], expected: str) -> None:
    assert outcome(op, *types) == expected


@pytest.mark.parametrize("op", sorted(OPS))
def test_float16_is_refused_with_a_clear_message(op: str) -> None:
    types = [np.float16] + [np.float32] * (OPS[op].arity - 1)
    with pytest.raises(TypeError, match="float16 is not supported on the CPU"):
        result_dtype(op, types)


def test_error_names_the_operator_and_the_types() -> None:
    with pytest.raises(TypeError, match=r"'\+' \(add\) with input types \(BOOL, BOOL\)"):
        result_dtype("add", [np.bool_, np.bool_])
    with pytest.raises(TypeError, match=r"'&' \(bitand\).*\(FLOAT, INT32\).*integer or bool"):
        result_dtype("bitand", [np.float32, np.int32])


@pytest.mark.parametrize(
    ("op", "dtypes", "message"),
    [
        ("add", [np.bool_] * 2, "Inputs to arithmetic operator `\\+` cannot be booleans"),
        ("pow", [np.bool_] * 2, "Inputs to arithmetic operator `pow` cannot be booleans"),
        ("clamp", [np.bool_] * 3, "Inputs to arithmetic operator `clamp` cannot be booleans"),
        ("sqrt", [np.bool_], "Input to arithmetic operator `sqrt` cannot be a boolean"),
        ("neg", [np.bool_], "Input to arithmetic operator `-` cannot be a boolean"),
        ("bitor", [np.int32, np.float32], "Inputs to bitwise operator `\\|` must be of integral"),
        ("bitnot", [np.float64], "Inputs to bitwise operator `~` must be of integral type"),
    ],
)
def test_refusals_are_worded_as_dalis_and_are_runtime_errors(op, dtypes, message) -> None:
    with pytest.raises(RuntimeError, match=message):
        result_dtype(op, dtypes)
    with pytest.raises(TypeError, match=message):
        infer_dtype(op, [from_numpy_dtype(np.dtype(d)) for d in dtypes])


def test_wrong_arity_unknown_op_and_non_numeric_types() -> None:
    with pytest.raises(TypeError, match=r"takes 2 input\(s\), got 3"):
        result_dtype("add", [np.int32] * 3)
    with pytest.raises(ValueError, match="unknown arithmetic operator 'plus'"):
        result_dtype("plus", [np.int32])
    with pytest.raises(TypeError, match="not numeric"):
        result_dtype("add", [np.int32, np.dtype("U3")])
    with pytest.raises(TypeError, match="STRING is not numeric"):
        infer_dtype("add", [DataType.INT32, DataType.STRING])


def test_infer_dtype_speaks_data_types_and_accepts_the_prefix() -> None:
    assert infer_dtype("arithmetic.add", [DataType.UINT8, DataType.INT8]) is DataType.INT16
    assert infer_dtype("lt", [DataType.UINT64, DataType.INT64]) is DataType.BOOL
    assert infer_dtype("sqrt", [DataType.INT64]) is DataType.FLOAT


INTEGERS = [np.dtype(SHORT[t]) for t in NAMES if t[0] in "ui"]
NUMERIC = [np.dtype(v) for v in SHORT.values()]


@given(st.sampled_from(NUMERIC), st.sampled_from(NUMERIC))
def test_promote_is_commutative(a: np.dtype, b: np.dtype) -> None:
    assert promote(a, b) == promote(b, a)


@given(st.sampled_from(INTEGERS), st.sampled_from(INTEGERS))
def test_integer_promotion_holds_both_ranges_unless_capped(a: np.dtype, b: np.dtype) -> None:
    result = promote(a, b)
    capped = {a.kind, b.kind} == {"i", "u"} and np.dtype(np.uint64) in (a, b)
    for t in (a, b):
        fits = np.iinfo(result).min <= np.iinfo(t).min and np.iinfo(t).max <= np.iinfo(result).max
        assert fits or (capped and result == np.int64)


@given(st.sampled_from(NUMERIC), st.sampled_from(NUMERIC), st.sampled_from(NUMERIC))
def test_clamp_is_a_left_fold(a: np.dtype, b: np.dtype, c: np.dtype) -> None:
    if a == b == c == np.bool_:
        return
    assert result_dtype("clamp", [a, b, c]) == promote(promote(a, b), c)
