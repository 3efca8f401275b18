"""Kernels of ``zeros``, ``ones``, ``full`` and their ``*_like`` forms: one filled array per
sample, written into the batch's buffer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import to_numpy_dtype
from feedline.operators.cpu.tensor.basic import cast_array

__all__ = [
    "FullKernel",
    "FullLikeKernel",
    "OnesKernel",
    "OnesLikeKernel",
    "ZerosKernel",
    "ZerosLikeKernel",
    "broadcast_fill",
]


def _shape(op: str, shape: Sequence[int] | None) -> tuple[int, ...]:
    shape = tuple(int(n) for n in shape or ())
    if any(n < 0 for n in shape):
        raise ValueError(f"{op}: argument 'shape' = {list(shape)} has a negative extent")
    return shape


def _check_layout(op: str, layout: str | None, ndim: int) -> None:
    if layout and len(layout) != ndim:
        raise ValueError(
            f"{op}: Layout '{layout}' has {len(layout)} dimensions but output shape has {ndim} "
            "dimensions"
        )


def broadcast_fill(op: str, fill: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``fill`` broadcast to ``shape``: NumPy's rules, plus DALI's for an output extent of 1.

    Dimensions are matched from the last. Where the output has extent 1 and the fill more,
    DALI takes a fill of extent 1 there, made of the fill's leading values in memory order
    (``fill.ravel()`` cut to the smaller shape); e.g. a fill ``[7, 8, 9]`` for the shape
    ``(1,)`` gives ``[7]``.

    Raises:
        ValueError: the shapes cannot be broadcast (naming both).
    """
    try:
        return np.broadcast_to(fill, shape)
    except ValueError:
        pass
    reduced = _dali_reduced_shape(fill.shape, shape)
    if reduced is None:
        raise ValueError(
            f"{op}: a fill value of shape {fill.shape} cannot be broadcast to the output shape "
            f"{shape}"
        )
    size = int(np.prod(reduced, dtype=np.int64))
    return np.broadcast_to(fill.ravel()[:size].reshape(reduced), shape)


def _dali_reduced_shape(fill: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The fill's shape with extent 1 where the output has 1 (None: not broadcastable)."""
    if len(fill) > len(shape):
        return None
    reduced = []
    for have, want in zip(fill, shape[len(shape) - len(fill) :], strict=True):
        if have not in (want, 1) and want != 1:
            return None
        reduced.append(1 if want == 1 else have)
    return tuple(reduced)


def _filled(
    sample: SampleContext, shape: tuple[int, ...], dtype: np.dtype, value: np.ndarray | float
) -> np.ndarray:
    out = sample.output(shape, dtype)
    out[...] = value
    return out


class _Filled(SampleKernel):
    """``zeros`` / ``ones``: a constant of ``shape`` and ``dtype``."""

    op: ClassVar[str]
    value: ClassVar[int]

    def setup(self) -> None:
        """Resolve the output type."""
        self._dtype = to_numpy_dtype(self.args["dtype"])

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The ``layout`` argument (default none)."""
        return (self.args["layout"] or "",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """One filled sample."""
        shape = _shape(self.op, args["shape"])
        _check_layout(self.op, self.args["layout"], len(shape))
        return _filled(sample, shape, self._dtype, self.value)


class ZerosKernel(_Filled):
    """``zeros``."""

    op, value = "zeros", 0


class OnesKernel(_Filled):
    """``ones``."""

    op, value = "ones", 1


class _FilledLike(SampleKernel):
    """``zeros_like`` / ``ones_like``: the input's shape, its type unless ``dtype`` is given."""

    value: ClassVar[int]

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """One filled sample shaped like the input's."""
        like = inputs[0]
        dtype = like.dtype if args["dtype"] is None else to_numpy_dtype(args["dtype"])
        return _filled(sample, like.shape, dtype, self.value)


class ZerosLikeKernel(_FilledLike):
    """``zeros_like``."""

    value = 0


class OnesLikeKernel(_FilledLike):
    """``ones_like``."""

    value = 1


class FullKernel(SampleKernel):
    """``full``: the fill value broadcast to ``shape``."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The ``layout`` argument (default none)."""
        return (self.args["layout"] or "",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """One filled sample of the fill value's type."""
        fill = inputs[0]
        if args["shape"] is None:
            # DALI's behaviour without a shape: a scalar of the fill value's first element.
            _check_layout("full", self.args["layout"], 0)
            return np.array(fill.reshape(-1)[0] if fill.size else 0, fill.dtype)
        shape = _shape("full", args["shape"])
        _check_layout("full", self.args["layout"], len(shape))
        return _filled(sample, shape, fill.dtype, broadcast_fill("full", fill, shape))


class FullLikeKernel(SampleKernel):
    """``full_like``: the fill value broadcast to the first input's shape, in its type."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """One filled sample shaped and typed like ``data_like``."""
        like, fill = inputs
        values = cast_array(np.asarray(fill), like.dtype)
        return _filled(
            sample, like.shape, like.dtype, broadcast_fill("full_like", values, like.shape)
        )
