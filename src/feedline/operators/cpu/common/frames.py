"""Viewing images, volumes and sequences of any layout as a stack of channel-last planes.

Axes named ``F`` (frames) and ``C`` (channels) are not spatial; every other axis is. Frames and
channels that come before the spatial axes are folded into one leading "plane" axis, channels
after them stay last, so a sample becomes a ``(planes, *spatial, channels)`` array without
moving any data: ``HWC`` gives ``(1, H, W, C)``, ``FCHW`` gives ``(F*C, H, W, 1)``. Without a
layout every axis is spatial.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PlaneSplit", "from_planes", "split_axes", "to_planes"]


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


def split_axes(op: str, layout: str, ndim: int, spatial: tuple[int, ...] = (1, 2, 3)) -> PlaneSplit:
    """Split ``layout`` (``""``: every axis spatial) of an ``ndim``-D sample.

    Raises:
        ValueError: the layout does not match ``ndim``, a ``C`` axis sits between spatial axes,
            frames are not outermost (before channels), or the number of spatial axes is not
            in ``spatial``; the message names the operator.
    """
    if not layout:
        if ndim not in spatial:
            raise ValueError(
                f"{op}: input data with an empty layout must have {_counts(spatial)} "
                f"dimensions (all spatial), got {ndim}"
            )
        return PlaneSplit(0, ndim, False, False)
    if len(layout) != ndim:
        raise ValueError(f"{op}: layout {layout!r} does not match a {ndim}-D input")
    if "F" in layout and layout.index("F") != 0:
        raise ValueError(f"{op}: frames must be the outermost dimension, got layout {layout!r}")
    kinds = ["S" if name not in "FC" else name for name in layout]
    leading = 0
    while leading < ndim and kinds[leading] != "S":
        leading += 1
    channel_last = layout.endswith("C") and leading < ndim
    count = ndim - leading - int(channel_last)
    if any(k != "S" for k in kinds[leading : leading + count]):
        raise ValueError(
            f"{op}: channels must be first or last (after any frames), got layout {layout!r}"
        )
    if count not in spatial:
        raise ValueError(
            f"{op}: layout {layout!r} has {count} spatial dimensions; {_counts(spatial)} are "
            "supported"
        )
    return PlaneSplit(leading, count, channel_last, "F" in layout)


def _counts(values: tuple[int, ...]) -> str:
    return " or ".join(str(v) for v in values)


def to_planes(data: np.ndarray, split: PlaneSplit) -> np.ndarray:
    """``data`` as a ``(planes, *spatial, channels)`` array (a view)."""
    spatial = data.shape[split.leading : split.leading + split.spatial]
    channels = data.shape[-1] if split.channel_last else 1
    return data.reshape((-1, *spatial, channels))


def from_planes(planes: np.ndarray, split: PlaneSplit, shape: tuple[int, ...]) -> np.ndarray:
    """The inverse of :func:`to_planes` for a sample of ``shape`` (the spatial extents may have
    changed: they are taken from ``planes``)."""
    leading = shape[: split.leading]
    trailing = planes.shape[-1:] if split.channel_last else ()
    return planes.reshape((*leading, *planes.shape[1:-1], *trailing))
