"""``flip``: mirror images, sequences and volumes along W, H and/or D."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
    return np.ascontiguousarray(image[tuple(index)])


class FlipKernel(SampleKernel):
    """Per-sample ``flip``; any non-zero ``horizontal``/``vertical``/``depthwise`` flips."""

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
