"""GPU kernel of ``normalize``: statistics reduced on the device by the CPU kernel's own code,
run with CuPy (float64, as on the CPU); then one ``flg_window`` launch computes
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
        means, inv_stds = self._statistics(_SERIAL, samples, axes, xp)  # type: ignore[arg-type]
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
