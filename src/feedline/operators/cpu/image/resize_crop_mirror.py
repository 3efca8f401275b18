"""``resize_crop_mirror`` and ``fast_resize_crop_mirror``: DALI's legacy fused resize, crop and
flip, composed from ``resize``'s plan and resampler and ``crop``'s window.

``resize`` decides the output size and the source region it maps onto; ``crop``'s window
(placed on the resized extents) selects part of that output, and the mirror mask swaps the ends
of the selected region. The window's source region is then resampled once, so nothing is
resized that the crop throws away, and no intermediate image is made.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.image.crop import crop_window
from feedline.operators.cpu.image.resize import (
    check_resample_input,
    frames_first,
    resample_layout,
    spatial_size,
    to_channels_first,
)
from feedline.operators.cpu.image.windows import resize_plan

__all__ = ["ResizeCropMirrorKernel", "mirrored_crop_plan"]

#: Mirror mask bit per spatial axis letter (DALI's: 1 horizontal, 2 vertical, 4 depthwise).
_MIRROR_BITS = {"W": 1, "H": 2, "D": 4}


def mirrored_crop_plan(
    op: str, layout: str, in_size: Sequence[int], args: Mapping[str, Any]
) -> tuple[tuple[int, ...], tuple[tuple[float, float], ...]]:
    """Output size and source region of one sample: ``resize``'s plan narrowed to the crop
    window (placed on the resized extents) and flipped along the axes ``mirror`` selects.

    Args:
        op: operator name for error messages.
        layout: the sample's layout (its spatial letters are D, H, W).
        in_size: the spatial input extents, in the layout's D, H, W order.
        args: ``resize``'s and ``crop``'s arguments and ``mirror``.

    Returns:
        ``(out_size, source)`` as :func:`~feedline.operators.cpu.image.windows.resize_plan`
        returns them.

    Raises:
        ValueError: bad size or crop arguments.
    """
    resized, source = resize_plan(op, in_size, args)
    letters = [a for a in "DHW" if a in layout]
    spatial_layout = "".join(letters)
    window = crop_window(op, spatial_layout, tuple(resized), args)
    mirror = int(args.get("mirror") or 0)
    out_size = []
    region = []
    for axis, (letter, extent, (start, end)) in enumerate(
        zip(letters, resized, source, strict=True)
    ):
        anchor, size = window.get(axis, (0, extent))
        step = (end - start) / extent
        lo, hi = start + anchor * step, start + (anchor + size) * step
        if mirror & _MIRROR_BITS[letter]:
            lo, hi = hi, lo
        out_size.append(size)
        region.append((lo, hi))
    return tuple(out_size), tuple(region)


class ResizeCropMirrorKernel(SampleKernel):
    """Per-sample ``resize_crop_mirror`` (and ``fast_resize_crop_mirror``, which differs only
    in its ``antialias`` default and DALI's deprecation)."""

    def setup(self) -> None:
        """Warn, as DALI does, when the deprecated spelling is used."""
        if self.ctx.schema.name == "fast_resize_crop_mirror":
            warnings.warn(
                f"{self.ctx.name}: fast_resize_crop_mirror is deprecated (as in DALI); use "
                "resize_crop_mirror instead",
                DeprecationWarning,
                stacklevel=2,
            )

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Resize, crop and mirror one sample in one resampling pass."""
        op = self.ctx.schema.name
        image, declared, moved = frames_first(inputs[0], sample.layouts[0])
        layout, out_type = check_resample_input(op, image, declared, args, volumes=True)
        out_size, source = mirrored_crop_plan(op, layout, spatial_size(layout, image.shape), args)
        out = resample_layout(image, layout, out_size, source, args, out_type)
        return to_channels_first(out, moved)
