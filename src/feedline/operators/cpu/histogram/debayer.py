"""``debayer``: demosaicing with OpenCV's ``demosaicing``, as DALI's CPU operator runs it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.errors import ArgumentError
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype, resolve_layout

__all__ = ["DebayerKernel", "debayer"]

_LAYOUTS = ("HW", "HWC", "FHW", "FHWC")
_DEFAULTS = {2: "HW", 3: "HWC", 4: "FHWC"}
_PATTERNS = ("BG", "GB", "GR", "RG")
_SUFFIX = {"bilinear_ocv": "2RGB", "edgeaware_ocv": "2RGB_EA", "vng_ocv": "2RGB_VNG",
           "gray_ocv": "2GRAY"}  # fmt: skip


def _pattern(op: str, blue_position: Any) -> str:
    values = [int(v) for v in np.asarray(blue_position).ravel()]
    if len(values) != 2:
        raise ValueError(
            f"{op}: The blue_position must be specified with exactly two values to describe a "
            f"position within 2D tile. Got {len(values)} values."
        )
    y, x = values
    if y not in (0, 1) or x not in (0, 1):
        raise ValueError(
            f"{op}: The `blue_position` position must lie within 2x2 tile, got: ({y}, {x})."
        )
    return _PATTERNS[2 * y + x]


def debayer(mosaic: np.ndarray, pattern: str, algorithm: str) -> np.ndarray:
    """Demosaic one ``HW`` mosaic; ``pattern`` is OpenCV's (``BG``, ``GB``, ``GR``, ``RG``)."""
    cv2 = import_cv2("debayer")
    code = getattr(cv2, f"COLOR_Bayer{pattern}{_SUFFIX[algorithm]}")
    out = cv2.demosaicing(np.ascontiguousarray(mosaic), code)
    return out if out.ndim == 3 else out[:, :, None]


class DebayerKernel(SampleKernel):
    """Per-sample ``debayer`` (and ``experimental.debayer``)."""

    def setup(self) -> None:
        """Pick the algorithm (bilinear_ocv by default) and reject the GPU-only one."""
        algorithm = self.ctx.args["algorithm"]
        if algorithm == "default_npp":
            raise ArgumentError(
                f"{self.ctx.schema.name}: default_npp algorithm is not supported on CPU."
            )
        self.algorithm = "bilinear_ocv" if algorithm in (None, "default") else algorithm

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """``HWC``, or ``FHWC`` for sequences."""
        layout = input_layouts[0] if input_layouts else ""
        return ("FHWC" if layout.startswith("F") else "HWC",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Demosaic one image or sequence."""
        op = self.ctx.schema.name
        (image,) = inputs
        layout = resolve_layout(op, sample.layouts[0], image.ndim, _LAYOUTS, _DEFAULTS)
        check_dtype(op, image, (np.uint8, np.uint16))
        if self.algorithm == "vng_ocv" and image.dtype != np.uint8:
            raise TypeError(f"{op}: VNG debayering only supported with UINT8.")
        if layout.endswith("C") and image.shape[-1] != 1:
            raise ValueError(
                f"{op}: The debayer operator expects grayscale (i.e. single channel) images, "
                f"however the sample at idx {sample.index} has shape {image.shape}, which, "
                f"assuming {layout} layout, implies {image.shape[-1]} channels. For sequences "
                "use the FHW layout."
            )
        frames = image if layout.startswith("F") else image[None]
        height, width = frames.shape[1:3]
        if height % 2 or width % 2:
            raise ValueError(
                f"{op}: The height and width of the image to debayer must be even. However, the "
                f"sample at idx {sample.index} has shape {image.shape}."
            )
        pattern = _pattern(op, args["blue_position"])
        out = np.stack([debayer(f.reshape(height, width), pattern, self.algorithm) for f in frames])
        return out if layout.startswith("F") else out[0]
