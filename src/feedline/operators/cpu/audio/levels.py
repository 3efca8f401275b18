"""The ``to_decibels``, ``preemphasis_filter`` and ``nonsilent_region`` kernels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import to_numpy_dtype
from feedline.operators.cpu.audio.bindings import preemphasis_f32, to_decibels_f32
from feedline.operators.cpu.common.tensors import saturate_cast

__all__ = [
    "NonsilentRegionKernel",
    "PreemphasisKernel",
    "ToDecibelsKernel",
    "nonsilent_region",
    "preemphasis",
    "to_decibels",
]


def to_decibels(
    data: np.ndarray, multiplier: float, reference: float | None, cutoff_db: float
) -> np.ndarray:
    """``multiplier * log10(max(10 ** (cutoff_db / multiplier), data / reference))``; no
    ``reference`` means the maximum of ``data``.

    Computed in float32, as DALI does: in one compiled call where the CPU library loads, else
    in one output buffer (each step in place); a float64 pass would double the memory traffic
    for no gain in the stored float32 result.
    """
    values = np.asarray(data, np.float32)
    floor = np.float32(10.0 ** (cutoff_db / multiplier))
    compiled = to_decibels_f32(values, multiplier, reference, float(floor))
    if compiled is not None:
        return compiled
    if reference is None:
        reference = float(values.max()) if values.size else 0.0
    out = np.zeros(values.shape, np.float32)
    if reference > 0:
        np.divide(values, np.float32(reference), out=out)
    np.maximum(out, floor, out=out)
    np.log10(out, out=out)
    out *= np.float32(multiplier)
    return out


class ToDecibelsKernel(SampleKernel):
    """Per-sample ``to_decibels``."""

    def setup(self) -> None:
        """Refuse a zero reference (DALI's error).

        Raises:
            RuntimeError: ``reference`` is 0.
        """
        if self.args["reference"] == 0:
            raise RuntimeError("to_decibels: `reference` argument can't be zero")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Convert one sample."""
        a = self.args
        return to_decibels(inputs[0], a["multiplier"], a["reference"], a["cutoff_db"])


def preemphasis(signal: np.ndarray, coeff: float, border: str) -> np.ndarray:
    """``y[t] = x[t] - coeff * x[t - 1]`` over the flattened signal (float32 for float32
    signals, in the compiled CPU library where it loads; else float64 with NumPy)."""
    work = np.float32 if signal.dtype == np.float32 else np.float64
    flat = signal.reshape(-1).astype(work, copy=False)
    coeff = work(coeff)
    if flat.size == 0:
        return np.empty_like(flat).reshape(signal.shape)
    edge = {"zero": 0.0, "clamp": flat[0], "reflect": flat[1] if flat.size > 1 else flat[0]}
    before = work(edge[border])
    if work is np.float32:
        compiled = preemphasis_f32(flat, float(coeff), float(before))
        if compiled is not None:
            return compiled.reshape(signal.shape)
    out = np.empty_like(flat)
    out[0] = flat[0] - coeff * before
    np.multiply(flat[:-1], -coeff, out=out[1:])  # -c·x[t-1] + x[t] rounds as x[t] - c·x[t-1]
    out[1:] += flat[1:]
    return out.reshape(signal.shape)


class PreemphasisKernel(SampleKernel):
    """Per-sample ``preemphasis_filter``."""

    def setup(self) -> None:
        """Resolve the output type."""
        self._dtype = to_numpy_dtype(self.args["dtype"])

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Filter one signal."""
        (signal,) = inputs
        coeff = float(np.asarray(args["preemph_coeff"]).reshape(()))
        filtered = preemphasis(signal, coeff, self.args["border"])
        if self._dtype.kind == "f":
            return filtered.astype(self._dtype, copy=False)
        return saturate_cast(filtered, self._dtype)


def nonsilent_region(
    signal: np.ndarray, cutoff_db: float, window_length: int, reference_power: float
) -> tuple[int, int]:
    """``(begin, length)`` of the non-silent region of a 1-D signal (see the schema)."""
    values = signal.astype(np.float64)
    n = len(values)
    if n == 0:
        return 0, 0
    sums = np.concatenate(([0.0], np.cumsum(values * values)))
    ends = np.arange(n)
    power = (sums[ends + 1] - sums[np.maximum(ends - window_length + 1, 0)]) / window_length
    reference = reference_power or float(power.max())
    loud = np.flatnonzero(power >= reference * 10.0 ** (cutoff_db / 10.0))
    if loud.size == 0:
        return 0, 0
    begin = max(int(loud[0]) - window_length + 1, 0)
    return begin, int(loud[-1]) + 1 - begin


class NonsilentRegionKernel(SampleKernel):
    """Per-sample ``nonsilent_region``."""

    def setup(self) -> None:
        """Check the window and reset interval."""
        window, reset = self.args["window_length"], self.args["reset_interval"]
        if window < 1:
            raise ValueError(f"nonsilent_region: window_length ({window}) must be positive")
        if reset != -1 and (reset < 1 or reset % window):
            raise ValueError(
                f"nonsilent_region: reset_interval ({reset}) must be -1 or a positive multiple "
                f"of window_length ({window})"
            )

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """Scalars: no layout."""
        return ("", "")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, np.ndarray]:
        """The region of one signal."""
        (signal,) = inputs
        if signal.ndim != 1:
            raise ValueError(f"nonsilent_region: expected a 1-D signal, got shape {signal.shape}")
        a = self.args
        begin, length = nonsilent_region(
            signal, a["cutoff_db"], a["window_length"], a["reference_power"]
        )
        return np.array(begin, np.int32), np.array(length, np.int32)
