"""CPU kernels of the arithmetic operators (``x + y``, ``feedline.math.*``), written with NumPy.

Every operator is an elementwise function over NumPy arrays (:func:`evaluate`) with DALI's
semantics (``docs/semantics/arithmetic.md``): C-style integer ``//`` and ``%``, integer division
by zero is an error,
float ``//`` is plain division, integer ``pow`` with a negative exponent gives 0, ``min``/``max``
pick like ``a < b ? a : b``; comparisons involving a float convert both operands to the promoted
type first (``float32 < int64`` compares in float32) and comparisons of two integers (any
signedness) are exact, as DALI's ``safe_compare``. :class:`ArithmeticKernel`
runs one of them on whole batches: when every input is dense it makes one NumPy call over the
``(batch, ...)`` buffers; otherwise it loops over samples. Samples broadcast NumPy-style (outer
unit dimensions are added to the operand with fewer dimensions).

Where DALI's result is undefined or an artefact of its implementation, NumPy's well-defined value
is used instead: shift counts outside ``[0, bits)``, ``rsqrt(0)`` (``inf``; DALI 2.4 gives nan),
``abs(-0.0)`` (``0.0``) and ``INT_MIN // -1`` (wraps to ``INT_MIN``; DALI 2.4 crashes).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from feedline.core.kernel import Batch, Kernel, KernelContext
from feedline.core.tensor import TensorListCPU
from feedline.operators.cpu.math.promotion import OPS, OpInfo, promote, result_dtype

__all__ = ["ArithmeticKernel", "evaluate", "output_layout"]

Arrays = Sequence[np.ndarray]
OpFunction = Callable[[Arrays, np.dtype], np.ndarray]

_UINT8 = np.dtype(np.uint8)
_UINT64 = np.dtype(np.uint64)


def _cast(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return array if array.dtype == dtype else array.astype(dtype)


def _casting(ufunc: np.ufunc) -> OpFunction:
    """Cast both inputs to the result type, then apply binary ``ufunc``."""

    def run(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
        left, right = arrays
        return ufunc(_cast(left, dtype), _cast(right, dtype))

    return run


def _floating(ufunc: np.ufunc) -> OpFunction:
    """Like :func:`_casting`, with floating-point warnings silenced (inf and nan are results)."""

    def run(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
        with np.errstate(all="ignore"):
            return ufunc(*(_cast(a, dtype) for a in arrays))

    return run


def _check_divisor(divisor: np.ndarray, symbol: str) -> None:
    if not divisor.all():
        raise ZeroDivisionError(f"integer division by zero in arithmetic operator {symbol!r}")


def _truediv(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
    left, right = (_cast(a, dtype) for a in arrays)
    with np.errstate(all="ignore"):
        return np.true_divide(left, right)


def _floordiv(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "f":
        return _truediv(arrays, dtype)
    left, right = (_cast(a, dtype) for a in arrays)
    _check_divisor(right, "//")
    if dtype.kind == "u":
        return np.floor_divide(left, right)
    # Truncate toward zero: remove C's remainder first, then the division is exact.
    with np.errstate(over="ignore"):
        return np.floor_divide(left - np.fmod(left, right), right)


def _mod(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
    left, right = (_cast(a, dtype) for a in arrays)
    if dtype.kind != "f":
        _check_divisor(right, "%")
    with np.errstate(all="ignore"):
        return np.fmod(left, right)


def _pow(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
    base, exponent = (_cast(a, dtype) for a in arrays)
    if dtype.kind == "f":
        with np.errstate(all="ignore"):
            return np.power(base, exponent)
    if dtype.kind == "i":
        negative = exponent < 0
        if negative.any():
            result = np.power(base, np.where(negative, 0, exponent))
            return np.where(negative, dtype.type(0), result)
    return np.power(base, exponent)


def _pick(compare: np.ufunc, exact: np.ufunc) -> OpFunction:
    """``min``/``max``: ``a OP b ? a : b`` on floats (NaN handling as in C), ``exact`` on ints."""

    def run(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
        left, right = (_cast(a, dtype) for a in arrays)
        if dtype.kind == "f":
            return np.where(compare(left, right), left, right)
        return exact(left, right)

    return run


def _clamp(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
    value, low, high = (_cast(a, dtype) for a in arrays)
    return np.minimum(np.maximum(value, low), high)


def _shift(ufunc: np.ufunc) -> OpFunction:
    def run(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
        if dtype.kind == "b":
            return ufunc(*(a.astype(_UINT8) for a in arrays)) != 0
        return ufunc(*(_cast(a, dtype) for a in arrays))

    return run


def _compare(ufunc: np.ufunc, python_op: Callable[[int, int], bool]) -> OpFunction:
    """Comparisons: floats in the promoted type, integers by exact value."""

    def run(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
        left, right = arrays
        common = promote(left.dtype, right.dtype)
        if common.kind == "f":
            return ufunc(_cast(left, common), _cast(right, common))
        if left.dtype == _UINT64 and right.dtype.kind == "i":
            return np.where(right < 0, python_op(1, 0), ufunc(left, right.astype(_UINT64)))
        if right.dtype == _UINT64 and left.dtype.kind == "i":
            return np.where(left < 0, python_op(0, 1), ufunc(left.astype(_UINT64), right))
        return ufunc(_cast(left, common), _cast(right, common))

    return run


def _rsqrt(array: np.ndarray) -> np.ndarray:
    root = np.sqrt(array)
    return np.divide(1, root, out=root)


def _float_unary(function: Callable[[np.ndarray], np.ndarray]) -> OpFunction:
    def run(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
        with np.errstate(all="ignore"):
            return function(_cast(arrays[0], dtype))

    return run


def _keep(ufunc: np.ufunc) -> OpFunction:
    def run(arrays: Arrays, dtype: np.dtype) -> np.ndarray:
        return ufunc(arrays[0])

    return run


_FUNCTIONS: dict[str, OpFunction] = {
    "add": _casting(np.add),
    "sub": _casting(np.subtract),
    "mul": _casting(np.multiply),
    "truediv": _truediv,
    "floordiv": _floordiv,
    "mod": _mod,
    "pow": _pow,
    "min": _pick(np.less, np.minimum),
    "max": _pick(np.greater, np.maximum),
    "atan2": _floating(np.arctan2),
    "fpow": _floating(np.power),
    "clamp": _clamp,
    "bitand": _casting(np.bitwise_and),
    "bitor": _casting(np.bitwise_or),
    "bitxor": _casting(np.bitwise_xor),
    "lshift": _shift(np.left_shift),
    "rshift": _shift(np.right_shift),
    "eq": _compare(np.equal, operator.eq),
    "ne": _compare(np.not_equal, operator.ne),
    "lt": _compare(np.less, operator.lt),
    "le": _compare(np.less_equal, operator.le),
    "gt": _compare(np.greater, operator.gt),
    "ge": _compare(np.greater_equal, operator.ge),
    "neg": _keep(np.negative),
    "abs": _keep(np.abs),
    "bitnot": _keep(np.invert),
    "fabs": _float_unary(np.abs),
    "floor": _float_unary(np.floor),
    "ceil": _float_unary(np.ceil),
    "sqrt": _float_unary(np.sqrt),
    "rsqrt": _float_unary(_rsqrt),
    "cbrt": _float_unary(np.cbrt),
    "exp": _float_unary(np.exp),
    "log": _float_unary(np.log),
    "log2": _float_unary(np.log2),
    "log10": _float_unary(np.log10),
    "sin": _float_unary(np.sin),
    "cos": _float_unary(np.cos),
    "tan": _float_unary(np.tan),
    "asin": _float_unary(np.arcsin),
    "acos": _float_unary(np.arccos),
    "atan": _float_unary(np.arctan),
    "sinh": _float_unary(np.sinh),
    "cosh": _float_unary(np.cosh),
    "tanh": _float_unary(np.tanh),
    "asinh": _float_unary(np.arcsinh),
    "acosh": _float_unary(np.arccosh),
    "atanh": _float_unary(np.arctanh),
}


def _run(info: OpInfo, arrays: Arrays, dtype: np.dtype) -> np.ndarray:
    result = np.asarray(_FUNCTIONS[info.name](arrays, dtype))
    return result if result.dtype == dtype else result.astype(dtype)


def _broadcast_shape(
    info: OpInfo, shapes: Sequence[tuple[int, ...]], where: str
) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        shown = " and ".join(str(s) for s in shapes)
        raise ValueError(
            f"arithmetic operator {info.symbol!r} ({info.name}): {where}shapes {shown} cannot be "
            "broadcast together (dimensions must be equal or 1, aligned from the last)"
        ) from None


def evaluate(op: str, *arrays: Any) -> np.ndarray:
    """Apply arithmetic operator ``op`` to NumPy arrays (one sample), with DALI's semantics.

    Args:
        op: the operator name, with or without the ``arithmetic.`` prefix (``"floordiv"``).
        *arrays: the operands (anything ``np.asarray`` accepts), broadcast NumPy-style.

    Returns:
        A new array of the promoted result type.

    Raises:
        TypeError: a type combination the operator refuses.
        ValueError: shapes that do not broadcast.
        ZeroDivisionError: integer ``//`` or ``%`` by zero.
    """
    operands = [np.asarray(a) for a in arrays]
    dtype = result_dtype(op, [a.dtype for a in operands])
    info = OPS[op.removeprefix("arithmetic.")]
    _broadcast_shape(info, [a.shape for a in operands], "")
    return _run(info, operands, dtype)


def output_layout(info: OpInfo, layouts: Sequence[str], ndims: Sequence[int]) -> str:
    """The layout of the result: the first non-empty layout among the inputs of highest ndim.

    Raises:
        ValueError: two non-empty layouts where neither is a suffix of the other.
    """
    given = [(i, layout) for i, layout in enumerate(layouts) if layout]
    for position, (i, first) in enumerate(given):
        for j, second in given[position + 1 :]:
            if not (first.endswith(second) or second.endswith(first)):
                raise ValueError(
                    f"arithmetic operator {info.symbol!r} ({info.name}): layouts {first!r} "
                    f"(input {i}) and {second!r} (input {j}) do not match; they must be equal "
                    "or one must be a suffix of the other"
                )
    top = max(ndims, default=0)
    return next((lay for lay, nd in zip(layouts, ndims, strict=True) if lay and nd == top), "")


def _is_scalar_constant(tl: TensorListCPU) -> bool:
    """Whether every sample of ``tl`` is the same single value."""
    if not len(tl) or not tl.is_dense_tensor():
        return False
    array = tl.as_array()
    return array[0].size == 1 and bool(np.all(array == array[:1]))


def _fit_constants(inputs: Sequence[TensorListCPU]) -> Sequence[TensorListCPU]:
    """The inputs, with a batch of one and the same scalar in every sample (a Python number or
    ``types.Constant`` in the expression) fitted to the size of the others when the batch sizes
    differ: in DALI such a constant is an argument of the operator, not a batch, so it fits the
    batch of a conditional's branch read without a conditional scope (``fn._conditional.split``
    called directly)."""
    if len({len(tl) for tl in inputs}) < 2:
        return inputs
    constant = [_is_scalar_constant(tl) for tl in inputs]
    others = {len(tl) for tl, c in zip(inputs, constant, strict=True) if not c}
    if len(others) > 1:
        return inputs  # batches that disagree: _check reports it
    # The batch of the others; when every input is such a constant, the smallest (a branch's
    # batch is never larger than the iteration's, which constants made outside it have).
    size = others.pop() if others else min(len(tl) for tl in inputs)
    return [
        TensorListCPU.from_dense(tl.as_array()[:1].repeat(size, axis=0), tl.layout())
        if c and len(tl) != size
        else tl
        for tl, c in zip(inputs, constant, strict=True)
    ]


class ArithmeticKernel(Kernel):
    """Batch kernel of every ``arithmetic.<op>`` operator (the op is read from the schema name).

    Dense batches are computed with one NumPy call; the checks (types, layouts, broadcasting) run
    once per combination of input dtypes, shapes and layouts and are then reused.
    """

    _MAX_PLANS = 64

    def __init__(self, ctx: KernelContext) -> None:
        super().__init__(ctx)
        name = ctx.schema.name.removeprefix("arithmetic.")
        if name not in OPS:
            raise ValueError(f"ArithmeticKernel cannot run operator {ctx.schema.name!r}")
        self._info = OPS[name]
        self._function = _FUNCTIONS[name]
        self._plans: dict[tuple[Any, ...], _DensePlan] = {}

    def run(self, batch: Batch) -> Sequence[TensorListCPU]:
        """Compute the operator on one batch (one NumPy call when every input is dense)."""
        inputs = _fit_constants(batch.inputs)
        if len(inputs) == self._info.arity and all(
            tl.is_dense_tensor() and len(tl) for tl in inputs
        ):
            arrays = [tl.as_array() for tl in inputs]
            key = tuple(
                (a.dtype, a.shape, tl.layout()) for a, tl in zip(arrays, inputs, strict=True)
            )
            plan = self._plans.get(key) or self._plan(key, inputs)
            if plan.reshapes is None:
                padded = arrays
            else:
                padded = [
                    a if shape is None else a.reshape(shape)
                    for a, shape in zip(arrays, plan.reshapes, strict=True)
                ]
            result = self._function(padded, plan.dtype)
            if result.dtype != plan.dtype:
                result = result.astype(plan.dtype)
            return [TensorListCPU.from_dense(result, plan.layout, _source_info(inputs))]
        return [self._run_samples(batch)]

    def _check(self, inputs: Sequence[TensorListCPU]) -> tuple[np.dtype, str]:
        info = self._info
        if len(inputs) != info.arity:
            raise TypeError(
                f"arithmetic operator {info.symbol!r} ({info.name}) takes {info.arity} "
                f"input(s), got {len(inputs)}"
            )
        n = len(inputs[0])
        for i, tl in enumerate(inputs[1:], start=1):
            if len(tl) != n:
                raise ValueError(
                    f"arithmetic operator {info.symbol!r} ({info.name}): input {i} has "
                    f"{len(tl)} samples but input 0 has {n}"
                )
        dtype = result_dtype(info.name, [tl.numpy_dtype for tl in inputs])
        layout = output_layout(info, [tl.layout() for tl in inputs], [tl.ndim for tl in inputs])
        return dtype, layout

    def _plan(self, key: tuple[Any, ...], inputs: Sequence[TensorListCPU]) -> _DensePlan:
        dtype, layout = self._check(inputs)
        shapes = [shape for _, shape, _ in key]
        _broadcast_shape(self._info, [shape[1:] for shape in shapes], "sample ")
        top = max(len(shape) for shape in shapes)
        reshapes = [
            None if len(shape) == top else shape[:1] + (1,) * (top - len(shape)) + shape[1:]
            for shape in shapes
        ]
        plan = _DensePlan(dtype, layout, None if not any(reshapes) else reshapes)
        if len(self._plans) >= self._MAX_PLANS:
            self._plans.clear()
        self._plans[key] = plan
        return plan

    def _run_samples(self, batch: Batch) -> TensorListCPU:
        inputs = _fit_constants(batch.inputs)
        dtype, layout = self._check(inputs)
        n = len(inputs[0])
        if n == 0:
            empty = np.empty((0,) + (0,) * max(tl.ndim for tl in inputs), dtype=dtype)
            return TensorListCPU.from_dense(empty, layout)
        info = self._info
        samples = [tl.samples() for tl in inputs]

        def one(index: int) -> np.ndarray:
            operands = [s[index] for s in samples]
            _broadcast_shape(info, [a.shape for a in operands], f"sample {index}: ")
            return _run(info, operands, dtype)

        return TensorListCPU.from_samples(batch.map(one, n), layout, _source_info(inputs))


class _DensePlan(NamedTuple):
    """What a dense batch of one input signature needs: result type, layout, reshapes."""

    dtype: np.dtype
    layout: str
    reshapes: list[tuple[int, ...] | None] | None


def _source_info(inputs: Sequence[TensorListCPU]) -> list[str] | None:
    """The per-sample origins of the first input that has them (None when none has)."""
    origin = next((tl for tl in inputs if len(tl) and tl.source_info(0)), None)
    return origin.source_infos() if origin is not None else None
