"""Viewing images and sequences of any supported layout as channel-last frames.

OpenCV works on ``HW`` or ``HWC`` planes; these helpers turn an ``HW``, ``HWC``, ``CHW``,
``FHW``, ``FHWC`` or ``FCHW`` sample into a ``(frames, H, W, C)`` array and back.
"""

from __future__ import annotations

import numpy as np

__all__ = ["from_frames", "to_frames"]


def to_frames(image: np.ndarray, layout: str) -> np.ndarray:
    """``image`` as a C-contiguous ``(frames, H, W, C)`` array (a view when already so)."""
    frames = image if layout.startswith("F") else image[None]
    inner = layout.removeprefix("F")
    if inner == "HW":
        frames = frames[..., None]
    elif inner == "CHW":
        frames = frames.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(frames)


def from_frames(frames: np.ndarray, layout: str) -> np.ndarray:
    """The inverse of :func:`to_frames`: ``(frames, H, W, C)`` back to ``layout``."""
    inner = layout.removeprefix("F")
    if inner == "HW":
        frames = frames[..., 0]
    elif inner == "CHW":
        frames = np.ascontiguousarray(frames.transpose(0, 3, 1, 2))
    return frames if layout.startswith("F") else frames[0]
