"""The ``audio_resample`` kernel (see :mod:`feedline.operators.cpu.audio.resampling`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import to_numpy_dtype
from feedline.operators.cpu.audio.resampling import (
    convert_normalized,
    lobes_for_quality,
    resample,
    resampled_length,
    sinc_window,
    to_float,
)

__all__ = ["AudioResampleKernel", "resampling_ratio"]

_RATIO_ARGS = ("scale", "in_rate", "out_rate", "out_length")


def _scalar(value: Any) -> float | None:
    return None if value is None else float(np.asarray(value).reshape(()))


def resampling_ratio(args: Mapping[str, Any], n_in: int) -> tuple[float, float, int]:
    """``(in_rate, out_rate, out_length)`` from the one way of giving the ratio used.

    Raises:
        ValueError: no way, several ways, half of ``in_rate``/``out_rate``, or a value that
            is not positive.
    """
    given = {name: _scalar(args.get(name)) for name in _RATIO_ARGS}
    given = {name: value for name, value in given.items() if value is not None}
    rates = {"in_rate", "out_rate"} & set(given)
    if len(rates) == 1:
        raise ValueError("audio_resample: in_rate and out_rate must be given together")
    ways = len(set(given) - rates) + (1 if rates else 0)
    if ways != 1:
        raise ValueError(
            "audio_resample: give exactly one of scale, out_length or in_rate with out_rate "
            f"(got {', '.join(sorted(given)) or 'none'})"
        )
    bad = [f"{name}={value}" for name, value in given.items() if not value > 0]
    if bad and not (given.get("out_length") == 0 and n_in == 0):
        raise ValueError(f"audio_resample: {', '.join(bad)} must be positive")
    if "out_length" in given:
        length = int(given["out_length"])
        return float(max(n_in, 1)), float(max(length, 1)), length
    if rates:
        in_rate = float(np.float32(given["in_rate"]))
        out_rate = float(np.float32(given["out_rate"]))
    else:
        in_rate, out_rate = 1.0, float(np.float32(given["scale"]))
    return in_rate, out_rate, resampled_length(n_in, in_rate, out_rate)


class AudioResampleKernel(SampleKernel):
    """Per-sample ``audio_resample``."""

    def setup(self) -> None:
        """Check the quality; pick the filter."""
        try:
            self._window = sinc_window(lobes_for_quality(float(self.args["quality"])))
        except ValueError as exc:
            raise ValueError(f"audio_resample: {exc}") from None
        dtype = self.args["dtype"]
        self._dtype = None if dtype is None else to_numpy_dtype(dtype)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Resample one signal."""
        (signal,) = inputs
        if signal.ndim not in (1, 2) or signal.dtype.kind not in "iuf":
            raise ValueError(
                "audio_resample: expected a 1-D or 2-D (time, channels) numeric signal, got "
                f"{signal.ndim}-D {signal.dtype}"
            )
        dtype = self._dtype or signal.dtype
        in_rate, out_rate, length = resampling_ratio(args, len(signal))
        values = to_float(signal)
        if length != len(signal) or in_rate != out_rate:
            values = resample(values, in_rate, out_rate, self._window, length)
        if dtype == signal.dtype and dtype.kind == "f":
            return values.astype(dtype, copy=False)
        return convert_normalized(values, dtype)
