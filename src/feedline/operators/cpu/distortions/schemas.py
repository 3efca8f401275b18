"""Family ``distortions``: schemas and registration of ``water``, ``sphere``,
``jpeg_compression_distortion``, ``noise.shot`` and ``noise.salt_and_pepper``, with DALI's
arguments.

Kernels (imported on first use): :mod:`.displacement`, :mod:`.jpeg` and :mod:`.noise`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.types import InterpType
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "JPEG_COMPRESSION_DISTORTION",
    "KERNELS",
    "NOISE_SALT_AND_PEPPER",
    "NOISE_SHOT",
    "SCHEMAS",
    "SPHERE",
    "WATER",
    "feedline_register_operators",
]

_PKG = "feedline.operators.cpu.distortions"
_HWC = (InputSpec("input", "uint8 or float32 HWC images.", layouts=("HWC",)),)
_DISPLACEMENT_ARGS = (
    ArgSpec("fill_value", "float", 0.0, "Value of pixels whose source is outside the image."),
    ArgSpec("interp_type", "interp", InterpType.INTERP_NN, "INTERP_NN or INTERP_LINEAR."),
    ArgSpec("mask", "int", 1, "0: leave the sample unchanged; 1: apply the distortion.",
            tensor=True),
)  # fmt: skip
_WAVE = 2 * math.pi / 128

WATER = OpSchema(
    "water",
    """Make images look as if seen through rippling water.

    The output pixel at ``(x, y)`` (pixel corners at whole coordinates) samples the input at
    ``x' = x + ampl_x * sin(freq_x * y + phase_x)`` and
    ``y' = y + ampl_y * cos(freq_y * x + phase_y)``, computed in float32; sources outside the
    image give ``fill_value``. Nearest-neighbour sampling takes pixel ``floor(x'), floor(y')``;
    linear sampling interpolates between pixel centres and rounds halves away from zero.""",
    inputs=_HWC,
    args=(
        ArgSpec("ampl_x", "float", 10.0, "Amplitude of the wave in the x direction."),
        ArgSpec("ampl_y", "float", 10.0, "Amplitude of the wave in the y direction."),
        ArgSpec("freq_x", "float", _WAVE, "Frequency of the wave in the x direction "
                "(default 2 pi / 128)."),
        ArgSpec("freq_y", "float", _WAVE, "Frequency of the wave in the y direction "
                "(default 2 pi / 128)."),
        ArgSpec("phase_x", "float", 0.0, "Phase of the wave in the x direction."),
        ArgSpec("phase_y", "float", 0.0, "Phase of the wave in the y direction."),
        *_DISPLACEMENT_ARGS,
    ),
)  # fmt: skip

SPHERE = OpSchema(
    "sphere",
    """Bulge images outward as if mapped onto a sphere.

    With the centre ``(cx, cy) = (W / 2, H / 2)`` and ``d = int(max(cx, cy))``, the pixel whose
    centre lies at offset ``(dx, dy)`` from the centre samples the input at
    ``(cx + r * dx, cy + r * dy)``, ``r = sqrt(dx² + dy²) / d``; sources outside the image give
    ``fill_value``. Sampling is as in ``water``.""",
    inputs=_HWC,
    args=_DISPLACEMENT_ARGS,
)

JPEG_COMPRESSION_DISTORTION = OpSchema(
    "jpeg_compression_distortion",
    """Add JPEG compression artefacts to RGB images: encode to JPEG at ``quality``, decode.

    A real JPEG encode and decode (OpenCV's libjpeg-turbo, 4:2:0 chroma subsampling, as DALI's
    CPU operator), so the output is what a JPEG file of that quality would show.""",
    inputs=(InputSpec("input", "uint8 RGB images (HWC) or sequences (FHWC).",
                      layouts=("HWC", "FHWC")),),
    args=(
        ArgSpec("quality", "int", 50, "JPEG quality from 1 (lowest) to 100 (highest); values "
                "outside are clamped.", tensor=True),
    ),
)  # fmt: skip

_NOISE_NOTE = (
    "\n\n    Noise comes from each sample's generator (reproducible for any number of threads). "
    "The output has the input's shape, type and layout; integer outputs are rounded (halves "
    "away from zero) and saturated."
)

NOISE_SHOT = OpSchema(
    "noise.shot",
    """Apply shot (Poisson) noise: ``output = poisson(max(0, input / factor)) * factor``.

    Each value counts events of size ``factor`` whose expected number is ``input / factor``;
    a ``factor`` of 0 returns the input unchanged. The larger the factor, the stronger the
    noise."""
    + _NOISE_NOTE,
    inputs=(InputSpec("input", "Data of any layout: (u)int8 to (u)int64 or float32."),),
    args=(ArgSpec("factor", "float", 20.0, "Size of one event.", tensor=True),),
)

NOISE_SALT_AND_PEPPER = OpSchema(
    "noise.salt_and_pepper",
    """Apply salt-and-pepper noise: replace values by ``salt_val`` or ``pepper_val`` at random.

    Each value (or, without ``per_channel``, each pixel: all its channels together) is
    corrupted with probability ``prob``; a corrupted one becomes salt with probability
    ``salt_vs_pepper`` and pepper otherwise."""
    + _NOISE_NOTE,
    inputs=(InputSpec("input", "Data of any layout: (u)int8 to (u)int64 or float32."),),
    args=(
        ArgSpec("pepper_val", "float", None, "Value of pepper; default: the type's minimum "
                "(-1.0 for floating point).", tensor=True),
        ArgSpec("per_channel", "bool", False, "Draw the noise for each value independently; "
                "otherwise once per pixel for all channels (the layout's C axis, or the last "
                "axis without a layout)."),
        ArgSpec("prob", "float", 0.05, "Probability of a value being corrupted.", tensor=True),
        ArgSpec("salt_val", "float", None, "Value of salt; default: the type's maximum (1.0 "
                "for floating point).", tensor=True),
        ArgSpec("salt_vs_pepper", "float", 0.5, "Probability of a corrupted value being salt.",
                tensor=True),
    ),
)  # fmt: skip

SCHEMAS = (WATER, SPHERE, JPEG_COMPRESSION_DISTORTION, NOISE_SHOT, NOISE_SALT_AND_PEPPER)
KERNELS = {
    "water": f"{_PKG}.displacement:WaterKernel",
    "sphere": f"{_PKG}.displacement:SphereKernel",
    "jpeg_compression_distortion": f"{_PKG}.jpeg:JpegDistortionKernel",
    "noise.shot": f"{_PKG}.noise:ShotNoiseKernel",
    "noise.salt_and_pepper": f"{_PKG}.noise:SaltAndPepperKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the distortion and noise operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
