"""Kernels of the basic operators: constant, cast, reshape, copy."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel, SampleContext, SampleKernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import check_enum_cast, to_numpy_dtype

__all__ = [
    "CastKernel",
    "ConstantKernel",
    "CopyKernel",
    "ReshapeKernel",
    "cast_array",
    "cast_batch",
]


class ConstantKernel(Kernel):
    """Emits a read-only batch of one constant sample."""

    def setup(self) -> None:
        args = self.args
        given = [k for k in ("value", "fdata", "idata") if args.get(k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"constant: give exactly one of value, fdata and idata (got {given or 'none'})"
            )
        source = given[0]
        dtype = args.get("dtype")
        if source == "value":
            sample = np.asarray(
                args[source], dtype=to_numpy_dtype(dtype) if dtype is not None else None
            )
        else:
            # fdata/idata convert to ``dtype`` as a cast does: rounded and saturated.
            given_type = np.float32 if source == "fdata" else np.int64
            default = np.float32 if source == "fdata" else np.int32
            np_dtype = to_numpy_dtype(dtype) if dtype is not None else default
            sample = cast_array(np.asarray(args[source], dtype=given_type), np_dtype)
        shape = args.get("shape")
        if shape is not None:
            if sample.size == 1:
                sample = np.broadcast_to(sample.reshape(()), tuple(shape))
            elif math.prod(shape) != sample.size:
                raise ValueError(f"constant: {sample.size} values cannot have shape {tuple(shape)}")
            sample = sample.reshape(tuple(shape))
        self._sample = np.array(sample, order="C")
        layout = args.get("layout") or ""
        if layout and len(layout) != self._sample.ndim:
            raise ValueError(
                f"constant: layout {layout!r} does not match the sample's {self._sample.ndim} dims"
            )
        self._layout = layout
        self._cache: dict[int, TensorListCPU] = {}

    def run(self, batch: Batch) -> list[TensorListCPU]:
        size = batch.size
        cached = self._cache.get(size)
        if cached is None:
            dense = np.ascontiguousarray(np.broadcast_to(self._sample, (size, *self._sample.shape)))
            dense.setflags(write=False)
            cached = self._cache[size] = TensorListCPU.from_dense(dense, self._layout)
        return [cached]


def _round_half_away(values: np.ndarray) -> np.ndarray:
    """Round half away from zero, exactly (``x + 0.5`` would round 0.49999997 up in float32)."""
    whole = np.trunc(values)
    with np.errstate(invalid="ignore"):  # inf - inf: the where keeps the infinity
        return np.where(np.abs(values - whole) >= 0.5, whole + np.sign(values), whole)


_NAN_AS = {np.dtype(np.int32): -(2**31), np.dtype(np.int64): -(2**63), np.dtype(np.uint64): 2**63}
"""What DALI's float → integer conversion gives for NaN (the x86 conversion's "indefinite"
integer, through the widths it converts with): 0 for the other integer types."""


def _float_to_int(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round half away from zero, then saturate to ``dtype`` (±inf to its limits); NaN as DALI."""
    info = np.iinfo(dtype)
    rounded = _round_half_away(values).astype(np.float64)
    low, high = rounded <= float(info.min), rounded >= float(info.max)
    nan = np.isnan(rounded)
    inside = ~(low | high | nan)
    out = np.where(inside, rounded, 0).astype(dtype)
    out[low] = info.min
    out[high] = info.max
    out[nan] = _NAN_AS.get(dtype, 0)
    return out


def cast_array(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Convert ``values`` to ``dtype`` with DALI's rounding and saturation rules."""
    dtype = np.dtype(dtype)
    source = values.dtype
    if dtype == np.bool_:
        if source.kind == "f":
            return _round_half_away(values) != 0
        return values != 0
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if source.kind == "f":
            return _float_to_int(values, dtype)
        if source.kind in "iu" and (
            np.iinfo(source).min < info.min or np.iinfo(source).max > info.max
        ):
            wide = values.astype(np.int64) if source != np.uint64 else values
            if source == np.uint64:
                return np.minimum(wide, np.uint64(info.max)).astype(dtype)
            return np.clip(
                wide, max(info.min, np.iinfo(np.int64).min), min(info.max, np.iinfo(np.int64).max)
            ).astype(dtype)
    return values.astype(dtype)


def cast_batch(tl: TensorListCPU, dtype: np.dtype) -> TensorListCPU:
    """:func:`cast_array` over a batch (one NumPy call when it is dense)."""
    if tl.is_dense_tensor() and len(tl):
        out = cast_array(tl.raw_array(), dtype)
        return TensorListCPU.from_dense(out, tl.layout(), tl.source_infos())
    samples = [cast_array(s, dtype) for s in tl.samples()]
    return TensorListCPU.from_samples(samples, tl.layout(), tl.source_infos())


class CastKernel(Kernel):
    """Vectorised cast over the whole batch."""

    def setup(self) -> None:
        self._dtype = to_numpy_dtype(self.args["dtype"])

    def run(self, batch: Batch) -> list[TensorListCPU]:
        (tl,) = batch.inputs
        check_enum_cast(tl.dtype, self.args["dtype"])
        return [cast_batch(tl, self._dtype)]


class CopyKernel(Kernel):
    """Copies the batch into a new buffer."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        (tl,) = batch.inputs
        if tl.is_dense_tensor() and len(tl):
            return [TensorListCPU.from_dense(tl.raw_array().copy(), tl.layout(), tl.source_infos())]
        samples = [s.copy() for s in tl.samples()]
        return [TensorListCPU.from_samples(samples, tl.layout(), tl.source_infos())]


def _dims(shape: Sequence[int]) -> str:
    return " x ".join(str(n) for n in shape)


def _target_shape(
    in_shape: tuple[int, ...],
    shape: Sequence[int] | None,
    rel: Sequence[float] | None,
    src_dims: Sequence[int] | None,
) -> tuple[int, ...]:
    """The output shape of ``reshape`` for a sample of ``in_shape`` (DALI's rules and words)."""
    if src_dims is not None:
        shape_from_dims = []
        for i, d in enumerate(src_dims):
            if not -1 <= d < len(in_shape):
                raise ValueError(
                    f"`src_dims[{i}] == {d}` is out of bounds. The indices in `src_dims` should "
                    f"be either valid dimension indices in range [0..{len(in_shape) - 1}] or -1 "
                    "to insert a new dimension."
                )
            shape_from_dims.append(1 if d == -1 else in_shape[d])
        if rel is not None and len(rel) != len(src_dims):
            raise ValueError(
                f"`src_dims` and `rel_shape` have different lengths: {len(src_dims)} vs {len(rel)}"
            )
        if shape is None and rel is None:
            return tuple(shape_from_dims)
        in_shape = tuple(shape_from_dims)
    if shape is not None and rel is not None:
        raise ValueError("give at most one of shape and rel_shape")
    if rel is not None:
        return _relative_shape(in_shape, rel)
    if shape is None:
        return in_shape
    result = [in_shape[i] if s == 0 and i < len(in_shape) else s for i, s in enumerate(shape)]
    if result.count(-1) > 1:
        raise ValueError(f"shape {tuple(shape)} has more than one -1")
    if -1 in result:
        known = math.prod(s for s in result if s != -1)
        total = math.prod(in_shape)
        if known == 0 or total % known:
            raise ValueError(f"cannot infer -1 in {tuple(shape)} for {total} elements")
        result[result.index(-1)] = total // known
    if any(s < 0 for s in result):
        raise ValueError(f"negative extent in shape {tuple(shape)}")
    return tuple(result)


def _relative_shape(in_shape: tuple[int, ...], rel: Sequence[float]) -> tuple[int, ...]:
    """``rel_shape``: extent ``i`` is ``rel[i] * in_shape[i]``; one negative value is a wildcard
    inferred from the volume, and only the wildcard may stand past the input's dimensions."""
    wild = [i for i, r in enumerate(rel) if r < 0]
    if len(wild) > 1:
        raise ValueError(f"Only one negative extent is allowed; got: {_dims(rel)}")
    if any(i >= len(in_shape) for i in range(len(rel)) if i not in wild):
        raise ValueError(
            f"`rel_shape` has more elements ({len(rel)}) than there are dimensions in the input "
            f"({len(in_shape)}). To add new dimensions, use `src_dims` to specify the mapping "
            "between input and output dimensions."
        )
    out = [0 if i in wild else round(r * in_shape[i]) for i, r in enumerate(rel)]
    if wild:
        known = math.prod(n for i, n in enumerate(out) if i not in wild)
        if known == 0:
            raise ValueError(
                f"Cannot infer the extent of dimension {wild[0]} when the volume of remaining "
                f"dimensions is 0. Input shape: {_dims(in_shape)}"
            )
        out[wild[0]] = math.prod(in_shape) // known
    return tuple(out)


class ReshapeKernel(SampleKernel):
    """Reinterprets each sample's shape."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        layout = self.args.get("layout")
        if layout is not None:
            return (layout,)
        src_dims = self.args.get("src_dims")
        in_layout = input_layouts[0] if input_layouts else ""
        if src_dims is not None and in_layout:
            return (
                "".join(in_layout[d] if d >= 0 else "" for d in src_dims)
                if -1 not in src_dims
                else "",
            )
        return ("",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        data = inputs[0]
        shape = args.get("shape")
        if len(inputs) > 1:
            if shape is not None:
                raise ValueError("give the shape either as an input or as 'shape', not both")
            shape = tuple(int(v) for v in np.asarray(inputs[1]).ravel())
        target = _target_shape(data.shape, shape, args.get("rel_shape"), args.get("src_dims"))
        if math.prod(target) != data.size:
            raise ValueError(
                "The volume of the new shape should match the one of the original shape. "
                f"Requested a shape with {math.prod(target)} elements but the original shape has "
                f"{data.size} elements. (reshape of {data.shape} to {target})"
            )
        return data.reshape(target)
