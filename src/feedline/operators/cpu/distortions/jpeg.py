"""``jpeg_compression_distortion``: a real JPEG encode and decode with OpenCV, as DALI's CPU
operator does (RGB to BGR, ``imencode`` at the quality, ``imdecode``, back to RGB)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype, resolve_layout

__all__ = ["JpegDistortionKernel", "jpeg_roundtrip"]

_OP = "jpeg_compression_distortion"


def jpeg_roundtrip(image: np.ndarray, quality: int, out: np.ndarray | None = None) -> np.ndarray:
    """``image`` (uint8 RGB, HWC) after a JPEG encode at ``quality`` (clamped to 1..100) and a
    decode, written into ``out`` when given."""
    cv2 = import_cv2(_OP)
    quality = min(max(int(quality), 1), 100)
    bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    ok, encoded = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError(f"{_OP}: JPEG encoding of a {image.shape} image failed")
    decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
    if out is None:
        return cv2.cvtColor(decoded, cv2.COLOR_BGR2RGB)
    cv2.cvtColor(decoded, cv2.COLOR_BGR2RGB, dst=out)
    return out


class JpegDistortionKernel(SampleKernel):
    """Per-sample ``jpeg_compression_distortion``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Distort one image or sequence."""
        (image,) = inputs
        layout = resolve_layout(_OP, sample.layouts[0], image.ndim, ("HWC", "FHWC"),
                                {3: "HWC", 4: "FHWC"})  # fmt: skip
        check_dtype(_OP, image, (np.uint8,))
        if image.shape[-1] != 3:
            raise ValueError(f"{_OP}: expects 3-channel RGB images, got shape {image.shape}")
        quality = int(np.asarray(args["quality"]).reshape(()))
        target = sample.output(image.shape, image.dtype)
        frames = zip(image, target, strict=True) if layout == "FHWC" else [(image, target)]
        for frame, out in frames:
            jpeg_roundtrip(frame, quality, out)
        return target
