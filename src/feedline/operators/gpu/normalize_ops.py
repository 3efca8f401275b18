"""GPU kernel of ``normalize``: statistics reduced on the device in float64, as on the CPU: for a
batch of equally shaped samples with no given mean or stddev, one reduction over the stacked
batch (a tree per sample and statistic, one launch each for the whole batch), else the CPU
kernel's own code run with CuPy per sample; then one ``flg_window`` launch computes
``(x - mean) * factor + shift`` with the CPU kernel's float32 arithmetic, reading the
statistics through broadcast strides."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch
from feedline.operators.cpu.common.tensors import check_dtype, output_dtype
from feedline.operators.cpu.tensor.normalize import (
    NORMALIZE_IN_TYPES,
    NORMALIZE_OUT_TYPES,
    NormalizeKernel,
    _inverse_std,
    _reduced_axes,
)
from feedline.operators.gpu.base import GpuBatch, GpuKernel, Outputs
from feedline.operators.gpu.window import STATS, launch_window, plain_window

__all__ = ["NormalizeGpu"]


class _Serial:
    """Runs the CPU kernel's per-sample statistics one after the other (on the device)."""

    @staticmethod
    def map(fn: Callable[[int], Any], n: int) -> list[Any]:
        return [fn(i) for i in range(n)]


_SERIAL = _Serial()


def _strides(stat: Any, ndim: int) -> tuple[int, ...]:
    """Element strides that broadcast a keepdims statistics array over a sample."""
    stat = stat.reshape((1,) * (ndim - stat.ndim) + tuple(stat.shape))
    steps = [s // stat.itemsize for s in stat.strides]
    return tuple(0 if stat.shape[a] == 1 else steps[a] for a in range(ndim))


class NormalizeGpu(GpuKernel, NormalizeKernel):
    """``normalize`` on the GPU."""

    _args: Sequence[Mapping[str, Any]] = ()

    def _given(self, batch: Batch | None, name: str, index: int) -> Any:
        """The given ``mean``/``stddev`` of sample ``index`` (from the merged arguments)."""
        value = self._args[index].get(name)
        if value is not None and not isinstance(value, int | float | np.ndarray | list | tuple):
            raise TypeError(f"normalize: argument {name!r} expects a number, got {value!r}")
        return value

    def _batched_statistics(
        self, samples: Sequence[Any], axes: tuple[int, ...], xp: Any
    ) -> tuple[list[Any], list[Any]] | None:
        """Per-sample means and inverse standard deviations from one reduction over the stacked
        batch (each sample's own statistics, ``batch=False``), or None where that does not
        apply: ragged shapes, a given mean or stddev, or ``batch=True``."""
        args = self.args
        if args["batch"] or len({s.shape for s in samples}) > 1:
            return None
        if any(self._given(None, n, i) is not None for n in ("mean", "stddev") for i in range(
            len(samples))):  # fmt: skip
            return None
        stacked = xp.stack(samples).astype(np.float64)
        batch_axes = tuple(a + 1 for a in axes)
        count = int(np.prod([samples[0].shape[a] for a in axes]))
        mean = stacked.mean(axis=batch_axes, keepdims=True)
        squares = ((stacked - mean) ** 2).sum(axis=batch_axes, keepdims=True)
        variance = squares / max(count - int(args["ddof"]), 1)
        inv = _inverse_std(variance, float(args["epsilon"]), xp)
        return [mean[i] for i in range(len(samples))], [inv[i] for i in range(len(samples))]

    def compute(self, batch: GpuBatch) -> Outputs:
        """Normalize every sample (one launch after the reductions)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        xp = backend.xp
        samples = [xp.ascontiguousarray(s) for s in inputs[0]]
        if not samples:
            return [([], layouts[0])]
        for sample in samples:
            check_dtype("normalize", sample, NORMALIZE_IN_TYPES)
        static = self.args
        out_type = output_dtype(
            "normalize", static["dtype"], np.dtype(np.float32), NORMALIZE_OUT_TYPES
        )
        self._args = args
        ndim = samples[0].ndim
        axes = _reduced_axes(layouts[0], ndim, static["axes"], static["axis_names"])
        if static["axes"] is None and static["axis_names"] is None:
            axes = self._inferred_axes(None, samples) or axes
        stats = self._batched_statistics(samples, axes, xp)
        if stats is None:
            stats = self._statistics(_SERIAL, samples, axes, xp)  # type: ignore[arg-type]
        means, inv_stds = stats
        windows, means32, factors32 = [], [], []
        for sample, mean, inv in zip(samples, means, inv_stds, strict=True):
            factor = (static["scale"] * inv).astype(np.float32)
            mean = xp.asarray(mean).astype(np.float32)
            shape = np.broadcast_shapes(mean.shape, factor.shape)
            means32.append(xp.ascontiguousarray(xp.broadcast_to(mean, shape)))
            factors32.append(xp.ascontiguousarray(xp.broadcast_to(factor, shape)))
            window = plain_window(sample)
            window.stat_stride = _strides(means32[-1], ndim)
            windows.append(window)
        outs = launch_window(
            backend,
            STATS,
            samples,
            windows,
            out_type,
            -1,
            stats=(means32, factors32, float(np.float32(static["shift"]))),
        )
        return [(outs, layouts[0])]
