"""GPU kernel of the arithmetic operators (``x + y``, ``feedline.math.*``): operands are
converted to the computation type as the CPU kernel converts them, then one ``flg_math`` launch
computes every sample with broadcasting (see ``kernels/math.cu`` for the semantics)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.operators.cpu.math.kernels import (
    _FUNCTIONS,
    ArithmeticKernel,
    _broadcast_shape,
)
from feedline.operators.cpu.math.promotion import promote
from feedline.operators.gpu.backend import Backend, type_id
from feedline.operators.gpu.base import GpuBatch, GpuKernel, Outputs

__all__ = ["OPS", "ArithmeticGpu"]

#: Operator numbers of ``flg_math`` (the order of its enum in ``kernels/math.cu``).
OPS = (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "min", "max", "atan2", "fpow",
    "bitand", "bitor", "bitxor", "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge", "neg",
    "abs", "bitnot", "fabs", "floor", "ceil", "sqrt", "rsqrt", "cbrt", "exp", "log", "log2",
    "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "clamp",
)  # fmt: skip
_COMPARE = frozenset(("eq", "ne", "lt", "le", "gt", "ge"))
_KEEP = frozenset(("neg", "abs", "bitnot"))
_SHIFT = frozenset(("lshift", "rshift"))
_DIVIDE = frozenset(("floordiv", "mod"))
_MAX_DIMS = 6
_BOOL = np.dtype(np.bool_)
_UINT64 = np.dtype(np.uint64)


def _row(shape: tuple[int, ...], operands: Sequence[Any]) -> list[int]:
    """A sample's descriptor: the output shape and each operand's broadcast strides."""
    ndim = len(shape)
    row = [*shape, *[0] * (_MAX_DIMS - ndim)]
    for k in range(3):
        strides = [0] * _MAX_DIMS
        if k < len(operands):
            operand = operands[k]
            extents = (1,) * (ndim - operand.ndim) + tuple(operand.shape)
            steps = (0,) * (ndim - operand.ndim) + tuple(
                s // operand.itemsize for s in operand.strides
            )
            strides[:ndim] = [0 if e == 1 else st for e, st in zip(extents, steps, strict=True)]
        row += strides
    return row


class _Input:
    """What the CPU kernel's checks read of an input batch, for a list of device arrays."""

    def __init__(self, samples: list[Any], layout: str) -> None:
        self._samples, self._layout = samples, layout
        self.numpy_dtype = samples[0].dtype if samples else np.dtype(np.uint8)
        self.ndim = samples[0].ndim if samples else 0

    def __len__(self) -> int:
        return len(self._samples)

    def layout(self) -> str:
        return self._layout


class ArithmeticGpu(GpuKernel, ArithmeticKernel):
    """Every ``arithmetic.<op>`` operator on the GPU."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Compute the operator on one batch (one launch)."""
        backend, inputs, layouts = batch.backend, batch.inputs, batch.layouts
        info = self._info
        dtype, layout = self._check(
            [_Input(x, lay) for x, lay in zip(inputs, layouts, strict=True)]
        )
        n = len(inputs[0])
        if n == 0:
            return [([], layout)]
        kinds = [x[0].dtype for x in inputs]
        if info.name in _COMPARE:
            work = promote(kinds[0], kinds[1])
            if work.kind != "f" and _UINT64 in kinds and any(k.kind == "i" for k in kinds):
                return [(self._fallback(backend, inputs, dtype), layout)]
        elif info.name in _KEEP:
            work = kinds[0]
        elif info.name in _SHIFT and dtype == _BOOL:
            work = np.dtype(np.uint8)
        else:
            work = dtype
        out_dtype = _BOOL if info.name in _COMPARE else work
        xp = backend.xp
        rows, operands, shapes = [], [], []
        for i in range(n):
            sample = [x[i] for x in inputs]
            shape = _broadcast_shape(info, [a.shape for a in sample], f"sample {i}: ")
            converted = [xp.ascontiguousarray(a.astype(work, copy=False)) for a in sample]
            rows.append(_row(tuple(shape), converted))
            operands += converted
            shapes.append(tuple(shape))
        outs = backend.output(shapes, out_dtype)
        error = backend.asarray(np.zeros(1, np.int32))
        backend.call(
            "flg_math",
            OPS.index(info.name),
            type_id(work),
            info.arity,
            max(len(s) for s in shapes),
            n,
            max(max(int(np.prod(s)) for s in shapes), 1),
            backend.asarray(rows, np.int64),
            backend.pointers(operands),
            backend.pointers([o.reshape(-1) if o.ndim == 0 else o for o in outs]),
            error,
        )
        if info.name in _DIVIDE and work.kind in "iu":
            flag = error.get() if hasattr(error, "get") else error
            if flag[0]:
                raise ZeroDivisionError(
                    f"integer division by zero in arithmetic operator {info.symbol!r}"
                )
        if out_dtype != dtype:
            outs = [o != 0 if dtype == _BOOL else o.astype(dtype) for o in outs]
        return [(outs, layout)]

    def _fallback(self, backend: Backend, inputs: Sequence[list[Any]], dtype: np.dtype) -> list:
        """Comparisons of uint64 with signed integers: the CPU kernel's exact rule, evaluated
        with the array module's ufuncs (no kernel needed: two passes over the data)."""
        function = _FUNCTIONS[self._info.name]
        return [
            function([x[i] for x in inputs], dtype).astype(dtype) for i in range(len(inputs[0]))
        ]
