"""Random number generators: ``random.uniform``, ``random.normal``, ``random.coin_flip``,
``random.choice``, ``random.beta``.

Every value comes from the sample's own generator (``SampleContext.rng``, derived from the
operator seed, the iteration and the sample index), so results are identical for any
``num_threads``. The output shape is ``shape`` if given, else the shape of the optional
``shape_like`` input, else a scalar per sample. Conversion to an integer ``dtype`` rounds half
away from zero and saturates to the type's range.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import ENUM_CLASSES, DataType, from_numpy_dtype, to_numpy_dtype
from feedline.operators.cpu.tensor.basic import cast_array

__all__ = [
    "BetaKernel",
    "ChoiceKernel",
    "CoinFlipKernel",
    "NormalKernel",
    "UniformKernel",
    "output_shape",
]


_FLOAT32_MAX = float(np.finfo(np.float32).max)

#: Draws of at most this many values per sample (and no ``shape_like`` input) run serially
#: (see ``SampleKernel.serial``).
_SERIAL_VALUES = 64


def output_shape(shape: Any, shape_like: np.ndarray | None) -> tuple[int, ...]:
    """The per-sample output shape from the ``shape`` argument or the ``shape_like`` input.

    Raises:
        ValueError: if both are given or ``shape`` has negative extents.
    """
    if shape is not None:
        if shape_like is not None:
            raise ValueError("shape and the shape_like input cannot both be given")
        extents = tuple(int(s) for s in np.asarray(shape).reshape(-1))
        if any(s < 0 for s in extents):
            raise ValueError(f"shape must not have negative extents, got {list(extents)}")
        return extents
    return () if shape_like is None else tuple(shape_like.shape)


def _convert(values: np.ndarray, dtype: DataType) -> np.ndarray:
    return cast_array(values, to_numpy_dtype(dtype))


def _shape_like(inputs: tuple[np.ndarray, ...], index: int) -> np.ndarray | None:
    return inputs[index] if len(inputs) > index else None


class _RandomKernel(SampleKernel):
    """Shared parts: the output dtype and layout (none), and running small draws serially."""

    default_dtype = DataType.FLOAT

    def setup(self) -> None:
        dtype = self.args["dtype"]
        self.dtype = self.default_dtype if dtype is None else dtype
        self.np_dtype = to_numpy_dtype(self.dtype)
        shape = self.args.get("shape")
        self.serial = (
            self.ctx.num_inputs == 0
            and "shape" not in self.ctx.tensor_args
            and (shape is None or math.prod(output_shape(shape, None)) <= _SERIAL_VALUES)
        )

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        return ("",)


class UniformKernel(_RandomKernel):
    """``random.uniform``: continuous in ``[range[0], range[1])`` or uniform over ``values``."""

    def setup(self) -> None:
        super().setup()
        has_values = self.args.get("values") is not None or "values" in self.ctx.tensor_args
        has_range = self.args.get("range") is not None or "range" in self.ctx.tensor_args
        if has_values and has_range:
            raise ValueError("range and values are mutually exclusive")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        shape = output_shape(args["shape"], _shape_like(inputs, 0))
        values = args.get("values")
        if values is not None:
            if len(values) == 0:
                raise ValueError("values must not be empty")
            choices = np.asarray(values, dtype=np.float64)
            drawn = choices[sample.rng.integers(choices.size, size=shape)]
            return _convert(drawn, self.dtype)
        low, high = _range(args["range"]) if args["range"] is not None else (-1.0, 1.0)
        drawn = sample.rng.uniform(low, high, size=shape)
        out = _convert(drawn, self.dtype)
        if np.issubdtype(out.dtype, np.floating):
            below_high = np.nextafter(out.dtype.type(high), out.dtype.type(low))
            out = np.minimum(out, below_high, dtype=out.dtype)
        return out


def _range(value: Any) -> tuple[float, float]:
    if len(value) != 2:
        raise ValueError(f"range must be [min, max), got {len(value)} values: {list(value)}")
    low, high = float(value[0]), float(value[1])
    if not high > low:
        raise ValueError(f"range must satisfy min < max, got [{low}, {high})")
    return low, high


class NormalKernel(_RandomKernel):
    """``random.normal``: Gaussian with ``mean`` and ``stddev``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        shape = output_shape(args["shape"], _shape_like(inputs, 0))
        stddev = args["stddev"]
        if not stddev >= 0:
            raise ValueError(f"stddev must be non-negative, got {stddev}")
        drawn = sample.rng.normal(args["mean"], stddev, size=shape)
        return _convert(drawn, self.dtype)


class CoinFlipKernel(_RandomKernel):
    """``random.coin_flip``: 1 with ``probability``, else 0."""

    default_dtype = DataType.INT32

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        shape = output_shape(args["shape"], _shape_like(inputs, 0))
        probability = args["probability"]
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"probability must lie in [0, 1], got {probability}")
        drawn = sample.rng.random(size=shape) < probability
        return drawn.astype(self.np_dtype)  # 0 and 1 are exact in every type


class BetaKernel(_RandomKernel):
    """``random.beta``: beta distribution with ``alpha`` and ``beta`` (float32/float64 only)."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        if self.dtype not in (DataType.FLOAT, DataType.FLOAT64):
            raise TypeError(
                f"Data type {np.dtype(self.np_dtype).name} is not supported. Supported types "
                "are: float, double"
            )
        shape = output_shape(args["shape"], _shape_like(inputs, 0))
        for name in ("alpha", "beta"):
            value = float(args[name])
            if not (0 < value <= _FLOAT32_MAX):
                raise ValueError(
                    f"The `{name}` must be a positive float32, got `{args[name]}` for sample at "
                    f"index {sample.index}"
                )
        return sample.rng.beta(args["alpha"], args["beta"], size=shape).astype(self.np_dtype)


class ChoiceKernel(SampleKernel):
    """``random.choice``: draw elements of input ``a`` (or of ``range(a)`` for a scalar)."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """``a``'s layout when the output keeps its ndim, minus the outer axis when it loses
        one, else none (also when the shape comes per sample or from ``shape_like``)."""
        layout = input_layouts[0] if input_layouts else ""
        shape = self.args.get("shape")
        if not layout or "shape" in self.ctx.tensor_args or len(input_layouts) > 1:
            return ("",)
        added = 0 if shape is None else len(shape)
        return ({0: layout[1:], 1: layout}.get(added, ""),)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        a = inputs[0]
        shape = output_shape(args["shape"], _shape_like(inputs, 1))
        if a.ndim == 0:
            data_type = from_numpy_dtype(a.dtype)
            if data_type in ENUM_CLASSES or not np.issubdtype(a.dtype, np.integer):
                name = "float" if a.dtype == np.float32 else str(a.dtype)
                if data_type in ENUM_CLASSES:
                    name = f"DALI{ENUM_CLASSES[data_type].__name__}"
                raise TypeError(
                    f"random.choice: Data type {name} is not supported for 0D inputs. Supported "
                    "types are: uint8, uint16, uint32, uint64, int8, int16, int32, int64"
                )
            count = int(a)
        else:
            count = a.shape[0]
        if count <= 0:
            raise ValueError(
                "random.choice: Expected positive number of elements for sampling, got: "
                f"{count} for sample: {sample.index}."
            )
        p = args.get("p")
        if p is None:
            picks = sample.rng.integers(count, size=shape)
        else:
            probs = _probabilities(p, count, sample.index)
            picks = sample.rng.choice(count, size=shape, p=probs)
        if a.ndim == 0:
            return np.asarray(picks, dtype=a.dtype)
        return a[picks]


def _probabilities(p: Any, count: int, index: int) -> np.ndarray:
    """``p`` checked as DALI checks it (a scalar stands for every element), in its words."""
    given = np.asarray(p, dtype=np.float64)
    if given.size == 1:
        given = np.full(count, float(given.ravel()[0]))
    probs = given.reshape(-1)
    if probs.size != count:
        raise ValueError(
            f'random.choice: Unexpected shape for argument "p". Expected {{{count}}}, but got '
            f"{{{' x '.join(str(n) for n in given.shape)}}}"
        )
    outside = np.flatnonzero((probs < 0) | (probs > 1))
    if outside.size:
        at = int(outside[0])
        raise ValueError(
            "random.choice: Probabilities must be in range [0, 1], but got: "
            f"{probs[at]:g} for sample: {index} at index {at}."
        )
    total = probs.sum()
    if abs(total - 1.0) >= 1e-4:
        raise ValueError(
            f"random.choice: Sum of probabilities must be 1.0, but got {total:g} for sample: "
            f"{index}."
        )
    return probs / total
