"""``crop``: cut a window of images, sequences and volumes (DALI's crop conventions).

The window extent comes from ``crop`` (``(H, W)`` or ``(D, H, W)``) or ``crop_h``/``crop_w``/
``crop_d`` (fractional extents are truncated); its start along each axis is
``round(crop_pos * (in_size - crop_size))`` (``crop_pos`` in single precision, as DALI holds
it; halves away from zero, or truncated toward zero with ``rounding="truncate"``), so
``crop_pos=0.5`` centres it. Axes without a requested extent are kept whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.tensors import (
    check_not_empty,
    output_dtype,
    resolve_layout,
    saturate_cast,
)
from feedline.operators.cpu.image.windows import (
    crop_anchor,
    crop_shape_from_args,
    extract_window,
    spatial_axes,
)

__all__ = ["CROP_LAYOUTS", "DEFAULT_LAYOUTS", "CropKernel", "crop_image", "crop_window"]

CROP_LAYOUTS = (
    "HWC", "CHW", "HW", "FHWC", "FCHW", "CFHW", "DHWC", "CDHW", "FDHWC", "FCDHW", "CFDHW",
)  # fmt: skip
#: Layout assumed for data without one, by number of dimensions.
DEFAULT_LAYOUTS = {2: "HW", 3: "HWC", 4: "FHWC"}
_POS_ARGS = {"D": "crop_pos_z", "H": "crop_pos_y", "W": "crop_pos_x"}
CROP_TYPES = (
    np.uint8,
    np.int8,
    np.uint16,
    np.int16,
    np.int32,
    np.float16,
    np.float32,
    np.float64,
)


def crop_window(
    op: str, layout: str, shape: tuple[int, ...], args: Mapping[str, Any]
) -> dict[int, tuple[int, int]]:
    """The crop window as ``{axis: (start, size)}`` for a sample of ``shape`` in ``layout``.

    As in DALI, a two-value ``crop`` of a volume crops H and W only, and a three-value ``crop``
    (or ``crop_d``) of a sequence without D crops its frames (F) as the depth (``crop_pos_z``
    places it).

    Raises:
        ValueError: bad crop arguments, or a ``crop_pos_*`` outside ``[0, 1]``.
    """
    axes = spatial_axes(layout)
    count = None if args.get("crop") is None else len(tuple(args["crop"]))
    depth = count == 3 or (count is None and args.get("crop_d") is not None)
    if depth and "D" not in axes and "F" in layout:
        axes = {"D": layout.index("F"), **axes}
    names = [a for a in "DHW" if a in axes]
    if count == 2 and "D" in axes:
        names = ["H", "W"]
    extents = crop_shape_from_args(op, args, names)
    rounding = args.get("rounding") or "round"
    window = {}
    for name, size in extents.items():
        pos = args.get(_POS_ARGS[name])
        pos = 0.5 if pos is None else float(pos)
        if not 0.0 <= pos <= 1.0:
            raise ValueError(f"{op}: {_POS_ARGS[name]} must be in [0, 1], got {pos}")
        in_size = shape[axes[name]]
        window[axes[name]] = (crop_anchor(in_size, size, pos, rounding), size)
    return window


def crop_image(op: str, image: np.ndarray, layout: str, args: Mapping[str, Any]) -> np.ndarray:
    """Crop one sample (a view when the window is inside, else padded or trimmed)."""
    window = crop_window(op, layout, image.shape, args)
    channel = layout.find("C")
    return extract_window(
        op,
        image,
        window,
        args.get("out_of_bounds_policy") or "error",
        args.get("fill_values") or (0.0,),
        channel if channel >= 0 else None,
    )


class CropKernel(SampleKernel):
    """Per-sample ``crop``."""

    implied_layouts: ClassVar[Mapping[int, str]] = {3: "HWC", 4: "DHWC"}

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The input's layout (HWC/HW/FHWC assumed for data without one)."""
        return (input_layouts[0] if input_layouts else "",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Crop one sample and convert it to ``dtype``."""
        (image,) = inputs
        layout = resolve_layout(
            "crop", sample.layouts[0], image.ndim, CROP_LAYOUTS, DEFAULT_LAYOUTS
        )
        check_not_empty("crop", image)
        out_type = output_dtype("crop", args["dtype"], image.dtype, CROP_TYPES)
        out = crop_image("crop", image, layout, args)
        if out.dtype != out_type:
            return saturate_cast(out, out_type)
        return np.ascontiguousarray(out)
