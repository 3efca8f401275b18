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

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU

__all__ = ["SSDRandomCropKernel", "ssd_window", "ssd_windows"]

#: The options of a round: a minimum IoU, or NaN for "no crop".
_THRESHOLDS = np.array([-1.0, 0.1, 0.3, 0.5, 0.7, 0.9, np.nan])
_ROUNDS_AT_ONCE = 4
#: A window's search result: the relative window ``[l, t, r, b]`` and the kept box indices, or
#: None for "no crop".
Found = tuple[np.ndarray, np.ndarray] | None


def _draw(
    rng: np.random.Generator, num_attempts: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Up to ``_ROUNDS_AT_ONCE`` rounds drawn from one sample's generator: their windows
    ``(count, 4)``, minimum IoUs and width/height ratios, and whether a "no crop" round ends
    them."""
    picks = rng.integers(len(_THRESHOLDS), size=_ROUNDS_AT_ONCE)
    no_crop = np.flatnonzero(np.isnan(_THRESHOLDS[picks]))
    rounds = int(no_crop[0]) if no_crop.size else _ROUNDS_AT_ONCE
    count = rounds * num_attempts
    if not count:
        return np.zeros((0, 4)), np.zeros(0), np.zeros(0), bool(no_crop.size)
    extents = rng.uniform(0.3, 1.0, size=(count, 2))
    anchors = rng.uniform(0.0, 1.0, size=(count, 2)) * (1.0 - extents)
    windows = np.concatenate([anchors, anchors + extents], axis=1)
    min_iou = np.repeat(_THRESHOLDS[picks[:rounds]], num_attempts)
    return windows, min_iou, extents[:, 0] / extents[:, 1], bool(no_crop.size)


def _evaluate(
    boxes: np.ndarray,
    valid: np.ndarray,
    windows: np.ndarray,
    min_iou: np.ndarray,
    ratio: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Test windows ``(W, 4)`` against their sample's boxes ``(W, N, 4)`` (``valid`` marks the
    real ones among the padding): which windows succeed, and which box centres each holds."""
    centres = (boxes[..., :2] + boxes[..., 2:]) / 2
    inside = (
        np.all(centres >= windows[:, None, :2], axis=2)
        & np.all(centres <= windows[:, None, 2:], axis=2)
        & valid
    )
    lt = np.maximum(boxes[..., :2], windows[:, None, :2])
    rb = np.minimum(boxes[..., 2:], windows[:, None, 2:])
    inter = np.prod(np.clip(rb - lt, 0.0, None), axis=2)
    area = (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    window_area = (windows[:, 2] - windows[:, 0]) * (windows[:, 3] - windows[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area + window_area[:, None] - inter)
    good = (
        (ratio >= 0.5)
        & (ratio <= 2.0)
        & ~np.any((iou < min_iou[:, None]) & valid, axis=1)
        & inside.any(axis=1)
    )
    return good, inside


#: Relative slack of the area bound in :func:`_possible`, far above float64 rounding.
_AREA_SLACK = 1e-6


def _possible(
    draw: tuple[np.ndarray, np.ndarray, np.ndarray, bool], areas: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """The draw without the windows that cannot succeed, in their order.

    A window needs an aspect ratio in ``[0.5, 2]``, and since the IoU of a box of area ``a``
    and a window of area ``w`` is at most ``min(a, w) / max(a, w)``, a minimum IoU ``t > 0``
    for every box needs ``t * max(a) <= w`` and ``t * w <= min(a)``. Dropping the windows that
    break these bounds (with a little slack) changes no result: the full test would reject
    them too. Boxes of no positive area leave the IoU bound out.
    """
    windows, min_iou, ratio, ends = draw
    keep = (ratio >= 0.5) & (ratio <= 2.0)
    if areas.size and areas.min() > 0:
        area = (windows[:, 2] - windows[:, 0]) * (windows[:, 3] - windows[:, 1])
        low, high = areas.max() * (1 - _AREA_SLACK), areas.min() * (1 + _AREA_SLACK)
        keep &= (min_iou <= 0) | ((area >= min_iou * low) & (area * min_iou <= high))
    return windows[keep], min_iou[keep], ratio[keep], ends


#: How many windows of each searching sample one step tests: few at first (most samples take
#: one of their first windows), more for the samples still searching after that.
_STEP_WINDOWS = (4, 16, 64, 256)


class _Search:
    """One sample's search: its current draw and how many of its windows were tested."""

    __slots__ = ("draw", "rng", "tested")

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.draw: tuple[np.ndarray, np.ndarray, np.ndarray, bool] | None = None
        self.tested = 0


def ssd_windows(
    boxes: list[np.ndarray], num_attempts: int, rngs: list[np.random.Generator]
) -> list[Found]:
    """Search a window for each sample's ``ltrb`` boxes ``(N_i, 4)`` (float64).

    Each sample draws its rounds from its own generator, in the same order as a search of that
    sample alone would, so the results do not depend on the batch. The windows are tested in
    order, a few of every searching sample at a time and all samples together, so that a
    sample stops at its first successful window (as a loop over windows would) while NumPy is
    called a few times per step rather than per sample or per window.

    Returns:
        Per sample, the window and the indices of its kept boxes, or None for "no crop".
    """
    size = max((len(b) for b in boxes), default=0)
    padded = np.zeros((len(boxes), size, 4))
    valid = np.zeros((len(boxes), size), bool)
    for i, sample_boxes in enumerate(boxes):
        padded[i, : len(sample_boxes)] = sample_boxes
        valid[i, : len(sample_boxes)] = True
    areas = [(b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) for b in boxes]
    found: list[Found] = [None] * len(boxes)
    searches = {i: _Search(rng) for i, rng in enumerate(rngs)}
    step = 0
    while searches:
        count = _STEP_WINDOWS[min(step, len(_STEP_WINDOWS) - 1)]
        step += 1
        owners, parts = [], []
        for i, search in list(searches.items()):
            while search.draw is None or search.tested == len(search.draw[0]):
                if search.draw is not None and search.draw[3]:
                    del searches[i]  # the draw ended with "no crop" and none of it succeeded
                    break
                search.draw = _possible(_draw(search.rng, num_attempts), areas[i])
                search.tested = 0
            else:
                part = tuple(a[search.tested : search.tested + count] for a in search.draw[:3])
                search.tested += len(part[0])
                owners.append(np.full(len(part[0]), i))
                parts.append(part)
        if not parts:
            break
        owner = np.concatenate(owners)
        windows, min_iou, ratio = (np.concatenate([p[k] for p in parts]) for k in range(3))
        good, inside = _evaluate(padded[owner], valid[owner], windows, min_iou, ratio)
        hits = np.flatnonzero(good)
        winners, first = np.unique(owner[hits], return_index=True)
        for sample, hit in zip(winners.tolist(), hits[first].tolist(), strict=True):
            found[sample] = (windows[hit], np.flatnonzero(inside[hit]))
            del searches[sample]
    return found


def ssd_window(boxes: np.ndarray, num_attempts: int, rng: np.random.Generator) -> Found:
    """Search a window for one sample's ``ltrb`` boxes ``(N, 4)`` (see :func:`ssd_windows`)."""
    return ssd_windows([boxes], num_attempts, [rng])[0]


class SSDRandomCropKernel(Kernel):
    """``ssd_random_crop``: crops HWC images and their ``ltrb`` boxes and labels; the windows
    of the whole batch are searched together, the crops are cut on the thread pool."""

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

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Check every sample, then search and crop one share of the batch per thread (each
        sample's result depends only on its own generator, not on the share it is in)."""
        images, boxes, labels = (tl.samples() for tl in batch.inputs)
        for i in range(batch.size):
            _check_sample(images[i], boxes[i], labels[i], i)
        shares = np.array_split(
            np.arange(batch.size), max(1, min(self.ctx.num_threads, batch.size))
        )

        def share(k: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
            members = shares[k].tolist()
            windows = ssd_windows(
                [boxes[i].astype(np.float64) for i in members],
                self.args["num_attempts"],
                [batch.rng(i) for i in members],
            )
            return [
                _crop(images[i], boxes[i], labels[i], found)
                for i, found in zip(members, windows, strict=True)
            ]

        results = [r for part in batch.map(share, len(shares)) for r in part]
        infos = batch.inputs[0].source_infos()
        return [
            TensorListCPU.from_samples(
                [r[k] for r in results], batch.inputs[k].layout(), infos, stack=False
            )
            for k in range(3)
        ]


def _check_sample(image: np.ndarray, boxes: np.ndarray, labels: np.ndarray, index: int) -> None:
    where = f"sample {index}"
    if image.ndim != 3:
        raise ValueError(f"the image must be HWC (3 dimensions), got shape {image.shape} ({where})")
    if boxes.dtype != np.float32 or boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(
            f"boxes must be float32 [N, 4] in ltrb form, got {boxes.dtype} {boxes.shape} ({where})"
        )
    if labels.shape[:1] != boxes.shape[:1] or labels.ndim not in (1, 2):
        raise ValueError(
            f"labels must have one entry per box ({boxes.shape[0]}), got shape {labels.shape} "
            f"({where})"
        )


def _crop(
    image: np.ndarray, boxes: np.ndarray, labels: np.ndarray, found: Found
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
