"""Kernel of ``ssd_random_crop`` (DALI's deprecated SSD crop; ``random_bbox_crop`` supersedes it).

Each round picks one of seven options uniformly: no crop, or a minimum IoU of -1 (any window),
0.1, 0.3, 0.5, 0.7 or 0.9. For a minimum IoU, ``num_attempts`` windows are drawn at once: width
and height uniform in ``[0.3, 1)`` (relative), kept only for an aspect ratio in ``[0.5, 2]``,
with a uniform anchor; the first that succeeds is taken. A window is accepted when every box
has at least the minimum IoU with it and at least one box centre lies inside it (bounds
included); otherwise the next round starts.
The loop ends for sure, since "no crop" is picked with probability 1/7 each round.

"No crop" passes the three inputs through unchanged, as DALI copies them without looking at
them: an HW image or fewer labels than boxes are then fine. A crop takes the image's first two
dimensions (HWC or HW) and one label per kept box; a kept box without a label is an error
(DALI reads past the labels there).

Each sample is searched on its own, from its own generator, on the thread pool (so results do
not depend on the batch or the number of threads). The windows are tested by the compiled
kernel of :mod:`.bindings` (about 2 us per sample), or by NumPy where it is unavailable.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.crops.bindings import CropKernels, crop_kernels

__all__ = ["SSDRandomCropKernel", "ssd_window"]

#: The options of a round: a minimum IoU, or NaN for "no crop".
_THRESHOLDS = np.array([-1.0, 0.1, 0.3, 0.5, 0.7, 0.9, np.nan])
#: Index of "no crop" in :data:`_THRESHOLDS`.
_NO_CROP = len(_THRESHOLDS) - 1
#: Options drawn at once.
_ROUNDS_AT_ONCE = 4
#: The smallest relative window side (sides are uniform in ``[0.3, 1)``).
_MIN_EXTENT = 0.3
#: A window's search result: the relative window ``[l, t, r, b]`` and the mask of the boxes
#: whose centre it holds, or None for "no crop".
Found = tuple[np.ndarray, np.ndarray] | None


def ssd_window(
    boxes: np.ndarray,
    num_attempts: int,
    rng: np.random.Generator,
    kernels: CropKernels | None = None,
) -> Found:
    """Search a window for one sample's float32 ``ltrb`` boxes ``(N, 4)``.

    Draws up to ``_ROUNDS_AT_ONCE`` options from ``rng``, then the windows of the rounds before
    the first "no crop" (widths and heights, then anchors); tests those windows in order and
    takes the first that succeeds. When none does, the search ends with "no crop" if one was
    drawn, else draws again.

    Args:
        boxes: the sample's boxes, float32 ``(N, 4)``.
        num_attempts: windows per round.
        rng: the sample's generator.
        kernels: the compiled window test, or None for the NumPy one (same results).
    """
    boxes = np.ascontiguousarray(boxes, dtype=np.float32)
    while True:
        picks = rng.integers(len(_THRESHOLDS), size=_ROUNDS_AT_ONCE).tolist()
        ends = _NO_CROP in picks
        rounds = picks.index(_NO_CROP) if ends else _ROUNDS_AT_ONCE
        count = rounds * num_attempts
        if count:
            # The widths and heights (uniform in [0.3, 1)), then the anchors (uniform in
            # [0, 1)): numpy's uniform(low, high) is low + (high - low) * random(), so one
            # call draws the same numbers as two calls of uniform would.
            draws = rng.random((2, count, 2))
            thresholds = _THRESHOLDS[picks[:rounds]]
            if kernels is not None:
                found = kernels.first_window(boxes, draws, thresholds, num_attempts)
            else:
                found = _first_window(boxes, draws, thresholds, num_attempts)
            if found is not None:
                return found
        if ends:
            return None


def _first_window(
    boxes: np.ndarray, draws: np.ndarray, thresholds: np.ndarray, attempts: int
) -> Found:
    """NumPy twin of the compiled window test: all windows of a draw at once, the first that
    succeeds taken."""
    extents = _MIN_EXTENT + (1.0 - _MIN_EXTENT) * draws[0]
    ratio = extents[:, 0] / extents[:, 1]
    candidates = np.flatnonzero((ratio >= 0.5) & (ratio <= 2.0))
    if not len(candidates) or not len(boxes):
        return None
    extent = extents[candidates]
    anchors = draws[1][candidates] * (1.0 - extent)
    windows = np.concatenate([anchors, anchors + extent], axis=1)[:, None, :]
    min_iou = thresholds[candidates // attempts][:, None]
    with np.errstate(all="ignore"):  # boxes may hold infinities or NaN, as in the C kernel
        inside, iou = _tests(boxes.astype(np.float64), windows)
    good = np.flatnonzero(~np.any(iou < min_iou, axis=1) & inside.any(axis=1))
    if not len(good):
        return None
    first = good[0]
    return windows[first, 0].copy(), inside[first].astype(np.uint8)


def _tests(boxes: np.ndarray, windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which box centres each window ``(W, 1, 4)`` holds, and each box's IoU with it."""
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    inside = np.all(centres >= windows[..., :2], axis=2) & np.all(
        centres <= windows[..., 2:], axis=2
    )
    lt = np.maximum(boxes[:, :2], windows[..., :2])
    rb = np.minimum(boxes[:, 2:], windows[..., 2:])
    inter = np.prod(np.clip(rb - lt, 0.0, None), axis=2)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    window_area = (windows[..., 2] - windows[..., 0]) * (windows[..., 3] - windows[..., 1])
    return inside, inter / (area + window_area - inter)


class SSDRandomCropKernel(SampleKernel):
    """``ssd_random_crop``: crops an HWC (or HW) image and its ``ltrb`` boxes and labels; the window
    test and box mapping are compiled (NumPy where the CPU library is unavailable)."""

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
        self._kernels = crop_kernels()

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The image keeps its layout; boxes and labels keep theirs."""
        return (input_layouts[0], input_layouts[1], input_layouts[2])

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Check the sample, search its window with its own generator and crop."""
        image, boxes, labels = inputs
        _check_sample(image, boxes, labels, sample.index)
        dense_boxes = np.ascontiguousarray(boxes)
        found = ssd_window(dense_boxes, args["num_attempts"], sample.rng, self._kernels)
        if found is None:
            return image, boxes, labels
        window, inside = found
        _check_labels_of_kept_boxes(labels, inside, sample.index)
        if self._kernels is not None:
            cropped, kept = self._kernels.crop_boxes(dense_boxes, inside, window)
        else:
            cropped, kept = _crop_boxes(dense_boxes, inside, window)
        height, width = image.shape[:2]
        left, right = round(window[0] * width), round(window[2] * width)
        top, bottom = round(window[1] * height), round(window[3] * height)
        return np.ascontiguousarray(image[top:bottom, left:right]), cropped, labels[kept]


def _check_sample(image: np.ndarray, boxes: np.ndarray, labels: np.ndarray, index: int) -> None:
    where = f"sample {index}"
    if image.ndim not in (2, 3):
        raise ValueError(
            f"the image must be HWC or HW (3 or 2 dimensions), got shape {image.shape} ({where})"
        )
    if boxes.dtype != np.float32 or boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(
            f"boxes must be float32 [N, 4] in ltrb form, got {boxes.dtype} {boxes.shape} ({where})"
        )
    if labels.ndim not in (1, 2):
        raise ValueError(f"labels must be [N] or [N, 1], got shape {labels.shape} ({where})")


def _check_labels_of_kept_boxes(labels: np.ndarray, inside: np.ndarray, index: int) -> None:
    """A crop keeps the labels of the boxes it keeps: each kept box needs one."""
    kept = np.flatnonzero(inside)
    if kept.size and kept[-1] >= labels.shape[0]:
        raise ValueError(
            f"labels must have one entry per box ({inside.size}) when a crop keeps box "
            f"{int(kept[-1])}, got shape {labels.shape} (sample {index})"
        )


def _crop_boxes(
    boxes: np.ndarray, inside: np.ndarray, window: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """NumPy twin of the compiled box mapping: the boxes whose centre the window holds,
    relative to it and clipped to ``[0, 1]`` (float32), and their indices."""
    kept = np.flatnonzero(inside)
    extent = np.concatenate([window[2:] - window[:2]] * 2)
    with np.errstate(all="ignore"):
        shifted = (boxes[kept] - np.concatenate([window[:2]] * 2)) / extent
    return np.clip(shifted, 0.0, 1.0).astype(np.float32), kept
