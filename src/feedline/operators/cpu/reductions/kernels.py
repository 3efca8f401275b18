"""Kernels of the ``reductions.*`` operators: one NumPy reduction per sample.

Types follow DALI: each operator accepts the integer types and float32; the accumulator is the
output type (integer sums wrap around on overflow, as DALI's do) except that floating-point
results are accumulated in float64 and rounded to float32 once. Integer means divide with
truncation toward zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import DataType, from_numpy_dtype, to_numpy_dtype

__all__ = [
    "MaxKernel",
    "MeanKernel",
    "MeanSquareKernel",
    "MinKernel",
    "RmsKernel",
    "StdDevKernel",
    "SumKernel",
    "VarianceKernel",
    "output_layout",
    "reduced_axes",
]

_INTEGERS = tuple(
    np.dtype(t)
    for t in (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64)
)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_INPUTS = (*_INTEGERS, _F32)


def _wide(dtype: np.dtype) -> np.dtype:
    """The 64-bit integer type of ``dtype``'s signedness (float32 stays float32)."""
    if dtype.kind == "u":
        return np.dtype(np.uint64)
    return np.dtype(np.int64) if dtype.kind == "i" else _F32


def reduced_axes(
    op: str, ndim: int, layout: str, axes: Sequence[int] | None, axis_names: str | None
) -> tuple[int, ...]:
    """The sorted non-negative axes a reduction of an ``ndim``-D sample removes.

    Raises:
        ValueError: ``axes`` and ``axis_names`` both given, a repeated axis, or a name that the
            layout lacks.
        IndexError: an axis out of ``[-ndim, ndim - 1]``.
    """
    if axes is not None and axis_names is not None:
        raise ValueError(f"{op}: arguments 'axes' and 'axis_names' are mutually exclusive")
    if axis_names is not None:
        missing = [name for name in axis_names if name not in layout]
        if missing:
            raise ValueError(
                f"{op}: axis {missing[0]!r} of axis_names={axis_names!r} is not present in the "
                f"input layout {layout!r}"
            )
        axes = [layout.index(name) for name in axis_names]
    if axes is None:
        return tuple(range(ndim))
    resolved = []
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise IndexError(
                f"{op}: axis index out of range: {axis} not in range [{-ndim}, {ndim - 1}]"
            )
        axis %= ndim
        if axis in resolved:
            raise ValueError(f"{op}: duplicate axis index {axis}")
        resolved.append(axis)
    return tuple(sorted(resolved))


def output_layout(layout: str, axes: tuple[int, ...], keep_dims: bool) -> str:
    """The layout of a reduction's output: the input's, less the reduced axes unless kept."""
    if keep_dims or not layout:
        return layout
    return "".join(name for i, name in enumerate(layout) if i not in axes)


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _divide_truncating(total: np.ndarray, count: int) -> np.ndarray:
    """``total / count`` rounded toward zero in ``total``'s integer type (0 when nothing)."""
    if count == 0:
        return np.zeros_like(total)
    if total.dtype.kind == "u":
        return total // total.dtype.type(count)
    divisor = total.dtype.type(count)
    return np.where(total < 0, -((-total) // divisor), total // divisor).astype(total.dtype)


class _Reduction(SampleKernel):
    """What every reduction shares: argument checks, axes, layouts and the output type."""

    op: ClassVar[str]

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """The output types allowed for ``dtype`` input; the first is the default."""
        return (dtype,)

    def setup(self) -> None:
        """Check the arguments that do not depend on the data."""
        if self.args["axes"] is not None and self.args["axis_names"] is not None:
            raise ValueError(f"{self.op}: arguments 'axes' and 'axis_names' are mutually exclusive")

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The input's layout less the reduced axes (unless ``keep_dims``)."""
        layout = input_layouts[0] if input_layouts else ""
        if not layout:
            return ("",)
        axes = reduced_axes(
            self.op, len(layout), layout, self.args["axes"], self.args["axis_names"]
        )
        return (output_layout(layout, axes, self.args["keep_dims"]),)

    def _axes(self, data: np.ndarray, sample: SampleContext) -> tuple[int, ...]:
        layout = sample.layouts[0] if sample.layouts else ""
        return reduced_axes(self.op, data.ndim, layout, self.args["axes"], self.args["axis_names"])

    def _types(self, data: np.ndarray, args: Mapping[str, Any]) -> np.dtype:
        if data.dtype not in _INPUTS:
            raise TypeError(
                f"{self.op}: input type {data.dtype} is not supported; expected uint8, int8, "
                "uint16, int16, uint32, int32, uint64, int64 or float32"
            )
        allowed = self.output_types(data.dtype)
        requested: DataType | None = args.get("dtype")
        if requested is None or requested == DataType.NO_TYPE:
            return allowed[0]
        out = to_numpy_dtype(requested)
        if out not in allowed:
            names = ", ".join(from_numpy_dtype(t).name for t in allowed)
            raise TypeError(
                f"{self.op}: argument 'dtype' = {requested.name} is not supported for "
                f"{from_numpy_dtype(data.dtype).name} input; expected {names}"
            )
        return out

    def reduce(
        self, data: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """The reduction of one sample over ``axes`` (kept as extent 1), of type ``out``."""
        raise NotImplementedError

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Reduce one sample."""
        data = inputs[0]
        out = self._types(data, args)
        axes = self._axes(data, sample)
        result = self.reduce(data, axes, out, inputs[1:])
        if not args["keep_dims"]:
            result = result.reshape([n for i, n in enumerate(result.shape) if i not in axes])
        return result


class MinKernel(_Reduction):
    """``reductions.min``."""

    op = "reductions.min"

    def reduce(
        self, data: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """The minimum (the type's largest value when empty)."""
        info = np.finfo(out) if out.kind == "f" else np.iinfo(out)
        return np.min(data, axis=axes, keepdims=True, initial=info.max)


class MaxKernel(_Reduction):
    """``reductions.max``."""

    op = "reductions.max"

    def reduce(
        self, data: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """The maximum (the type's lowest value when empty)."""
        info = np.finfo(out) if out.kind == "f" else np.iinfo(out)
        return np.max(data, axis=axes, keepdims=True, initial=info.min)


def _sum(data: np.ndarray, axes: tuple[int, ...], out: np.dtype) -> np.ndarray:
    """Sum in ``out`` (wrapping for integers), floats accumulated in float64."""
    accumulator = _F64 if out.kind == "f" else out
    return np.add.reduce(data, axis=axes, dtype=accumulator, keepdims=True)


def _sum_squares(data: np.ndarray, axes: tuple[int, ...], accumulator: np.dtype) -> np.ndarray:
    """Sum of squares, each square and the sum computed in ``accumulator`` (integers wrap)."""
    values = data.astype(accumulator)
    return np.add.reduce(values * values, axis=axes, dtype=accumulator, keepdims=True)


def _mean(total: np.ndarray, count: int, out: np.dtype) -> np.ndarray:
    """``total / count`` in ``out``: truncated for integers, NaN for an empty float mean."""
    if out.kind != "f":
        return _divide_truncating(total, count)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (total / count).astype(out)


class SumKernel(_Reduction):
    """``reductions.sum``."""

    op = "reductions.sum"

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """The 64-bit widening (default), the input type, or float32 for narrower integers."""
        wide = _wide(dtype)
        if dtype == wide:
            return (wide,)
        return (wide, dtype, _F32)

    def reduce(
        self, data: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """The sum."""
        return _sum(data, axes, out).astype(out, copy=False)


class MeanKernel(_Reduction):
    """``reductions.mean``."""

    op = "reductions.mean"

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """float32 (default) or the input type."""
        return (_F32,) if dtype == _F32 else (_F32, dtype)

    def reduce(
        self, data: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """The mean."""
        return _mean(_sum(data, axes, out), _count(data.shape, axes), out)


class MeanSquareKernel(_Reduction):
    """``reductions.mean_square``."""

    op = "reductions.mean_square"

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """float32 (default) or the input's 64-bit integer widening."""
        return (_F32,) if dtype == _F32 else (_F32, _wide(dtype))

    def reduce(
        self, data: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """The mean of the squares."""
        accumulator = _F64 if out.kind == "f" else out
        return _mean(_sum_squares(data, axes, accumulator), _count(data.shape, axes), out)


class RmsKernel(_Reduction):
    """``reductions.rms``."""

    op = "reductions.rms"

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """float32 (default) or the input type."""
        return (_F32,) if dtype == _F32 else (_F32, dtype)

    def reduce(
        self, data: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """The root of the mean of the squares."""
        count = _count(data.shape, axes)
        if out.kind == "f":
            squares = _sum_squares(data, axes, _F64)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.sqrt(squares / count).astype(out)
        squares = _sum_squares(data, axes, out)
        if count == 0:
            return np.zeros_like(squares)
        # A sum that wrapped around to a negative value has no root: DALI gives 0 there.
        root = np.sqrt(np.maximum(squares.astype(_F64), 0.0) / count)
        return np.trunc(root).astype(out)


class _Deviation(_Reduction):
    """``std_dev`` and ``variance``: squared deviations from the ``mean`` input."""

    root: ClassVar[bool]

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """Always float32."""
        return (_F32,)

    def reduce(
        self, data: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """The variance (or its root) around the given mean."""
        (mean,) = extra
        if mean.dtype != _F32:
            raise TypeError(f"{self.op}: the mean must be float32, got {mean.dtype}")
        if not axes:
            return np.zeros(data.shape, _F32)  # nothing reduced: no deviation, as in DALI
        kept = tuple(1 if i in axes else n for i, n in enumerate(data.shape))
        if mean.size == 1:
            mean = mean.reshape(())
        elif mean.size == int(np.prod(kept)):
            mean = mean.reshape(kept)
        else:
            raise ValueError(
                f"{self.op}: the mean has shape {mean.shape}, but the reduction of a sample of "
                f"shape {data.shape} over axes {list(axes)} has {int(np.prod(kept))} elements"
            )
        deviations = data.astype(_F64) - mean.astype(_F64)
        total = np.add.reduce(deviations * deviations, axis=axes, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            result = total / float(_count(data.shape, axes) - self.args["ddof"])
            if self.root:
                result = np.sqrt(result)
        return result.astype(_F32)


class StdDevKernel(_Deviation):
    """``reductions.std_dev``."""

    op = "reductions.std_dev"
    root = True


class VarianceKernel(_Deviation):
    """``reductions.variance``."""

    op = "reductions.variance"
    root = False
