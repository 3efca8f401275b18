"""GPU kernel of ``normalize``: statistics reduced on the device with the array module (float64,
as on the CPU), then one ``flg_window`` launch computes ``(x - mean) * factor + shift`` with
the CPU kernel's float32 arithmetic, reading the statistics through broadcast strides."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch
from feedline.operators.cpu.normalize import (
    NORMALIZE_IN_TYPES,
    NORMALIZE_OUT_TYPES,
    NormalizeKernel,
    _reduced_axes,
    _stat_array,
)
from feedline.operators.cpu.transforms_common import check_dtype, output_dtype
from feedline.operators.gpu.backend import Backend
from feedline.operators.gpu.base import GpuKernel, Outputs
from feedline.operators.gpu.window import STATS, launch_window, plain_window

__all__ = ["NormalizeGpu"]


def _inverse_std(xp: Any, variance: Any, epsilon: float) -> Any:
    total = xp.asarray(variance, dtype=np.float64) + epsilon
    return xp.where(total > 0, 1.0 / xp.sqrt(xp.where(total > 0, total, 1.0)), 0.0)


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

    def compute(
        self,
        backend: Backend,
        inputs: Sequence[list[Any]],
        layouts: Sequence[str],
        args: Sequence[Mapping[str, Any]],
        rng: Callable[[int], np.random.Generator],
    ) -> Outputs:
        """Normalize every sample (one launch after the reductions)."""
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
        means, inv_stds = self._device_statistics(xp, samples, axes)
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

    def _device_statistics(
        self, xp: Any, samples: list[Any], axes: tuple[int, ...]
    ) -> tuple[list[Any], list[Any]]:
        """Per sample, the mean and inverse standard deviation (keepdims, float64)."""
        static = self.args
        n = len(samples)
        given_mean = [self._given(None, "mean", i) for i in range(n)]
        given_std = [self._given(None, "stddev", i) for i in range(n)]
        epsilon, ddof = float(static["epsilon"]), int(static["ddof"])
        if static["batch"]:
            for name, values in (("mean", given_mean), ("stddev", given_std)):
                if any(v is not None and np.ndim(v) > 0 for v in values):
                    raise ValueError(
                        f"normalize: a non-scalar {name} cannot be used with batch=True"
                    )
            kept = [a for a in range(samples[0].ndim) if a not in axes]
            if len({tuple(s.shape[a] for a in kept) for s in samples}) > 1:
                raise ValueError(
                    "normalize: batch=True needs equal extents in the non-reduced axes; got "
                    f"shapes {[s.shape for s in samples]}"
                )
            sums = sum(s.astype(np.float64).sum(axis=axes, keepdims=True) for s in samples)
            count = sum(int(np.prod([s.shape[a] for a in axes])) for s in samples)
            mean = sums / count if given_mean[0] is None else xp.asarray(float(given_mean[0]))
            if given_std[0] is None:
                squares = sum(
                    ((s.astype(np.float64) - mean) ** 2).sum(axis=axes, keepdims=True)
                    for s in samples
                )
                inv = _inverse_std(xp, squares / max(count - ddof, 1), epsilon)
            else:
                inv = _inverse_std(xp, float(given_std[0]) ** 2, epsilon)
            return [mean] * n, [inv] * n
        means, invs = [], []
        for i, sample in enumerate(samples):
            values = sample.astype(np.float64)
            if given_mean[i] is None:
                mean = values.mean(axis=axes, keepdims=True)
            else:
                mean = xp.asarray(_stat_array("mean", given_mean[i], values, axes))
            if given_std[i] is None:
                count = int(np.prod([values.shape[a] for a in axes]))
                squares = ((values - mean) ** 2).sum(axis=axes, keepdims=True)
                inv = _inverse_std(xp, squares / max(count - ddof, 1), epsilon)
            else:
                std = _stat_array("stddev", given_std[i], values, axes)
                inv = _inverse_std(xp, xp.asarray(std) ** 2, epsilon)
            means.append(mean)
            invs.append(inv)
        return means, invs
