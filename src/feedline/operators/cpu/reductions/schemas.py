"""Family ``reductions``: schemas and registration of DALI's ``reductions.*`` operators.

Every reduction works on each sample separately, over ``axes`` (or the layout names
``axis_names``; all axes when neither is given), and keeps the reduced axes as extent 1 with
``keep_dims``. Kernels (imported on first use): :mod:`.kernels`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["KERNELS", "SCHEMAS", "feedline_register_operators"]

_KERNELS = "feedline.operators.cpu.reductions.kernels"

_INPUT_TYPES = "uint8, int8, uint16, int16, uint32, int32, uint64, int64 or float32"

_AXES = ArgSpec(
    "axes",
    "int_vec",
    None,
    "Axis or axes to reduce, in ``[-ndim, ndim - 1]`` (negative ones count from the back). "
    "Not giving ``axes`` nor ``axis_names`` reduces every axis; an empty list reduces none. "
    "Mutually exclusive with ``axis_names``.",
)
_AXIS_NAMES = ArgSpec(
    "axis_names",
    "layout",
    None,
    "Layout names of the axes to reduce (``axis_names='HW'`` on an ``FHWC`` input is "
    "``axes=[1, 2]``). Mutually exclusive with ``axes``.",
)
_KEEP_DIMS = ArgSpec(
    "keep_dims",
    "bool",
    False,
    "Keep the reduced axes as dimensions of extent 1 (the output keeps the input's layout); "
    "otherwise they are removed, with their names.",
)
_DDOF = ArgSpec(
    "ddof",
    "int",
    0,
    "Delta degrees of freedom: the sum of squared deviations is divided by ``N - ddof``, "
    "``N`` being the number of reduced elements (``ddof=1`` gives the unbiased estimator).",
)


def _dtype(doc: str) -> ArgSpec:
    return ArgSpec("dtype", "dtype", None, doc)


def _data_input() -> InputSpec:
    return InputSpec("input", f"The data to reduce: {_INPUT_TYPES}.")


def _simple(name: str, summary: str, detail: str, dtype_doc: str | None) -> OpSchema:
    args = [_AXES, _AXIS_NAMES]
    if dtype_doc is not None:
        args.append(_dtype(dtype_doc))
    args.append(_KEEP_DIMS)
    return OpSchema(
        f"reductions.{name}",
        f"{summary}\n\n    {detail}",
        inputs=(_data_input(),),
        args=tuple(args),
    )


def _with_mean(name: str, summary: str, detail: str) -> OpSchema:
    return OpSchema(
        f"reductions.{name}",
        f"{summary}\n\n    {detail}",
        inputs=(
            InputSpec("data", f"The data to reduce: {_INPUT_TYPES}."),
            InputSpec(
                "mean",
                "The mean to measure the deviations from (float32): a constant, or a batch of "
                "per-sample means with one value per output element (``reductions.mean`` with the "
                "same axes, with or without ``keep_dims``); a single value is used for every "
                "output element.",
            ),
        ),
        args=(_AXES, _AXIS_NAMES, _DDOF, _KEEP_DIMS),
    )


MIN = _simple(
    "min",
    "Minimum of the elements along the given axes.",
    "The output has the input's type. An empty reduction gives the type's largest finite value.",
    None,
)
MAX = _simple(
    "max",
    "Maximum of the elements along the given axes.",
    "The output has the input's type. An empty reduction gives the type's lowest finite value.",
    None,
)
SUM = _simple(
    "sum",
    "Sum of the elements along the given axes.",
    "The sum is accumulated in the output type: by default int64 for signed, uint64 for unsigned "
    "and float32 for float32 input. ``dtype`` may also be the input's own type (the sum then "
    "wraps around on overflow) or float32 (for 8-, 16- and 32-bit integers).",
    "Output type, in which the sum is accumulated: the input's type, its 64-bit widening or "
    "FLOAT; default the 64-bit widening for integers, FLOAT for float32.",
)
MEAN = _simple(
    "mean",
    "Mean of the elements along the given axes.",
    "float32 by default. With ``dtype`` set to the input's integer type the sum is accumulated "
    "in that type (wrapping around on overflow) and divided with truncation toward zero.",
    "Output type: FLOAT (default) or the input's own type.",
)
MEAN_SQUARE = _simple(
    "mean_square",
    "Mean of the squared elements along the given axes.",
    "float32 by default. With ``dtype`` set to INT64 (signed input) or UINT64 (unsigned input) "
    "the squares are summed in that type and divided with truncation toward zero.",
    "Output type: FLOAT (default), or the input's 64-bit integer widening.",
)
RMS = _simple(
    "rms",
    "Root mean square of the elements along the given axes.",
    "float32 by default. With ``dtype`` set to the input's integer type the squares are summed "
    "in that type (wrapping around on overflow) and the root is truncated toward zero.",
    "Output type: FLOAT (default) or the input's own type.",
)
STD_DEV = _with_mean(
    "std_dev",
    "Standard deviation of the elements along the given axes, around a given mean.",
    "``sqrt(sum((x - mean)**2) / (N - ddof))`` as float32, ``N`` being the number of reduced "
    "elements (an empty reduction gives NaN).",
)
VARIANCE = _with_mean(
    "variance",
    "Variance of the elements along the given axes, around a given mean.",
    "``sum((x - mean)**2) / (N - ddof)`` as float32, ``N`` being the number of reduced elements "
    "(an empty reduction gives NaN).",
)

SCHEMAS = (MIN, MAX, SUM, MEAN, MEAN_SQUARE, RMS, STD_DEV, VARIANCE)
KERNELS = {
    "reductions.min": f"{_KERNELS}:MinKernel",
    "reductions.max": f"{_KERNELS}:MaxKernel",
    "reductions.sum": f"{_KERNELS}:SumKernel",
    "reductions.mean": f"{_KERNELS}:MeanKernel",
    "reductions.mean_square": f"{_KERNELS}:MeanSquareKernel",
    "reductions.rms": f"{_KERNELS}:RmsKernel",
    "reductions.std_dev": f"{_KERNELS}:StdDevKernel",
    "reductions.variance": f"{_KERNELS}:VarianceKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the reductions."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
