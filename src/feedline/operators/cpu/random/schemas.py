"""Family ``random``: schemas and registration of the operators that draw random numbers.

``random.uniform``, ``random.normal``, ``random.coin_flip``, ``random.choice``,
``random.beta`` and ``noise.gaussian``. Every value comes from the sample's own generator.
Kernels (imported on first use): :mod:`.distributions` and :mod:`.noise`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "KERNELS",
    "NOISE_GAUSSIAN",
    "RANDOM_BETA",
    "RANDOM_CHOICE",
    "RANDOM_COIN_FLIP",
    "RANDOM_NORMAL",
    "RANDOM_UNIFORM",
    "SCHEMAS",
    "feedline_register_operators",
]

_SHAPE_LIKE = InputSpec(
    "shape_like", "The output takes this input's shape (alternative to ``shape``).", optional=True
)
_SHAPE = ArgSpec("shape", "int_vec", None, "Output shape per sample (default: a scalar).", True)
_RANDOM_NOTE = (
    "\n\nValues come from the sample's own generator (operator seed, iteration, sample index): "
    "identical for any ``num_threads``. Integer ``dtype`` rounds half away from zero and "
    "saturates."
)

RANDOM_UNIFORM = OpSchema(
    name="random.uniform",
    doc="Generates uniformly distributed random numbers: continuous in ``[range[0], range[1])``, "
    "or drawn with equal probability from ``values``." + _RANDOM_NOTE,
    inputs=(_SHAPE_LIKE,),
    args=(
        ArgSpec("range", "float_vec", None, "``[min, max)``; None means [-1.0, 1.0].", True),
        ArgSpec("values", "float_vec", None, "Discrete values (exclusive with ``range``).", True),
        _SHAPE,
        ArgSpec("dtype", "dtype", None, "Output type; None means FLOAT."),
    ),
)

RANDOM_NORMAL = OpSchema(
    name="random.normal",
    doc="Generates normally distributed random numbers." + _RANDOM_NOTE,
    inputs=(_SHAPE_LIKE,),
    args=(
        ArgSpec("mean", "float", 0.0, "Mean of the distribution.", True),
        ArgSpec("stddev", "float", 1.0, "Standard deviation (>= 0).", True),
        _SHAPE,
        ArgSpec("dtype", "dtype", None, "Output type; None means FLOAT."),
    ),
)

RANDOM_COIN_FLIP = OpSchema(
    name="random.coin_flip",
    doc="Generates 1 with ``probability`` and 0 otherwise (Bernoulli)." + _RANDOM_NOTE,
    inputs=(_SHAPE_LIKE,),
    args=(
        ArgSpec("probability", "float", 0.5, "Probability of a 1, in [0, 1].", True),
        _SHAPE,
        ArgSpec("dtype", "dtype", None, "Output type; None means INT32."),
    ),
)

RANDOM_CHOICE = OpSchema(
    name="random.choice",
    doc=(
        "Draws random elements of ``a``: a scalar integer ``n`` means ``range(n)``; otherwise "
        "elements along the outer dimension (the output is ``shape + a.shape[1:]``). The output "
        "keeps ``a``'s type." + _RANDOM_NOTE
    ),
    inputs=(InputSpec("a", "A scalar count or the elements to choose from."), _SHAPE_LIKE),
    args=(
        ArgSpec("p", "float_vec", None, "Probability of each element (default: uniform).", True),
        _SHAPE,
    ),
)

RANDOM_BETA = OpSchema(
    name="random.beta",
    doc=(
        "Generates random numbers in ``[0, 1]`` following the beta distribution with parameters "
        "``alpha`` and ``beta``. Output types: float32 and float64." + _RANDOM_NOTE
    ),
    inputs=(_SHAPE_LIKE,),
    args=(
        ArgSpec("alpha", "float", 1.0, "The alpha parameter, a positive finite float.", True),
        ArgSpec("beta", "float", 1.0, "The beta parameter, a positive finite float.", True),
        _SHAPE,
        ArgSpec("dtype", "dtype", None, "Output type (FLOAT or FLOAT64); None means FLOAT."),
    ),
)

NOISE_GAUSSIAN = OpSchema(
    name="noise.gaussian",
    doc=(
        "Adds Gaussian noise; the output has the input's shape, type and layout.\n\n"
        "Noise comes from each sample's generator (reproducible for any thread count); integer "
        "outputs are rounded and saturated. The noise is ``random.normal``'s draw: with the same "
        "seed, ``noise.gaussian(x)`` equals ``x + random.normal(x)`` for float data. "
        "Types: (u)int8…(u)int64 and float32."
    ),
    inputs=(InputSpec("input", "Data of any layout."),),
    args=(
        ArgSpec("mean", "float", 0.0, "Mean of the noise.", tensor=True),
        ArgSpec("stddev", "float", 1.0, "Standard deviation of the noise (>= 0).", tensor=True),
    ),
)

SCHEMAS = (
    RANDOM_UNIFORM,
    RANDOM_NORMAL,
    RANDOM_COIN_FLIP,
    RANDOM_CHOICE,
    RANDOM_BETA,
    NOISE_GAUSSIAN,
)

_KERNELS = "feedline.operators.cpu.random"
KERNELS = {
    "random.uniform": f"{_KERNELS}.distributions:UniformKernel",
    "random.normal": f"{_KERNELS}.distributions:NormalKernel",
    "random.coin_flip": f"{_KERNELS}.distributions:CoinFlipKernel",
    "random.choice": f"{_KERNELS}.distributions:ChoiceKernel",
    "random.beta": f"{_KERNELS}.distributions:BetaKernel",
    "noise.gaussian": f"{_KERNELS}.noise:GaussianNoiseKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the random operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
