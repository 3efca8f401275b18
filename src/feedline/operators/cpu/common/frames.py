"""Viewing images, volumes and sequences of any layout as a stack of channel-last planes.

Axes named ``F`` (frames) and ``C`` (channels) are not spatial; every other axis is. Frames and
channels that come before the spatial axes are folded into one leading "plane" axis, channels
after them stay last, so a sample becomes a ``(planes, *spatial, channels)`` array without
moving any data: ``HWC`` gives ``(1, H, W, C)``, ``FCHW`` gives ``(F*C, H, W, 1)``. Without a
layout every axis is spatial.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = [
    "PlaneSplit",
    "check_frame_counts",
    "frame_value",
    "from_planes",
    "per_frame_args",
    "split_axes",
    "split_images",
    "stack_planes",
    "to_planes",
]

#: The layout of image data without one, by number of dimensions (DALI's first match).
IMAGE_DEFAULTS = {2: "HW", 3: "HWC", 4: "FHWC"}


def per_frame_args(arg_layouts: Mapping[str, str], input_layout: str) -> list[str]:
    """The arguments given per frame (``fn.per_frame``: a layout starting with ``F``).

    Raises:
        ValueError: an argument is per frame but the input (input 0) has no leading frame axis;
            the message is DALI's.
    """
    names = [name for name, layout in arg_layouts.items() if layout.startswith("F")]
    if names and not input_layout.startswith("F"):
        raise ValueError(
            f"Tensor input for argument {names[0]} is specified per frame (got F layout). In "
            "that case, samples in the input 0 must contain frames too. Got layout "
            f"`{input_layout}` that does not contain frames."
        )
    return names


def check_frame_counts(
    index: int, counts: Mapping[str, int], frames: int, where: str = "input 0"
) -> None:
    """Each per-frame argument of sample ``index`` (name → its number of values) holds one value
    or one per frame of ``where``, which has ``frames`` frames.

    Raises:
        ValueError: a count that is neither; the message is DALI's.
    """
    for name, count in counts.items():
        if count not in (1, frames):
            raise ValueError(
                f"The sample {index} of tensor argument `{name}` contains {count} per-frame "
                f"parameters, but there are {frames} frames in the corresponding sample of "
                f"{where}. The numbers should match."
            )


def frame_value(values: Sequence[Any], frame: int) -> Any:
    """A per-frame argument's value for ``frame``: a single value serves every frame."""
    return values[frame if len(values) > 1 else 0]


@dataclass(frozen=True)
class PlaneSplit:
    """Where a sample's spatial axes are.

    Attributes:
        leading: how many non-spatial axes (``F``, ``C``) precede the spatial ones.
        spatial: how many spatial axes there are.
        channel_last: whether a ``C`` axis follows the spatial ones.
        frames: whether the layout has an ``F`` axis.
    """

    leading: int
    spatial: int
    channel_last: bool
    frames: bool


@lru_cache(maxsize=1024)  # a pure function of its arguments, asked once per sample
def split_axes(op: str, layout: str, ndim: int, max_spatial: int = 3) -> PlaneSplit:
    """Split ``layout`` (``""``: every axis spatial) of an ``ndim``-D sample.

    Raises:
        ValueError: the layout does not fit ``ndim``, names ``F`` or ``C`` twice, has frames
            after the spatial axes, a ``C`` axis between spatial ones, no spatial axis or more
            than ``max_spatial``; the messages are DALI's.
    """
    if not layout:
        if not 1 <= ndim <= max_spatial:
            raise ValueError(
                f"{op}: input data with empty layout cannot have more than {max_spatial} "
                f"dimensions, got input with {ndim} dimensions."
            )
        return PlaneSplit(0, ndim, False, False)
    if len(layout) != ndim:
        raise ValueError(f"{op}: layout {layout!r} does not match a {ndim}-D input")
    leading = 0
    while leading < ndim and layout[leading] in "FC":
        leading += 1
    if leading == ndim:
        raise ValueError(f"{op}: No spatial axes found in the layout: {layout}.")
    channel_last = layout.endswith("C") and layout.index("C") >= leading
    inner = layout[leading : ndim - int(channel_last)]
    if "F" in inner or (channel_last and "F" in layout[leading:]):
        raise ValueError(
            f"{op}: For sequences, layout should begin with 'F' or 'C', got: {layout}."
        )
    if "C" in inner:
        raise ValueError(
            f"{op}: Only channel-first or channel-last layouts are supported, got: {layout}."
        )
    if layout.count("F") > 1 or layout.count("C") > 1:
        raise ValueError(
            f"{op}: Found more the one occurrence of 'F' or 'C' axes in layout: {layout}."
        )
    if len(inner) > max_spatial:
        raise ValueError(
            f"{op}: Too many dimensions, found: {len(inner)} data axes, maximum supported is: "
            f"{max_spatial}."
        )
    return PlaneSplit(leading, len(inner), channel_last, "F" in layout)


@lru_cache(maxsize=1024)  # a pure function of its arguments, asked once per sample
def split_images(op: str, layout: str, ndim: int) -> PlaneSplit:
    """:func:`split_axes` for operators on 2-D images: data without a layout is ``HW``,
    ``HWC`` or ``FHWC`` by its number of dimensions.

    Raises:
        ValueError: as :func:`split_axes`, or the data has not exactly 2 spatial axes.
    """
    if not layout:
        if ndim not in IMAGE_DEFAULTS:
            raise ValueError(f"{op}: a {ndim}-D input without a layout is not an image")
        layout = IMAGE_DEFAULTS[ndim]
    split = split_axes(op, layout, ndim)
    if split.spatial != 2:
        raise ValueError(f"{op}: expects images (2 spatial dimensions), got layout {layout!r}")
    return split


def to_planes(data: np.ndarray, split: PlaneSplit) -> np.ndarray:
    """``data`` as a ``(planes, *spatial, channels)`` array (a view)."""
    spatial = data.shape[split.leading : split.leading + split.spatial]
    channels = data.shape[-1] if split.channel_last else 1
    return data.reshape((-1, *spatial, channels))


def stack_planes(planes: list[np.ndarray]) -> np.ndarray:
    """Per-plane results as one ``(planes, ...)`` array (no copy for a single plane)."""
    return planes[0][None] if len(planes) == 1 else np.stack(planes)


def from_planes(planes: np.ndarray, split: PlaneSplit, shape: tuple[int, ...]) -> np.ndarray:
    """The inverse of :func:`to_planes` for a sample of ``shape`` (the spatial extents may have
    changed: they are taken from ``planes``)."""
    leading = shape[: split.leading]
    trailing = planes.shape[-1:] if split.channel_last else ()
    return planes.reshape((*leading, *planes.shape[1:-1], *trailing))
