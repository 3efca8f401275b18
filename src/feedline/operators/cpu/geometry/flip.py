"""``flip``: mirror images, sequences and volumes along W, H and/or D."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.tensors import resolve_layout

__all__ = ["FLIP_LAYOUTS", "FlipKernel", "flip"]

#: Layouts ``flip`` accepts: DALI's list plus the channel-less ``HW`` (a feedline extension).
FLIP_LAYOUTS = ("FDHWC", "FHWC", "DHWC", "HWC", "FCDHW", "FCHW", "CDHW", "CHW", "HW")
#: Layout assumed for data without one (DALI treats 3-D data as HWC).
FLIP_DEFAULTS = {2: "HW", 3: "HWC", 4: "FHWC", 5: "FDHWC"}


def flip(
    image: np.ndarray, layout: str, horizontal: bool, vertical: bool, depthwise: bool = False
) -> np.ndarray:
    """Flip ``image`` along W (``horizontal``), H (``vertical``) and D (``depthwise``).

    Axes the layout does not have are left alone (``depthwise`` on HWC is a no-op, as in DALI).
    Returns a new contiguous array (or ``image`` itself when nothing is flipped).
    """
    index: list[slice] = [slice(None)] * image.ndim
    flipped = False
    for axis_name, wanted in (("W", horizontal), ("H", vertical), ("D", depthwise)):
        axis = layout.find(axis_name)
        if wanted and axis >= 0:
            index[axis] = slice(None, None, -1)
            flipped = True
    if not flipped:
        return image
    fast = _flip_with_opencv(image, layout, horizontal, vertical and "H" in layout, depthwise)
    return fast if fast is not None else np.ascontiguousarray(image[tuple(index)])


#: Element types OpenCV's ``flip`` moves (it copies bytes; up to 512 channels).
_OPENCV_TYPES = frozenset(
    np.dtype(t)
    for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float16, np.float32, np.float64)
)


@functools.cache
def _opencv() -> Any:
    try:
        import cv2
    except ImportError:
        return None
    return cv2


def _flip_with_opencv(
    image: np.ndarray, layout: str, horizontal: bool, vertical: bool, depthwise: bool
) -> np.ndarray | None:
    """The flip by OpenCV (tens of times faster than NumPy's strided copy of interleaved
    channels), or None where it does not apply: no ``cv2``, another element type, a depthwise
    flip, a vertical flip of data with frames or planes before H, or W not last but for C."""
    cv2 = _opencv()
    w = layout.find("W")
    if cv2 is None or depthwise or image.dtype not in _OPENCV_TYPES or image.size == 0:
        return None
    if w < 0 or w < image.ndim - 2 or (w == image.ndim - 2 and layout[-1] != "C"):
        return None
    channels = image.shape[w + 1] if w + 1 < image.ndim else 1
    if channels > 512:
        return None
    if vertical:
        if layout.find("H") != 0 or w != 1:
            return None
        view = image.reshape(image.shape[0], image.shape[1], channels)
        code = -1 if horizontal else 0
    else:
        rows = int(np.prod(image.shape[:w]))
        view = image.reshape(rows, image.shape[w], channels)
        code = 1
    return cv2.flip(view, code).reshape(image.shape)


class FlipKernel(SampleKernel):
    """Per-sample ``flip``; any non-zero ``horizontal``/``vertical``/``depthwise`` flips."""

    implied_layouts: ClassVar[Mapping[int, str]] = {3: "HWC", 4: "FHWC"}

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Flip one sample."""
        (image,) = inputs
        layout = resolve_layout("flip", sample.layouts[0], image.ndim, FLIP_LAYOUTS, FLIP_DEFAULTS)
        return flip(
            image,
            layout,
            bool(args["horizontal"]),
            bool(args["vertical"]),
            bool(args["depthwise"]),
        )
