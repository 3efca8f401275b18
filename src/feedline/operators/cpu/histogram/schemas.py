"""Family ``histogram``: schemas and registration of ``equalize``, ``clahe`` and ``debayer``
(with DALI's legacy aliases ``experimental.equalize`` and ``experimental.debayer``).

Kernels (imported on first use): :mod:`.equalization` and :mod:`.debayer`; both run OpenCV.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "CLAHE",
    "DEBAYER",
    "EQUALIZE",
    "EXPERIMENTAL_DEBAYER",
    "EXPERIMENTAL_EQUALIZE",
    "KERNELS",
    "SCHEMAS",
    "feedline_register_operators",
]

_PKG = "feedline.operators.cpu.histogram"
_LEGACY = "Legacy alias of ``{}`` (DALI moved it out of ``experimental``).\n\n"

EQUALIZE = OpSchema(
    "equalize",
    """Equalize the histogram of each channel of uint8 images and videos.

    Every channel of every frame is equalized on its own, as OpenCV's ``equalizeHist``: the
    value ``v`` becomes ``round(255 * (cdf(v) - cdf_min) / (N - cdf_min))``, where ``cdf`` counts
    the pixels up to ``v`` and ``N`` is the number of pixels (a one-valued channel is left as is).
    Up to 512 channels.""",
    inputs=(InputSpec("input", "uint8 images or videos.",
                      layouts=("HW", "HWC", "CHW", "FHW", "FHWC", "FCHW")),),
)  # fmt: skip

EXPERIMENTAL_EQUALIZE = replace(
    EQUALIZE, name="experimental.equalize", doc=_LEGACY.format("equalize") + EQUALIZE.doc
)

CLAHE = OpSchema(
    "clahe",
    """Contrast Limited Adaptive Histogram Equalization (CLAHE) of uint8 images.

    The image is cut into ``tiles_y`` x ``tiles_x`` tiles; each tile's histogram is clipped at
    ``clip_limit * tile_area / 256`` (the excess spread over all bins) and equalized, and each
    pixel's value is interpolated bilinearly between the look-up tables of the four nearest
    tiles (OpenCV's ``createCLAHE``, which DALI's CPU operator also runs). Grayscale images
    (one channel) are equalized directly; RGB images either on the
    lightness of their CIE Lab conversion (``luma_only=True``, the channels must be in RGB
    order) or channel by channel.""",
    inputs=(InputSpec("input", "uint8 HWC images with 1 or 3 channels.", layouts=("HWC",)),),
    args=(
        ArgSpec("bins", "int", 256, "Number of histogram bins, a power of 2. As in DALI's CPU "
                "operator, uint8 images always use 256 bins; the value is only checked."),
        ArgSpec("clip_limit", "float", REQUIRED, "Relative clip limit: the clip is "
                "clip_limit * tile_area / bins."),
        ArgSpec("luma_only", "bool", True, "For RGB images: equalize the Lab lightness only "
                "(True) or each channel."),
        ArgSpec("tiles_x", "int", REQUIRED, "Number of tiles across the width (> 0)."),
        ArgSpec("tiles_y", "int", REQUIRED, "Number of tiles down the height (> 0)."),
    ),
)  # fmt: skip

DEBAYER = OpSchema(
    "debayer",
    """Reconstruct RGB images from single-channel Bayer-mosaic sensor data (demosaicing).

    ``blue_position`` (row, column) says where the blue sensor sits in the 2x2 tile that starts
    at the second row and column, as OpenCV counts: ``(0, 0)`` BGGR, ``(0, 1)`` GBRG,
    ``(1, 0)`` GRBG, ``(1, 1)`` RGGB. ``algorithm``: ``bilinear_ocv`` (the default when not
    given), ``edgeaware_ocv``, ``vng_ocv`` (uint8 only) or ``gray_ocv`` (a one-channel gray
    image). Height and width must be even. The output is ``HWC`` (``FHWC`` for sequences) of
    the input's type (uint8 or uint16).""",
    inputs=(InputSpec("input", "Single-channel uint8/uint16 mosaics.",
                      layouts=("HW", "HWC", "FHW", "FHWC")),),
    args=(
        ArgSpec("algorithm", "str", None, "bilinear_ocv (default), edgeaware_ocv, vng_ocv or "
                "gray_ocv; default_npp is DALI's GPU algorithm and is rejected.",
                choices=("bilinear_ocv", "edgeaware_ocv", "vng_ocv", "gray_ocv", "default_npp",
                         "default")),
        ArgSpec("blue_position", "int_vec", REQUIRED, "Position (row, column) of blue in the "
                "2x2 Bayer tile.", tensor=True),
    ),
)  # fmt: skip

EXPERIMENTAL_DEBAYER = replace(
    DEBAYER, name="experimental.debayer", doc=_LEGACY.format("debayer") + DEBAYER.doc
)

SCHEMAS = (EQUALIZE, EXPERIMENTAL_EQUALIZE, CLAHE, DEBAYER, EXPERIMENTAL_DEBAYER)
KERNELS = {
    "equalize": f"{_PKG}.equalization:EqualizeKernel",
    "experimental.equalize": f"{_PKG}.equalization:EqualizeKernel",
    "clahe": f"{_PKG}.equalization:ClaheKernel",
    "debayer": f"{_PKG}.debayer:DebayerKernel",
    "experimental.debayer": f"{_PKG}.debayer:DebayerKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the histogram and colour-reconstruction operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
