"""Kernel of ``ssd_random_crop`` (DALI's deprecated SSD crop; ``random_bbox_crop`` supersedes it).

Each round picks one of seven options uniformly: no crop, or a minimum IoU of -1 (any window),
0.1, 0.3, 0.5, 0.7 or 0.9. For a minimum IoU, ``num_attempts`` windows are drawn at once: width
and height uniform in ``[0.3, 1)`` (relative), kept only for an aspect ratio in ``[0.5, 2]``,
with a uniform anchor; the first that succeeds is taken. A window is accepted when every box
has at least the minimum IoU with it and at least one box centre lies inside it (bounds
included); otherwise the next round starts.
The loop ends for sure, since "no crop" is picked with probability 1/7 each round.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel

__all__ = ["SSDRandomCropKernel", "ssd_window"]

#: The options of a round: a minimum IoU, or NaN for "no crop".
_THRESHOLDS = np.array([-1.0, 0.1, 0.3, 0.5, 0.7, 0.9, np.nan])
_ROUNDS_AT_ONCE = 4


def _iou(boxes: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """IoU of every window ``(M, 4)`` with every box ``(N, 4)``: ``(M, N)``."""
    lt = np.maximum(boxes[None, :, :2], windows[:, None, :2])
    rb = np.minimum(boxes[None, :, 2:], windows[:, None, 2:])
    inter = np.prod(np.clip(rb - lt, 0.0, None), axis=2)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    window_area = (windows[:, 2] - windows[:, 0]) * (windows[:, 3] - windows[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        return inter / (area[None, :] + window_area[:, None] - inter)


def ssd_window(
    boxes: np.ndarray, num_attempts: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray] | None:
    """Search a window for ``ltrb`` boxes ``(N, 4)``.

    To keep NumPy's per-call cost low, the options of ``_ROUNDS_AT_ONCE`` rounds and all their
    windows are drawn and tested together; the first successful window in round order wins.

    Returns:
        ``(window, kept)``: the relative window ``[l, t, r, b]`` and the indices of the kept
        boxes, or None for "no crop".
    """
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    while True:
        picks = rng.integers(len(_THRESHOLDS), size=_ROUNDS_AT_ONCE)
        no_crop = np.flatnonzero(np.isnan(_THRESHOLDS[picks]))
        rounds = int(no_crop[0]) if no_crop.size else _ROUNDS_AT_ONCE
        count = rounds * num_attempts
        if count:
            extents = rng.uniform(0.3, 1.0, size=(count, 2))
            anchors = rng.uniform(0.0, 1.0, size=(count, 2)) * (1.0 - extents)
            windows = np.concatenate([anchors, anchors + extents], axis=1)
            min_iou = np.repeat(_THRESHOLDS[picks[:rounds]], num_attempts)
            ratio = extents[:, 0] / extents[:, 1]
            inside = np.all(
                (centres[None] >= windows[:, None, :2]) & (centres[None] <= windows[:, None, 2:]),
                axis=2,
            )
            good = (
                (ratio >= 0.5)
                & (ratio <= 2.0)
                & ~np.any(_iou(boxes, windows) < min_iou[:, None], axis=1)
                & inside.any(axis=1)
            )
            hits = np.flatnonzero(good)
            if hits.size:
                first = int(hits[0])
                return windows[first], np.flatnonzero(inside[first])
        if no_crop.size:
            return None


class SSDRandomCropKernel(SampleKernel):
    """``ssd_random_crop``: crops an HWC image and its ``ltrb`` boxes and labels."""

    def setup(self) -> None:
        """Warn that the operator is deprecated and check ``num_attempts``."""
        warnings.warn(
            f"{self.ctx.name}: ssd_random_crop is deprecated (as in DALI); use random_bbox_crop "
            "with slice or decoders.image_slice instead",
            DeprecationWarning,
            stacklevel=2,
        )
        if self.args["num_attempts"] < 0:
            raise ValueError(f"num_attempts must not be negative, got {self.args['num_attempts']}")

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The image keeps its layout; boxes and labels keep theirs."""
        return (input_layouts[0], input_layouts[1], input_layouts[2])

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        image, boxes, labels = inputs
        if image.ndim != 3:
            raise ValueError(f"the image must be HWC (3 dimensions), got shape {image.shape}")
        if boxes.dtype != np.float32 or boxes.ndim != 2 or boxes.shape[1] != 4:
            raise ValueError(
                f"boxes must be float32 [N, 4] in ltrb form, got {boxes.dtype} {boxes.shape}"
            )
        if labels.shape[:1] != boxes.shape[:1] or labels.ndim not in (1, 2):
            raise ValueError(
                f"labels must have one entry per box ({boxes.shape[0]}), got shape {labels.shape}"
            )
        found = ssd_window(boxes.astype(np.float64), args["num_attempts"], sample.rng)
        if found is None:
            return image, boxes, labels
        window, kept = found
        height, width = image.shape[:2]
        left, right = (np.rint(window[[0, 2]] * width)).astype(int)
        top, bottom = (np.rint(window[[1, 3]] * height)).astype(int)
        extent = np.concatenate([window[2:] - window[:2]] * 2)
        shifted = (boxes[kept] - np.concatenate([window[:2]] * 2)) / extent
        return (
            np.ascontiguousarray(image[top:bottom, left:right]),
            np.clip(shifted, 0.0, 1.0).astype(np.float32),
            labels[kept],
        )
