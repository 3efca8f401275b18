"""Kernels of ``transpose`` and ``pad``: reordering and enlarging tensors."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel, SampleContext, SampleKernel
from feedline.core.tensor import TensorListCPU
from feedline.operators.cpu.common.tensors import (
    axes_in_range,
    named_axes,
    per_sample,
)

__all__ = [
    "PadKernel",
    "TransposeKernel",
    "fill_scalar",
    "pad_extents",
    "pad_plan",
    "transpose_layout",
    "transpose_order",
]


def _check_perm(perm: Sequence[int], ndim: int) -> tuple[int, ...]:
    if sorted(perm) != list(range(ndim)):
        raise ValueError(
            f"transpose: argument 'perm' = {tuple(perm)} is not a permutation of 0..{ndim - 1} "
            f"for a {ndim}-D input"
        )
    return tuple(perm)


def transpose_layout(
    layout: str, perm: Sequence[int] | None, output_layout: str | None, permute: bool
) -> str:
    """The output layout of ``transpose`` (``output_layout`` wins, then the permuted input's)."""
    if output_layout is not None:
        return output_layout
    if not permute or not layout:
        return layout
    order = tuple(perm) if perm else tuple(range(len(layout) - 1, -1, -1))
    if sorted(order) != list(range(len(layout))):
        return layout
    return "".join(layout[i] for i in order)


class TransposeKernel(SampleKernel):
    """Per-sample ``transpose``: output dimension ``i`` is input dimension ``perm[i]``."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The permuted layout (or ``output_layout``)."""
        args = self.args
        layout = input_layouts[0] if input_layouts else ""
        return (
            transpose_layout(layout, args["perm"], args["output_layout"], args["transpose_layout"]),
        )

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Transpose one sample into a new contiguous array."""
        (data,) = inputs
        return np.ascontiguousarray(data.transpose(transpose_order(args, data.ndim)))


def transpose_order(args: Mapping[str, Any], ndim: int) -> tuple[int, ...]:
    """The axis order of ``transpose`` for an ``ndim``-D sample (``perm``, default reversed).

    Raises:
        ValueError: ``perm`` is not a permutation, ``output_layout`` has the wrong length.
    """
    perm = args["perm"]
    order = _check_perm(perm, ndim) if perm else tuple(range(ndim - 1, -1, -1))
    layout = args["output_layout"]
    if layout is not None and len(layout) not in (0, ndim):
        raise ValueError(
            f"transpose: argument 'output_layout' = {layout!r} does not match a {ndim}-D output"
        )
    return order


def _axes_of(
    op: str, layout: str, ndim: int, axes: Sequence[int] | None, axis_names: str | None
) -> list[int]:
    """Resolve ``axes``/``axis_names`` (mutually exclusive) to non-negative axis indices."""
    if axes and axis_names:
        raise ValueError(f"{op}: arguments 'axes' and 'axis_names' are mutually exclusive")
    if axis_names:
        return named_axes(op, layout, axis_names)
    if not axes:
        return list(range(ndim))
    return axes_in_range(op, axes, ndim)


def _spread(op: str, name: str, values: Any, count: int) -> list[int] | None:
    """One value per padded axis: a single value is repeated."""
    if values is None:
        return None
    items = [int(v) for v in np.asarray(values).ravel()]
    if len(items) == 1:
        return items * count
    if len(items) != count:
        raise ValueError(f"{op}: argument {name!r} needs 1 or {count} values, got {len(items)}")
    return items


def pad_extents(
    shapes: Sequence[tuple[int, ...]],
    axes: Sequence[Sequence[int]],
    shape: Sequence[Sequence[int] | None],
    align: Sequence[Sequence[int] | None],
) -> list[tuple[int, ...]]:
    """Output shape of every sample of a ``pad`` batch (``axes``: the padded axes of each
    sample).

    An axis is padded to the largest extent in the batch, or, where ``shape`` gives a
    non-negative extent for that sample, to ``max(shape, own extent)``; then rounded up to a
    multiple of ``align``.
    """
    used = {a for sample_axes in axes for a in sample_axes}
    batch_max = {a: max(s[a] if a < len(s) else 0 for s in shapes) for a in used}
    result = []
    for i, sample_shape in enumerate(shapes):
        out = list(sample_shape)
        for k, axis in enumerate(axes[i]):
            wanted = shape[i][k] if shape[i] is not None else -1
            extent = batch_max[axis] if wanted < 0 else max(wanted, sample_shape[axis])
            step = align[i][k] if align[i] is not None else 1
            if step > 1:
                extent = -(-extent // step) * step
            out[axis] = extent
        result.append(tuple(out))
    return result


def fill_scalar(value: float, dtype: np.dtype) -> Any:
    """``fill_value`` converted to the data type as DALI converts it: truncated toward zero and
    wrapped for integers (-1 is 255 in uint8), a plain conversion for floats (1e6 is inf in
    float16)."""
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return np.array(math.trunc(value), np.int64).astype(dtype).item()
    with np.errstate(over="ignore"):
        return np.array(value, dtype).item()


def _sample_axes(args: Mapping[str, Any], layout: str, ndim: int, axes: Any) -> list[int]:
    given = None if axes is None else [int(a) for a in np.asarray(axes).ravel()]
    return _axes_of("pad", layout, ndim, given, args["axis_names"])


def pad_plan(
    args: Mapping[str, Any],
    layout: str,
    shapes: Sequence[tuple[int, ...]],
    dtype: np.dtype,
    value: Callable[[str, int], Any],
) -> tuple[list[tuple[int, ...]], list[Any]]:
    """``pad``'s output shape and fill value of every sample (``value(name, i)`` reads the
    per-sample arguments ``axes``, ``shape``, ``align`` and ``fill_value``; samples that need
    no padding get None).

    Raises:
        ValueError: bad axes, an ``align`` below 1.
    """
    n = len(shapes)
    axes = [_sample_axes(args, layout, len(shapes[i]), value("axes", i)) for i in range(n)]
    shape_args = [_spread("pad", "shape", value("shape", i), len(axes[i])) for i in range(n)]
    align_args = [_spread("pad", "align", value("align", i), len(axes[i])) for i in range(n)]
    for values in align_args:
        if values is not None and min(values) < 1:
            raise ValueError(f"pad: Values of `align` argument must be positive. Got {values}")
    extents = pad_extents(shapes, axes, shape_args, align_args)
    fills = [
        None
        if extents[i] == tuple(shapes[i])
        else fill_scalar(float(np.asarray(value("fill_value", i)).reshape(())), dtype)
        for i in range(n)
    ]
    return extents, fills


class PadKernel(Kernel):
    """Batch ``pad``: samples are padded at the end of the chosen axes with ``fill_value``."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Pad the whole batch."""
        data = batch.inputs[0]
        samples = data.samples()
        if not samples:
            return [data]
        args, arg_inputs = self.args, batch.arg_inputs
        layout = data.layout()
        n = len(samples)
        extents, fills = pad_plan(
            args,
            layout,
            [s.shape for s in samples],
            samples[0].dtype,
            lambda name, i: per_sample(args, name, i, arg_inputs),
        )

        def one(i: int) -> np.ndarray:
            sample = samples[i]
            if extents[i] == sample.shape:
                return sample
            out = np.full(extents[i], fills[i], sample.dtype)
            out[tuple(slice(0, e) for e in sample.shape)] = sample
            return out

        padded = batch.map(one, n)
        return [TensorListCPU.from_samples(padded, layout, data.source_infos())]
