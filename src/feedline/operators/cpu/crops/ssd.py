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


#: Index of "no crop" in :data:`_THRESHOLDS`.
_NO_CROP = len(_THRESHOLDS) - 1
#: Relative slack of the area bound in :func:`_draw_rounds`, far above float64 rounding.
_AREA_SLACK = 1e-6
#: How many windows of each searching sample one step tests: few at first (most samples take
#: one of their first windows), more for the samples still searching after that.
_STEP_WINDOWS = (4, 16, 64, 256)


class _Search:
    """One sample's search: its untested candidate windows with their minimum IoUs, whether
    its last draw ended with "no crop", and the bounds of its box areas."""

    __slots__ = ("ends", "high", "low", "min_iou", "windows")

    def __init__(self, areas: np.ndarray) -> None:
        self.windows = np.zeros((0, 4))
        self.min_iou = np.zeros(0)
        self.ends = False
        bounded = bool(areas.size) and areas.min() > 0
        self.low = areas.max() * (1 - _AREA_SLACK) if bounded else -np.inf
        self.high = areas.min() * (1 + _AREA_SLACK) if bounded else np.inf


def _draw_rounds(
    samples: list[int],
    searches: dict[int, _Search],
    rngs: list[np.random.Generator],
    num_attempts: int,
) -> None:
    """Draw the next rounds of ``samples``, each from its own generator in a lone search's
    order (up to ``_ROUNDS_AT_ONCE`` options, then the windows of the rounds before the first
    "no crop"), and keep as each sample's candidates the windows that can succeed, in order.

    A window needs an aspect ratio in ``[0.5, 2]``, and since the IoU of a box of area ``a``
    and a window of area ``w`` is at most ``min(a, w) / max(a, w)``, a minimum IoU ``t > 0``
    for every box needs ``t * max(a) <= w`` and ``t * w <= min(a)``. Dropping the windows that
    break these bounds (with a little slack) changes no result: the full test would reject
    them too. Boxes of no positive area leave the IoU bound out.
    """
    extents, uniforms, min_ious, counts = [], [], [], []
    for i in samples:
        rng = rngs[i]
        picks = rng.integers(len(_THRESHOLDS), size=_ROUNDS_AT_ONCE).tolist()
        searches[i].ends = _NO_CROP in picks
        rounds = picks.index(_NO_CROP) if searches[i].ends else _ROUNDS_AT_ONCE
        count = rounds * num_attempts
        counts.append(count)
        if count:
            extents.append(rng.uniform(0.3, 1.0, size=(count, 2)))
            uniforms.append(rng.uniform(0.0, 1.0, size=(count, 2)))
            min_ious.append(np.repeat(_THRESHOLDS[picks[:rounds]], num_attempts))
    if not extents:
        for i in samples:
            searches[i].windows, searches[i].min_iou = np.zeros((0, 4)), np.zeros(0)
        return
    extent = np.concatenate(extents)
    anchors = np.concatenate(uniforms) * (1.0 - extent)
    windows = np.concatenate([anchors, anchors + extent], axis=1)
    min_iou = np.concatenate(min_ious)
    low = np.repeat([searches[i].low for i in samples], counts)
    high = np.repeat([searches[i].high for i in samples], counts)
    ratio = extent[:, 0] / extent[:, 1]
    area = (windows[:, 2] - windows[:, 0]) * (windows[:, 3] - windows[:, 1])
    keep = (
        (ratio >= 0.5)
        & (ratio <= 2.0)
        & ((min_iou <= 0) | ((area >= min_iou * low) & (area * min_iou <= high)))
    )
    ends = np.cumsum(counts)
    for i, stop, count in zip(samples, ends.tolist(), counts, strict=True):
        kept = keep[stop - count : stop]
        searches[i].windows = windows[stop - count : stop][kept]
        searches[i].min_iou = min_iou[stop - count : stop][kept]


def _evaluate(
    boxes: np.ndarray, valid: np.ndarray, windows: np.ndarray, min_iou: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Test candidate windows ``(W, 4)`` (their aspect ratios already checked) against their
    sample's boxes ``(W, N, 4)`` (``valid`` marks the real ones among the padding): which
    windows succeed, and which box centres each holds."""
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
    good = ~np.any((iou < min_iou[:, None]) & valid, axis=1) & inside.any(axis=1)
    return good, inside


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
    found: list[Found] = [None] * len(boxes)
    searches = {i: _Search((b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])) for i, b in enumerate(boxes)}
    step = 0
    while searches:
        exhausted = [i for i, search in searches.items() if not len(search.windows)]
        while exhausted:  # no candidate left: "no crop" if the draw ended so, else draw on
            for i in exhausted:
                if searches[i].ends:
                    del searches[i]
            drawing = [i for i in exhausted if i in searches]
            _draw_rounds(drawing, searches, rngs, num_attempts)
            exhausted = [i for i in drawing if not len(searches[i].windows)]
        if not searches:
            break
        count = _STEP_WINDOWS[min(step, len(_STEP_WINDOWS) - 1)]
        step += 1
        order = list(searches)
        owner = np.repeat(order, [min(count, len(searches[i].windows)) for i in order])
        windows = np.concatenate([searches[i].windows[:count] for i in order])
        min_iou = np.concatenate([searches[i].min_iou[:count] for i in order])
        for i in order:
            searches[i].windows = searches[i].windows[count:]
            searches[i].min_iou = searches[i].min_iou[count:]
        good, inside = _evaluate(padded[owner], valid[owner], windows, min_iou)
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
