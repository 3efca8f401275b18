"""Kernels of the ``reductions.*`` operators: one NumPy reduction per sample.

Types follow DALI: each operator accepts the integer types and float32; the accumulator is the
output type (integer sums wrap around on overflow, as DALI's do) except that floating-point
results are accumulated in float64 and rounded to float32 once. Integer means divide with
truncation toward zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import ClassVar

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU
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
#: Bytes of work per block of rows in the element-wise passes (see :func:`_row_blocks`).
_BLOCK_BYTES = 1 << 19
#: Types whose sums (and sums of squares) are exact in 64-bit integers and whose values are
#: exact in float32: reduced through integers / float32, which halves the memory traffic.
_NARROW = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16))


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


def as_rows(data: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``data`` as a ``(kept, reduced)`` matrix: one contiguous row of the reduced elements per
    output element (NumPy reduces a contiguous last axis many times faster than leading ones).

    Runs of neighbouring axes that are all reduced or all kept are merged first, so that the
    transposition, when one is needed, moves whole blocks (``HWC`` over ``HW`` becomes a
    ``(H * W, C)`` matrix transposed).
    """
    groups: list[tuple[bool, int]] = []  # (reduced, extent) per run of axes
    for axis, extent in enumerate(data.shape):
        reduced = axis in axes
        if groups and groups[-1][0] == reduced:
            groups[-1] = (reduced, groups[-1][1] * extent)
        else:
            groups.append((reduced, extent))
    merged = data.reshape([extent for _, extent in groups])
    kept = [i for i, (reduced, _) in enumerate(groups) if not reduced]
    moved = [i for i, (reduced, _) in enumerate(groups) if reduced]
    if moved and kept and max(kept) > min(moved):
        merged = merged.transpose(kept + moved)
    count = math.prod(groups[i][1] for i in kept)
    reduced_count = math.prod(groups[i][1] for i in moved)  # explicit: -1 is ambiguous at 0 rows
    return np.ascontiguousarray(merged).reshape(count, reduced_count)


def _divide_truncating(total: np.ndarray, count: int) -> np.ndarray:
    """``total / count`` rounded toward zero in ``total``'s integer type (0 when nothing)."""
    if count == 0:
        return np.zeros_like(total)
    if total.dtype.kind == "u":
        return total // total.dtype.type(count)
    divisor = total.dtype.type(count)
    return np.where(total < 0, -((-total) // divisor), total // divisor).astype(total.dtype)


class _Reduction(Kernel):
    """What every reduction shares: argument checks, axes, layouts, the output type and the
    work split. A dense batch is cut into one block per thread and each block is reduced with a
    few NumPy calls (``as_rows`` over the block), so the pool's threads meet the interpreter
    rarely; a ragged batch is reduced sample by sample."""

    op: ClassVar[str]

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """The output types allowed for ``dtype`` input; the first is the default."""
        return (dtype,)

    def setup(self) -> None:
        """Check the arguments that do not depend on the data."""
        if self.args["axes"] is not None and self.args["axis_names"] is not None:
            raise ValueError(f"{self.op}: arguments 'axes' and 'axis_names' are mutually exclusive")

    def _types(self, dtype: np.dtype) -> np.dtype:
        if dtype not in _INPUTS:
            raise TypeError(
                f"{self.op}: input type {dtype} is not supported; expected uint8, int8, "
                "uint16, int16, uint32, int32, uint64, int64 or float32"
            )
        allowed = self.output_types(dtype)
        requested: DataType | None = self.args.get("dtype")
        if requested is None or requested == DataType.NO_TYPE:
            return allowed[0]
        out = to_numpy_dtype(requested)
        if out not in allowed:
            names = ", ".join(from_numpy_dtype(t).name for t in allowed)
            raise TypeError(
                f"{self.op}: argument 'dtype' = {requested.name} is not supported for "
                f"{from_numpy_dtype(dtype).name} input; expected {names}"
            )
        return out

    def reduce(self, rows: np.ndarray, out: np.dtype, extra: tuple[np.ndarray, ...]) -> np.ndarray:
        """The reduction of each row of ``rows`` (see :func:`as_rows`), of type ``out``."""
        raise NotImplementedError

    def row_extras(
        self, extra: Sequence[np.ndarray], samples: int, kept: int
    ) -> tuple[np.ndarray, ...]:
        """The further inputs of a block of ``samples`` samples, one value per row (``kept``
        rows per sample); none for most reductions."""
        return ()

    def reduce_block(
        self, block: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: Sequence[np.ndarray]
    ) -> np.ndarray:
        """Reduce the samples stacked in ``block`` ``(samples, ...)`` over the sample axes
        ``axes``; the results stacked the same way."""
        samples, shape = len(block), block.shape[1:]
        rows = as_rows(block, tuple(axis + 1 for axis in axes))
        kept = rows.shape[0] // samples if samples else 0
        result = self.reduce(rows, out, self.row_extras(extra, samples, kept))
        if self.args["keep_dims"]:
            return result.reshape(samples, *[1 if i in axes else n for i, n in enumerate(shape)])
        return result.reshape(samples, *[n for i, n in enumerate(shape) if i not in axes])

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Reduce every sample."""
        data, extra = batch.inputs[0], batch.inputs[1:]
        layout, sources = data.layout(), data.source_infos()
        # An empty batch (a conditional branch no sample takes) knows its rank from its layout.
        ndim = data.ndim if len(data) or not layout else len(layout)
        axes = reduced_axes(self.op, ndim, layout, self.args["axes"], self.args["axis_names"])
        out_layout = output_layout(layout, axes, self.args["keep_dims"])
        if not len(data):
            return [TensorListCPU.from_samples([], out_layout)]
        out = self._types(data.numpy_dtype)
        if data.is_dense_tensor() and all(x.is_dense_tensor() for x in extra):
            stacked, others = data.as_array(), [x.as_array() for x in extra]
            bounds = np.linspace(0, len(data), min(self.ctx.num_threads, len(data)) + 1)
            bounds = bounds.astype(int)

            def block(part: int) -> np.ndarray:
                lo, hi = bounds[part], bounds[part + 1]
                return self.reduce_block(stacked[lo:hi], axes, out, [x[lo:hi] for x in others])

            parts = batch.map(block, len(bounds) - 1)
            return [TensorListCPU.from_dense(np.concatenate(parts), out_layout, sources)]
        samples, others = data.samples(), [x.samples() for x in extra]

        def one(index: int) -> np.ndarray:
            inputs = [x[index][None] for x in others]
            return self.reduce_block(samples[index][None], axes, out, inputs)[0]

        return [TensorListCPU.from_samples(batch.map(one, len(samples)), out_layout, sources)]


class MinKernel(_Reduction):
    """``reductions.min``."""

    op = "reductions.min"

    def reduce(self, rows: np.ndarray, out: np.dtype, extra: tuple[np.ndarray, ...]) -> np.ndarray:
        """The minimum (the type's largest value when empty)."""
        info = np.finfo(out) if out.kind == "f" else np.iinfo(out)
        return np.min(rows, axis=1, initial=info.max)


class MaxKernel(_Reduction):
    """``reductions.max``."""

    op = "reductions.max"

    def reduce(self, rows: np.ndarray, out: np.dtype, extra: tuple[np.ndarray, ...]) -> np.ndarray:
        """The maximum (the type's lowest value when empty)."""
        info = np.finfo(out) if out.kind == "f" else np.iinfo(out)
        return np.max(rows, axis=1, initial=info.min)


def _sum(rows: np.ndarray, out: np.dtype) -> np.ndarray:
    """Row sums in ``out`` (wrapping for integers); floating-point sums are float64, exact for
    narrow integers (summed as 64-bit integers)."""
    if out.kind != "f":
        return np.add.reduce(rows, axis=1, dtype=out)
    if rows.dtype in _NARROW:
        return np.add.reduce(rows, axis=1, dtype=_wide(rows.dtype)).astype(_F64)
    return np.add.reduce(rows, axis=1, dtype=_F64)


def _row_blocks(rows: np.ndarray, dtype: np.dtype) -> Iterator[tuple[slice, np.ndarray]]:
    """``rows`` converted to ``dtype`` a few rows at a time, in one reused buffer of about
    :data:`_BLOCK_BYTES`: the element-wise passes over a block then stay in the cache (and no
    batch-sized temporary is allocated). Each row's arithmetic is unchanged."""
    step = max(1, _BLOCK_BYTES // max(1, rows.shape[1] * dtype.itemsize))
    buffer = np.empty((min(step, len(rows)), rows.shape[1]), dtype)
    for start in range(0, len(rows), step):
        part = slice(start, min(start + step, len(rows)))
        block = buffer[: part.stop - start]
        np.copyto(block, rows[part], casting="unsafe")
        yield part, block


def _sum_squares(rows: np.ndarray, accumulator: np.dtype) -> np.ndarray:
    """Row sums of squares, each square and sum computed in ``accumulator`` (integers wrap);
    float64 sums of narrow integers' squares are computed exactly in integers."""
    exact = accumulator == _F64 and rows.dtype in _NARROW
    # A square of a 16-bit value fits in int32.
    work, total_type = (np.dtype(np.int32), np.dtype(np.int64)) if exact else (accumulator,) * 2
    totals = np.empty(len(rows), total_type)
    for part, block in _row_blocks(rows, work):
        block *= block
        totals[part] = np.add.reduce(block, axis=1, dtype=total_type)
    return totals.astype(_F64) if exact else totals


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

    def reduce(self, rows: np.ndarray, out: np.dtype, extra: tuple[np.ndarray, ...]) -> np.ndarray:
        """The sum."""
        return _sum(rows, out).astype(out, copy=False)


class MeanKernel(_Reduction):
    """``reductions.mean``."""

    op = "reductions.mean"

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """float32 (default) or the input type."""
        return (_F32,) if dtype == _F32 else (_F32, dtype)

    def reduce(self, rows: np.ndarray, out: np.dtype, extra: tuple[np.ndarray, ...]) -> np.ndarray:
        """The mean."""
        return _mean(_sum(rows, out), rows.shape[1], out)


class MeanSquareKernel(_Reduction):
    """``reductions.mean_square``."""

    op = "reductions.mean_square"

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """float32 (default) or the input's 64-bit integer widening."""
        return (_F32,) if dtype == _F32 else (_F32, _wide(dtype))

    def reduce(self, rows: np.ndarray, out: np.dtype, extra: tuple[np.ndarray, ...]) -> np.ndarray:
        """The mean of the squares."""
        accumulator = _F64 if out.kind == "f" else out
        return _mean(_sum_squares(rows, accumulator), rows.shape[1], out)


class RmsKernel(_Reduction):
    """``reductions.rms``."""

    op = "reductions.rms"

    def output_types(self, dtype: np.dtype) -> tuple[np.dtype, ...]:
        """float32 (default) or the input type."""
        return (_F32,) if dtype == _F32 else (_F32, dtype)

    def reduce(self, rows: np.ndarray, out: np.dtype, extra: tuple[np.ndarray, ...]) -> np.ndarray:
        """The root of the mean of the squares."""
        count = rows.shape[1]
        if out.kind == "f":
            squares = _sum_squares(rows, _F64)
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.sqrt(squares / count).astype(out)
        squares = _sum_squares(rows, out)
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

    def row_extras(
        self, extra: Sequence[np.ndarray], samples: int, kept: int
    ) -> tuple[np.ndarray, ...]:
        """The means, one per row (a sample's single mean serves all its rows).

        Raises:
            TypeError: the mean is not float32.
            ValueError: a sample's mean has neither one value nor one per output element.
        """
        (mean,) = extra
        if mean.dtype != _F32:
            raise TypeError(f"{self.op}: the mean must be float32, got {mean.dtype}")
        per_sample = mean.reshape(samples, -1)
        if per_sample.shape[1] == kept:
            return (per_sample.reshape(-1),)
        if per_sample.shape[1] == 1:
            return (np.repeat(per_sample, kept, axis=1).reshape(-1),)
        raise ValueError(
            f"{self.op}: the mean has shape {mean.shape[1:]}, but the reduction has {kept} "
            "output elements (the mean needs one value per output element, or one in all)"
        )

    def reduce_block(
        self, block: np.ndarray, axes: tuple[int, ...], out: np.dtype, extra: Sequence[np.ndarray]
    ) -> np.ndarray:
        """Reducing no axis gives zeros (no deviation), as in DALI."""
        if not axes:
            return np.zeros(block.shape, _F32)
        return super().reduce_block(block, axes, out, extra)

    def reduce(self, rows: np.ndarray, out: np.dtype, extra: tuple[np.ndarray, ...]) -> np.ndarray:
        """The variance (or its root) around the given mean, one per row."""
        (mean,) = extra
        # float32 holds narrow integers and float32 exactly, and a difference of two close
        # float32 values is exact: only the squares round, and they are summed in float64.
        work = _F32 if rows.dtype in (*_NARROW, _F32) else _F64
        means = mean.astype(work).reshape(-1, 1)
        total = np.empty(len(rows), _F64)
        for part, deviations in _row_blocks(rows, work):
            deviations -= means[part]
            deviations *= deviations
            total[part] = np.add.reduce(deviations, axis=1, dtype=_F64)
        with np.errstate(divide="ignore", invalid="ignore"):
            result = total / float(rows.shape[1] - self.args["ddof"])
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
