"""``normalize``: ``out = scale * (in - mean) / stddev + shift`` with computed or given statistics.

Statistics are reduced over ``axes``/``axis_names`` (default: all axes), per sample or, with
``batch=True``, over the whole batch. As observed in DALI 2.4, ``epsilon`` is added to the
variance whether the standard deviation is computed or given, and a given ``mean`` is used as the
centre when the standard deviation is computed. When ``ddof`` is not smaller than the number of
reduced elements the variance is 0. Where the variance (plus epsilon) is zero the output is
``shift``. Integer outputs are rounded (halves away from zero) and saturated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU
from feedline.operators.cpu.common.tensors import (
    axes_in_range,
    check_dtype,
    named_axes,
    output_dtype,
    saturate_cast,
)

__all__ = ["NormalizeKernel", "normalize"]

NORMALIZE_IN_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32)
NORMALIZE_OUT_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32)


def _reduced_axes(
    layout: str, ndim: int, axes: Sequence[int] | None, axis_names: str | None
) -> tuple[int, ...]:
    if axes is not None and axis_names is not None:
        raise ValueError("normalize: arguments 'axes' and 'axis_names' are mutually exclusive")
    if axis_names is not None:
        return tuple(sorted(named_axes("normalize", layout, axis_names)))
    if axes is None:
        return tuple(range(ndim))
    return tuple(sorted(set(axes_in_range("normalize", axes, ndim))))


def _stat_array(name: str, value: Any, data: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """A given mean/stddev as float64, checked to broadcast against ``data``."""
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        return array
    if array.ndim != data.ndim:
        raise ValueError(
            f"normalize: {name} of shape {array.shape} must be a scalar or have the input's "
            f"{data.ndim} dimensions (input shape {data.shape})"
        )
    for axis, (extent, size) in enumerate(zip(array.shape, data.shape, strict=True)):
        if extent != 1 and (axis in axes or extent != size):
            raise ValueError(
                f"normalize: {name} of shape {array.shape} does not match the input shape "
                f"{data.shape} reduced over axes {axes}"
            )
    return array


def _variance(squares: np.ndarray, count: int, ddof: int) -> np.ndarray:
    """The sum of squared deviations over ``count - ddof``; zero when that is not positive (as
    DALI: the deviation is then taken as 0, so only ``epsilon`` is left)."""
    return squares / (count - ddof) if count > ddof else squares * 0


def _inverse_std(variance: np.ndarray, epsilon: float, xp: Any = np) -> np.ndarray:
    total = xp.asarray(variance, dtype=np.float64) + epsilon
    with np.errstate(divide="ignore"):
        return xp.where(total > 0, 1.0 / xp.sqrt(xp.where(total > 0, total, 1.0)), 0.0)


def normalize(
    data: np.ndarray,
    mean: np.ndarray,
    inv_std: np.ndarray,
    scale: float = 1.0,
    shift: float = 0.0,
    dtype: np.dtype | type = np.float32,
) -> np.ndarray:
    """``scale * (data - mean) * inv_std + shift``, converted to ``dtype``."""
    factor = (scale * inv_std).astype(np.float32)
    values = (data.astype(np.float32) - np.asarray(mean, dtype=np.float32)) * factor
    values += np.float32(shift)
    return saturate_cast(values, np.dtype(dtype))


class NormalizeKernel(Kernel):
    """Batch ``normalize`` (statistics per sample, or over the batch with ``batch=True``)."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Normalize every sample of the batch."""
        data = batch.inputs[0]
        samples = data.samples()
        args = self.args
        if not samples:
            return [data]
        layout = data.layout()
        for sample in samples:
            check_dtype("normalize", sample, NORMALIZE_IN_TYPES)
        out_type = output_dtype(
            "normalize", args["dtype"], np.dtype(np.float32), NORMALIZE_OUT_TYPES
        )
        axes = _reduced_axes(layout, samples[0].ndim, args["axes"], args["axis_names"])
        if args["axes"] is None and args["axis_names"] is None:
            axes = self._inferred_axes(batch, samples) or axes
        n = len(samples)
        means, inv_stds = self._statistics(batch, samples, axes)

        def one(i: int) -> np.ndarray:
            return normalize(
                samples[i], means[i], inv_stds[i], args["scale"], args["shift"], out_type
            )

        return [TensorListCPU.from_samples(batch.map(one, n), layout, data.source_infos())]

    def _inferred_axes(self, batch: Batch, samples: list[np.ndarray]) -> tuple[int, ...] | None:
        """Reduced axes read off non-scalar given statistics (their unit extents), as DALI."""
        found: set[tuple[int, ...]] = set()
        for name in ("mean", "stddev"):
            for i, sample in enumerate(samples):
                value = self._given(batch, name, i)
                shape = np.shape(value) if value is not None else ()
                if len(shape) == sample.ndim:
                    found.add(tuple(a for a, extent in enumerate(shape) if extent == 1))
        if len(found) > 1:
            raise ValueError(
                f"normalize: the given mean/stddev imply different reduced axes {sorted(found)}; "
                "give 'axes' explicitly"
            )
        return found.pop() if found else None

    def _given(self, batch: Batch, name: str, index: int) -> Any:
        if name in batch.arg_inputs:
            return batch.arg_inputs[name].at(index)
        value = self.args[name]
        if value is not None and not isinstance(value, int | float | np.ndarray | list | tuple):
            raise TypeError(f"normalize: argument {name!r} expects a number, got {value!r}")
        return value

    def _statistics(
        self, batch: Batch, samples: list[np.ndarray], axes: tuple[int, ...], xp: Any = np
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per sample, the mean and inverse standard deviation (keepdims, float64), computed
        with the array module ``xp`` (CuPy for the GPU kernel)."""
        args = self.args
        n = len(samples)
        given_mean = [self._given(batch, "mean", i) for i in range(n)]
        given_std = [self._given(batch, "stddev", i) for i in range(n)]
        epsilon, ddof = float(args["epsilon"]), int(args["ddof"])
        if args["batch"]:
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
            mean = sums / count if given_mean[0] is None else xp.asarray(given_mean[0], float)
            if given_std[0] is None:
                squares = sum(
                    ((s.astype(np.float64) - mean) ** 2).sum(axis=axes, keepdims=True)
                    for s in samples
                )
                inv = _inverse_std(_variance(squares, count, ddof), epsilon, xp)
            else:
                inv = _inverse_std(xp.asarray(given_std[0], float) ** 2, epsilon, xp)
            return [mean] * n, [inv] * n

        def one(i: int) -> tuple[np.ndarray, np.ndarray]:
            sample = samples[i].astype(np.float64)
            if given_mean[i] is None and not sample.size:  # an empty sample passes through
                mean = np.zeros([1 if a in axes else e for a, e in enumerate(sample.shape)])
            elif given_mean[i] is None:
                mean = sample.mean(axis=axes, keepdims=True)
            else:
                mean = xp.asarray(_stat_array("mean", given_mean[i], sample, axes))
            if given_std[i] is None:
                count = int(np.prod([sample.shape[a] for a in axes]))
                squares = ((sample - mean) ** 2).sum(axis=axes, keepdims=True)
                inv = _inverse_std(_variance(squares, count, ddof), epsilon, xp)
            else:
                std = _stat_array("stddev", given_std[i], sample, axes)
                inv = _inverse_std(xp.asarray(std) ** 2, epsilon, xp)
            return mean, inv

        stats = batch.map(one, n)
        return [m for m, _ in stats], [s for _, s in stats]
