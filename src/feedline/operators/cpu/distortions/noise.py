"""``noise.shot`` and ``noise.salt_and_pepper``, drawn from each sample's own generator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.tensors import check_dtype, saturate_cast

__all__ = ["SaltAndPepperKernel", "ShotNoiseKernel", "salt_and_pepper", "shot_noise"]

#: DALI's types for both noise operators.
_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64,
          np.float32)  # fmt: skip


def shot_noise(data: np.ndarray, factor: float, rng: np.random.Generator) -> np.ndarray:
    """``poisson(max(0, data / factor)) * factor`` in ``data``'s type; ``data`` when factor is 0."""
    if factor == 0:
        return data.copy()
    expected = np.maximum(data.astype(np.float64) / factor, 0.0)
    noisy = rng.poisson(expected) * factor
    return saturate_cast(noisy, data.dtype)


def salt_and_pepper(
    data: np.ndarray,
    rng: np.random.Generator,
    *,
    prob: float,
    salt_vs_pepper: float,
    salt: float,
    pepper: float,
    channel_axis: int | None,
) -> np.ndarray:
    """Replace values of ``data`` by ``salt`` or ``pepper``; with a ``channel_axis`` every
    channel of a pixel shares one draw."""
    shape = list(data.shape)
    if channel_axis is not None:
        shape[channel_axis] = 1
    draw = rng.random(tuple(shape), dtype=np.float32)
    salted = draw < np.float32(prob * salt_vs_pepper)
    peppered = (draw < np.float32(prob)) & ~salted
    values = saturate_cast(np.array([salt, pepper], np.float64), data.dtype)
    out = data.copy()
    np.copyto(out, values[0], where=np.broadcast_to(salted, data.shape))
    np.copyto(out, values[1], where=np.broadcast_to(peppered, data.shape))
    return out


def _scalar(value: Any) -> float:
    return float(np.asarray(value).reshape(()))


class ShotNoiseKernel(SampleKernel):
    """Per-sample ``noise.shot``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Add shot noise to one sample."""
        (data,) = inputs
        check_dtype("noise.shot", data, _TYPES)
        return shot_noise(data, _scalar(args["factor"]), sample.rng)


class SaltAndPepperKernel(SampleKernel):
    """Per-sample ``noise.salt_and_pepper``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Add salt-and-pepper noise to one sample."""
        op = "noise.salt_and_pepper"
        (data,) = inputs
        check_dtype(op, data, _TYPES)
        prob, ratio = _scalar(args["prob"]), _scalar(args["salt_vs_pepper"])
        for name, value in (("prob", prob), ("salt_vs_pepper", ratio)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{op}: argument {name!r} = {value} must be in [0, 1]")
        floating = data.dtype.kind == "f"
        low, high = (
            (-1.0, 1.0) if floating else (np.iinfo(data.dtype).min, np.iinfo(data.dtype).max)
        )
        salt = high if args["salt_val"] is None else _scalar(args["salt_val"])
        pepper = low if args["pepper_val"] is None else _scalar(args["pepper_val"])
        layout = sample.layouts[0]
        if args["per_channel"]:
            channel_axis = None
        elif layout:
            channel_axis = layout.index("C") if "C" in layout else None
        else:
            channel_axis = data.ndim - 1 if data.ndim > 0 else None
        return salt_and_pepper(data, sample.rng, prob=prob, salt_vs_pepper=ratio, salt=salt,
                               pepper=pepper, channel_axis=channel_axis)  # fmt: skip
