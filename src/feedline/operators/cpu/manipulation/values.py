"""Kernels of ``lookup_table`` (values mapped through a table) and ``reinterpret`` (the same
bytes seen with another type, shape or layout)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel, SampleContext, SampleKernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import to_numpy_dtype
from feedline.operators.cpu.tensor.basic import cast_array

__all__ = ["MAX_KEY", "LookupTableKernel", "ReinterpretKernel", "reinterpret", "target_shape"]

MAX_KEY = 65535
"""The largest key a lookup table may have (DALI's limit)."""


class LookupTableKernel(SampleKernel):
    """``lookup_table``: ``table[input]``, ``default_value`` outside the table."""

    def setup(self) -> None:
        """Build the table once, in the output type."""
        keys, values = self.args["keys"], self.args["values"]
        if len(keys) != len(values):
            raise ValueError(
                f"lookup_table: 'keys' has {len(keys)} values but 'values' has {len(values)}"
            )
        if keys and not (min(keys) >= 0 and max(keys) <= MAX_KEY):
            raise ValueError(f"lookup_table: 'keys' must be in the range [0, {MAX_KEY}]")
        self._dtype = to_numpy_dtype(self.args["dtype"])
        table = np.full((max(keys, default=-1) + 2,), self.args["default_value"], np.float64)
        for key, value in zip(keys, values, strict=True):
            table[key] = value  # the last occurrence of a key wins
        # The last entry holds the default for every input value outside the table.
        self._table = cast_array(table, self._dtype)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Any, sample: SampleContext
    ) -> np.ndarray:
        """Map one sample."""
        data = inputs[0]
        if data.dtype.kind not in "iu":
            raise TypeError(
                f"lookup_table: input type {data.dtype} is not supported; only integer inputs are"
            )
        last = len(self._table) - 1
        index = np.minimum(data, min(last, int(np.iinfo(data.dtype).max))).astype(np.intp)
        if data.dtype.kind == "i":
            index = np.where(data < 0, last, index)
        out = sample.output(data.shape, self._dtype)
        np.take(self._table, index, out=out)
        return out


def _infer_negative(op: str, extents: list[int], volume: int) -> list[int]:
    negative = [i for i, n in enumerate(extents) if n < 0]
    if len(negative) > 1:
        raise ValueError(f"{op}: only one extent may be negative (inferred), got {extents}")
    if negative:
        known = math.prod(n for n in extents if n >= 0)
        if known == 0 or volume % known:
            raise ValueError(
                f"{op}: cannot infer the negative extent of {extents} for {volume} elements"
            )
        extents[negative[0]] = volume // known
    return extents


def target_shape(
    in_shape: tuple[int, ...],
    shape: Sequence[int] | None,
    rel_shape: Sequence[float] | None,
    src_dims: Sequence[int] | None,
) -> tuple[int, ...]:
    """The output shape of ``reinterpret`` for a sample of ``in_shape`` (DALI's rules).

    Raises:
        ValueError: conflicting arguments, a ``src_dims`` index out of range, more than one
            negative extent, or a negative extent that cannot be inferred.
    """
    op = "reinterpret"
    volume = math.prod(in_shape)
    if shape is not None and rel_shape is not None:
        raise ValueError(f"{op}: arguments 'shape' and 'rel_shape' are mutually exclusive")
    bad = [d for d in src_dims or () if not -1 <= d < len(in_shape)]
    if bad:
        raise ValueError(
            f"{op}: src_dims index {bad[0]} is out of range for a {len(in_shape)}-D input "
            "(expected -1 or a dimension index)"
        )
    if shape is not None:
        return tuple(_infer_negative(op, [int(n) for n in shape], volume))
    sources = list(src_dims) if src_dims is not None else list(range(len(in_shape)))
    if rel_shape is None:
        return tuple(1 if d < 0 else in_shape[d] for d in sources)
    rel = list(rel_shape)
    if src_dims is not None and len(rel) != len(sources):
        raise ValueError(f"{op}: 'rel_shape' and 'src_dims' must have the same length")
    if src_dims is None:
        extra = len(rel) == len(in_shape) + 1 and rel[-1] < 0
        if len(rel) > len(in_shape) and not extra:
            raise ValueError(
                f"{op}: 'rel_shape' has {len(rel)} values for a {len(in_shape)}-D input"
            )
        sources = sources[: len(rel)] + ([-1] if extra else [])
    extents = [
        -1 if r < 0 else round(r * (1 if d < 0 else in_shape[d]))
        for r, d in zip(rel, sources, strict=True)
    ]
    return tuple(_infer_negative(op, extents, volume))


def _retype(data: np.ndarray, dtype: np.dtype, whole: bool) -> np.ndarray:
    """The bytes of ``data`` as ``dtype``: flat (``whole``) or with the innermost dimension
    adjusted."""
    data = np.ascontiguousarray(data)
    if whole or data.ndim == 0:
        if data.nbytes % dtype.itemsize:
            raise ValueError(f"reinterpret: {data.nbytes} bytes cannot be read as {dtype} elements")
        return data.reshape(-1).view(dtype)
    if data.shape[-1] * data.itemsize % dtype.itemsize:
        raise ValueError(
            f"reinterpret: the size in bytes of the innermost dimension ({data.shape[-1]} x "
            f"{data.itemsize}) is not divisible by the size of {dtype} ({dtype.itemsize})"
        )
    return data.view(dtype)


def reinterpret(
    data: np.ndarray,
    dtype: np.dtype | None,
    shape: Sequence[int] | None,
    rel_shape: Sequence[float] | None,
    src_dims: Sequence[int] | None,
) -> np.ndarray:
    """One sample of ``reinterpret`` (a view of ``data`` when it is contiguous).

    Raises:
        ValueError: the bytes do not fit the requested type or shape.
    """
    if dtype is not None and dtype != data.dtype:
        data = _retype(data, dtype, whole=shape is not None)
    target = target_shape(data.shape, shape, rel_shape, src_dims)
    if math.prod(target) != data.size:
        raise ValueError(
            f"reinterpret: a sample of shape {data.shape} ({data.size} elements) cannot have "
            f"shape {target}"
        )
    return data.reshape(target)


class ReinterpretKernel(Kernel):
    """``reinterpret`` on a whole batch (the output layout depends on the output's ndim)."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Reinterpret every sample."""
        data = batch.inputs[0]
        shapes = batch.inputs[1].samples() if len(batch.inputs) > 1 else None
        if shapes is not None and ("shape" in self.args and self.args["shape"] is not None):
            raise ValueError("reinterpret: give the shape either as an input or as 'shape'")
        dtype = None if self.args["dtype"] is None else to_numpy_dtype(self.args["dtype"])

        def argument(name: str, index: int) -> Any:
            node = batch.arg_inputs.get(name)
            if node is None:
                return self.args.get(name)
            return node.samples()[index].ravel().tolist()

        out = []
        for i, sample in enumerate(data.samples()):
            shape = argument("shape", i) if shapes is None else shapes[i].ravel().tolist()
            rel, dims = argument("rel_shape", i), argument("src_dims", i)
            out.append(reinterpret(sample, dtype, shape, rel, dims))
        ndim = out[0].ndim if out else data.ndim
        layout = self.args["layout"]
        if layout is None:
            layout = data.layout() if ndim == data.ndim else ""
        elif layout and len(layout) != ndim:
            raise ValueError(f"reinterpret: layout {layout!r} does not match the {ndim}-D output")
        return [TensorListCPU.from_samples(out, layout, data.source_infos(), stack=False)]
