"""Arithmetic kernels: elementwise semantics (against Python integers) and batch handling."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline.core.kernel import Batch, KernelContext
from feedline.core.schema import InputSpec, OpSchema
from feedline.core.tensor import TensorListCPU
from feedline.operators.cpu.math.kernels import ArithmeticKernel, evaluate, output_layout
from feedline.operators.cpu.math.promotion import OPS
from feedline.operators.cpu.math.schemas import SCHEMAS

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
SCHEMA_BY_NAME = {s.name.removeprefix("arithmetic."): s for s in SCHEMAS}


def wrap(value: int, dtype: np.dtype) -> int:
    """``value`` reduced modulo 2**bits into the range of integer ``dtype``."""
    info = np.iinfo(dtype)
    span = 1 << info.bits
    return (value - info.min) % span + info.min


def int_arrays(dtype: type, size: int = 8) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(dtype, size, elements=hnp.from_dtype(np.dtype(dtype)))


def c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@settings(max_examples=60)
@given(st.sampled_from(INT_TYPES), st.data())
def test_integer_floordiv_and_mod_are_c_style(dtype: type, data: st.DataObject) -> None:
    a = data.draw(int_arrays(dtype))
    b = data.draw(int_arrays(dtype).filter(lambda x: bool(x.all())))
    q, r = evaluate("floordiv", a, b), evaluate("mod", a, b)
    assert q.dtype == r.dtype == np.dtype(dtype)
    for x, y, qq, rr in zip(a.tolist(), b.tolist(), q.tolist(), r.tolist(), strict=True):
        assert qq == wrap(c_div(x, y), np.dtype(dtype))
        assert rr == x - c_div(x, y) * y


def test_observed_division_examples() -> None:
    a = np.array([-7, 7, -7, 7, -8], np.int32)
    b = np.array([2, -2, -2, 2, 3], np.int32)
    assert evaluate("floordiv", a, b).tolist() == [-3, -3, 3, 3, -2]
    assert evaluate("mod", a, b).tolist() == [-1, 1, -1, 1, -2]
    x = np.array([-7.5, 7.5, 1.0, 0.0], np.float32)
    y = np.array([2.0, 2.0, 0.0, 0.0], np.float32)
    np.testing.assert_array_equal(evaluate("floordiv", x, y), [-3.75, 3.75, np.inf, np.nan])
    np.testing.assert_array_equal(evaluate("mod", x, y), [-1.5, 1.5, np.nan, np.nan])
    np.testing.assert_array_equal(
        evaluate("truediv", np.array([-7, 7, 0]), np.array([0, 0, 0])), [-np.inf, np.inf, np.nan]
    )
    assert evaluate("truediv", np.uint8(7), np.uint8(2)).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_most_negative_integer_divided_by_minus_one_wraps_quietly(dtype: type) -> None:
    lowest = np.array([np.iinfo(dtype).min], dtype)
    assert evaluate("floordiv", lowest, dtype(-1)).tolist() == lowest.tolist()
    assert evaluate("mod", lowest, dtype(-1)).tolist() == [0]


@pytest.mark.parametrize("op", ["floordiv", "mod"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
def test_integer_division_by_zero_is_an_error(op: str, dtype: type) -> None:
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        evaluate(op, np.array([6, 7], np.int32), np.array([1, 0], dtype))


@settings(max_examples=60)
@given(st.sampled_from(INT_TYPES), st.sampled_from(INT_TYPES), st.data())
def test_add_sub_mul_wrap_in_the_promoted_type(
    left: type, right: type, data: st.DataObject
) -> None:
    a, b = data.draw(int_arrays(left)), data.draw(int_arrays(right))
    for op, py in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul)):
        result = evaluate(op, a, b)
        expected = [
            wrap(py(wrap(x, result.dtype), wrap(y, result.dtype)), result.dtype)
            for x, y in zip(a.tolist(), b.tolist(), strict=True)
        ]
        assert result.tolist() == expected


COMPARISONS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


@settings(max_examples=80)
@given(st.sampled_from([*INT_TYPES, np.bool_]), st.sampled_from(INT_TYPES), st.data())
def test_integer_comparisons_are_exact(left: type, right: type, data: st.DataObject) -> None:
    a = data.draw(hnp.arrays(left, 6, elements=hnp.from_dtype(np.dtype(left))))
    b = data.draw(int_arrays(right, 6))
    for op, py in COMPARISONS.items():
        assert evaluate(op, a, b).tolist() == [
            py(x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)
        ]
        assert evaluate(op, b, a).tolist() == [
            py(y, x) for x, y in zip(a.tolist(), b.tolist(), strict=True)
        ]


def test_mixed_sign_64_bit_comparisons_and_float_promotion() -> None:
    big = np.array([2**64 - 1, 2**63, 5], np.uint64)
    small = np.array([-1, 0, 7], np.int64)
    assert evaluate("eq", big, small).tolist() == [False, False, False]
    assert evaluate("lt", big, small).tolist() == [False, False, True]
    assert evaluate("ge", small, big).tolist() == [False, False, True]
    # int32 vs float32 compares in float32, as in DALI: 2**24 + 1 rounds to 2**24.
    assert evaluate("eq", np.int32(2**24 + 1), np.float32(2**24)).item() is True


def reference_pow(base: int, exponent: int, dtype: np.dtype) -> int:
    return 0 if exponent < 0 else wrap(pow(base, exponent, 1 << np.iinfo(dtype).bits), dtype)


@settings(max_examples=60)
@given(
    st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.uint32]),
    st.lists(st.tuples(st.integers(-100, 100), st.integers(-5, 70)), min_size=1, max_size=8),
)
def test_integer_pow_wraps_and_negative_exponents_give_zero(
    dtype: type, pairs: list[tuple[int, int]]
) -> None:
    np_dtype = np.dtype(dtype)
    bases = np.array([wrap(b, np_dtype) for b, _ in pairs], dtype)
    exponents = np.array([wrap(e, np_dtype) for _, e in pairs], dtype)
    result = evaluate("pow", bases, exponents)
    assert result.dtype == np_dtype
    expected = [
        reference_pow(b, e, np_dtype)
        for b, e in zip(bases.tolist(), exponents.tolist(), strict=True)
    ]
    assert result.tolist() == expected


def test_min_max_clamp_edge_cases() -> None:
    nan = np.float32(np.nan)
    left, right = np.array([nan, 1], np.float32), np.array([1, nan], np.float32)
    np.testing.assert_array_equal(evaluate("min", left, right), [1, np.nan])
    np.testing.assert_array_equal(evaluate("max", left, right), [1, np.nan])
    assert evaluate("min", np.uint8(200), np.int8(-3)).tolist() == -3
    values = np.array([0, 3, 6], np.float32)
    assert evaluate("clamp", values, np.float32(5), np.float32(2)).tolist() == [2, 2, 2]
    assert np.isnan(evaluate("clamp", nan, np.float32(0), np.float32(1)))
    clamped = evaluate("clamp", np.array([0, 1, 5], np.uint8), np.int32(0), np.float32(2.5))
    assert clamped.dtype == np.float32
    assert clamped.tolist() == [0, 1, 2.5]
    big = evaluate("clamp", np.uint64(2**63 + 1), np.int64(-5), np.int64(100))
    assert big.tolist() == -5


def test_unary_and_shift_semantics() -> None:
    assert evaluate("neg", np.array([3, 0], np.uint8)).tolist() == [253, 0]
    assert evaluate("abs", np.array([-128, -3], np.int8)).tolist() == [-128, 3]
    assert evaluate("bitnot", np.array([True, False])).tolist() == [False, True]
    assert evaluate("bitnot", np.array([0], np.uint8)).tolist() == [255]
    shifted = evaluate("lshift", np.array([200, 1, 1], np.uint8), np.array([1, 8, 9], np.uint8))
    assert shifted.tolist() == [144, 0, 0]
    assert evaluate("lshift", np.uint8(200), np.int32(1)).tolist() == 400
    bools = np.array([True, True]), np.array([True, False])
    assert evaluate("lshift", *bools).tolist() == [True, True]
    assert evaluate("rshift", *bools).tolist() == [False, True]
    assert evaluate("rshift", np.array([-8, -128], np.int8), np.int8(1)).tolist() == [-4, -64]


UNARY_REFERENCE = {
    "fabs": abs,
    "floor": math.floor,
    "ceil": math.ceil,
    "sqrt": math.sqrt,
    "rsqrt": lambda x: 1 / math.sqrt(x),
    "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x),
    "exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "sinh": math.sinh,
    "cosh": math.cosh,
    "tanh": math.tanh,
    "asinh": math.asinh,
    "acosh": math.acosh,
    "atanh": math.atanh,
}
DOMAIN = {"asin": [-1, 0, 1], "acos": [-1, 0, 1], "atanh": [0], "acosh": [1, 2, 5]}


@pytest.mark.parametrize("op", sorted(UNARY_REFERENCE))
@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.float32, np.float64])
def test_math_functions_match_python_math(op: str, dtype: type) -> None:
    values = [v for v in DOMAIN.get(op, [1, 2, 3, 7]) if v >= 0 or np.dtype(dtype).kind != "u"]
    result = evaluate(op, np.array(values, dtype))
    assert result.dtype == (np.dtype(dtype) if np.dtype(dtype).kind == "f" else np.float32)
    expected = [UNARY_REFERENCE[op](v) for v in values]
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_math_functions_outside_their_domain_give_nan_or_inf() -> None:
    np.testing.assert_array_equal(evaluate("sqrt", np.array([-1, 4])), [np.nan, 2])
    np.testing.assert_array_equal(evaluate("log", np.array([0, -1])), [-np.inf, np.nan])
    np.testing.assert_allclose(evaluate("rsqrt", np.array([0, 4])), [np.inf, 0.5])
    np.testing.assert_allclose(evaluate("atan2", np.int32(1), np.int32(1)), math.pi / 4)
    assert evaluate("fpow", np.int32(2), np.int32(-1)).tolist() == 0.5
    assert np.isnan(evaluate("pow", np.float32(-8), np.float32(0.5)))


def test_evaluate_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(2,\) cannot be broadcast"):
        evaluate("add", np.ones((2, 3)), np.ones(2))


# --------------------------------------------------------------------------- batch kernel


def make_kernel(op: str) -> ArithmeticKernel:
    ctx = KernelContext(
        name=f"__{op}_0",
        schema=SCHEMA_BY_NAME[op],
        args={},
        tensor_args=frozenset(),
        device="cpu",
        batch_size=8,
        num_threads=1,
        seed=0,
        device_id=None,
    )
    kernel = ArithmeticKernel(ctx)
    kernel.setup()
    return kernel


def run(op: str, *inputs: TensorListCPU) -> TensorListCPU:
    def serial(fn: Callable[[int], np.ndarray], n: int) -> list[np.ndarray]:
        return [fn(i) for i in range(n)]

    batch = Batch(list(inputs), {}, iteration=0, size=len(inputs[0]), seed=0, mapper=serial)
    (out,) = make_kernel(op).run(batch)
    return out


def test_every_operator_has_a_schema_and_a_function() -> None:
    assert set(SCHEMA_BY_NAME) == set(OPS)
    for name, schema in SCHEMA_BY_NAME.items():
        assert schema.hidden
        assert len(schema.inputs) == OPS[name].arity


def test_dense_batch_broadcasts_per_sample_with_constants() -> None:
    x = TensorListCPU.from_samples([np.full((2, 3), i, np.uint8) for i in range(4)], "HW")
    const = TensorListCPU.from_samples([np.array(10, np.int32)] * 4)
    row = TensorListCPU.from_samples([np.arange(3, dtype=np.int8)] * 4)
    out = run("add", x, const)
    assert out.is_dense_tensor()
    assert out.layout() == "HW"
    assert out.dtype.name == "INT32"
    assert [s.tolist() for s in out.samples()] == [[[10 + i] * 3] * 2 for i in range(4)]
    out = run("mul", row, x)
    assert out.dtype.name == "INT16"
    assert out.samples()[3].tolist() == [[0, 3, 6]] * 2


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[np.ndarray], list[np.ndarray]]:
    n = draw(st.integers(1, 4))
    ndim = draw(st.integers(0, 3))
    left, right = [], []
    for _ in range(n):
        shape = draw(hnp.array_shapes(min_dims=ndim, max_dims=ndim, min_side=1, max_side=3))
        other = tuple(draw(st.sampled_from([1, side])) for side in shape)
        drop = draw(st.integers(0, ndim))
        left.append(draw(hnp.arrays(np.int16, shape, elements=st.integers(-50, 50))))
        right.append(draw(hnp.arrays(np.float32, other[drop:], elements=st.integers(-5, 5))))
    return left, right


@settings(max_examples=60, deadline=None)
@given(batches(), st.sampled_from(["add", "sub", "mul", "max", "lt", "truediv"]))
def test_batch_result_equals_per_sample_evaluation(
    data: tuple[list[np.ndarray], list[np.ndarray]], op: str
) -> None:
    left, right = data
    out = run(op, TensorListCPU.from_samples(left), TensorListCPU.from_samples(right))
    assert len(out) == len(left)
    for got, a, b in zip(out.samples(), left, right, strict=True):
        expected = evaluate(op, a, b)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_ragged_batch_and_source_info() -> None:
    samples = [np.ones((2, 3), np.int32), np.ones((4, 3), np.int32)]
    x = TensorListCPU.from_samples(samples, "HW", source_info=["a.jpg", "b.jpg"])
    offset = TensorListCPU.from_samples([np.arange(3, dtype=np.int32)] * 2, "W")
    out = run("sub", offset, x)
    assert not out.is_dense_tensor()
    assert out.shape() == [(2, 3), (4, 3)]
    assert out.layout() == "HW"
    assert [out.source_info(i) for i in range(2)] == ["a.jpg", "b.jpg"]
    assert out.samples()[1].tolist() == [[-1, 0, 1]] * 4


def test_batch_errors_name_the_problem() -> None:
    x = TensorListCPU.from_samples([np.ones((2, 3), np.int32), np.ones((4, 3), np.int32)])
    bad = TensorListCPU.from_samples([np.ones(3, np.int32), np.ones(2, np.int32)])
    with pytest.raises(ValueError, match=r"sample 1: shapes \(4, 3\) and \(2,\)"):
        run("add", x, bad)
    with pytest.raises(ValueError, match="input 1 has 1 samples but input 0 has 2"):
        run("add", x, TensorListCPU.from_samples([np.ones(3, np.int32)]))
    flags = TensorListCPU.from_samples([np.array([True])] * 2)
    with pytest.raises(TypeError, match=r"\(BOOL, BOOL\)"):
        run("add", flags, flags)
    zero = TensorListCPU.from_samples([np.array(0, np.int32)] * 2)
    with pytest.raises(ZeroDivisionError):
        run("floordiv", x, zero)
    hwc = TensorListCPU.from_samples([np.ones((1, 2, 3), np.int32)], "HWC")
    abc = TensorListCPU.from_samples([np.ones((1, 2, 3), np.int32)], "ABC")
    with pytest.raises(ValueError, match="layouts 'HWC' .* and 'ABC'"):
        run("add", hwc, abc)


def test_empty_batch_gives_an_empty_result_of_the_promoted_type() -> None:
    empty = TensorListCPU.from_dense(np.empty((0, 3), np.uint8))
    out = run("add", empty, TensorListCPU.from_dense(np.empty((0,), np.int8)))
    assert len(out) == 0
    assert out.dtype.name == "INT16"


@pytest.mark.parametrize(
    ("layouts", "ndims", "expected"),
    [
        (("HWC", ""), (3, 2), "HWC"),
        (("", "HWC"), (2, 3), "HWC"),
        (("WC", ""), (2, 3), ""),
        (("", "HWC"), (3, 3), "HWC"),
        (("HWC", "WC"), (3, 2), "HWC"),
        (("", ""), (1, 1), ""),
    ],
)
def test_output_layout_rules(
    layouts: tuple[str, ...], ndims: tuple[int, ...], expected: str
) -> None:
    assert output_layout(OPS["add"], layouts, ndims) == expected


def test_kernel_refuses_foreign_schemas() -> None:
    schema = OpSchema("arithmetic.frobnicate", "?", inputs=(InputSpec("x"),), hidden=True)
    ctx = KernelContext("n", schema, {}, frozenset(), "cpu", 1, 1, 0, None)
    with pytest.raises(ValueError, match="cannot run operator 'arithmetic.frobnicate'"):
        ArithmeticKernel(ctx)
