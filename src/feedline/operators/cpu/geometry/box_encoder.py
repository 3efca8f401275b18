"""``box_encoder``: SSD target encoding of boxes and labels against a set of anchors.

Matching (as in the SSD paper / MLPerf reference, and DALI):

1. IoU between every box and every anchor.
2. Each box claims its best anchor (the last one on ties): that pair's IoU is set to 2, so the
   anchor is matched whatever ``criteria`` is.
3. Each anchor takes its best box (the last one on ties) if their IoU is above ``criteria``.

Outputs, one row per anchor: matched anchors get their box as ``[cx, cy, w, h]`` and its label;
unmatched anchors keep the anchor itself (``[cx, cy, w, h]``) and label 0. With ``offset=True``
matched rows hold the normalised offsets
``((c_box - c_anchor) / wh_anchor - means[:2]) / stds[:2]`` and
``(log(wh_box / wh_anchor) - means[2:]) / stds[2:]`` (box and anchor first multiplied by
``scale``), and unmatched rows are zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.geometry.bbox import as_float_boxes, iou

__all__ = ["BoxEncoderKernel", "encode_boxes", "prepare_anchors"]


def prepare_anchors(anchors: tuple[float, ...]) -> np.ndarray:
    """Anchors given as a flat ``ltrb`` list → a float64 ``(M, 4)`` array.

    Raises:
        ValueError: for an empty list or one whose length is not a multiple of 4.
    """
    if not anchors or len(anchors) % 4:
        raise ValueError(
            f"anchors must be a non-empty flat list of [l, t, r, b] boxes (a multiple of 4 "
            f"values), got {len(anchors)} values"
        )
    return np.asarray(anchors, dtype=np.float64).reshape(-1, 4)


def _centre_extent(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (boxes[:, :2] + boxes[:, 2:]) / 2, boxes[:, 2:] - boxes[:, :2]


def encode_boxes(
    boxes: np.ndarray,
    labels: np.ndarray,
    anchors: np.ndarray,
    criteria: float = 0.5,
    offset: bool = False,
    scale: float = 1.0,
    means: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0),
    stds: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0),
) -> tuple[np.ndarray, np.ndarray]:
    """Encode ``ltrb`` boxes and their labels against ``anchors`` (see the module docs).

    Args:
        boxes: ``(N, 4)`` float boxes, ``[l, t, r, b]``.
        labels: ``N`` integer labels (shape ``(N,)`` or ``(N, 1)``).
        anchors: ``(M, 4)`` anchors, ``[l, t, r, b]``.
        criteria: IoU above which an anchor takes a box.
        offset: output normalised offsets instead of boxes.
        scale: factor applied to boxes and anchors before computing offsets.
        means: ``[x, y, w, h]`` means subtracted from the offsets.
        stds: ``[x, y, w, h]`` standard deviations dividing the offsets.

    Returns:
        ``(M, 4)`` float32 encoded boxes and ``(M,)`` labels of the labels' dtype.

    Raises:
        TypeError: for non-float boxes or non-integer labels.
        ValueError: for wrong shapes or a label count that does not match the boxes.
    """
    boxes = as_float_boxes(boxes, 4).astype(np.float64)
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be integers, got {labels.dtype}")
    flat_labels = labels.reshape(-1) if labels.ndim == 2 and labels.shape[1] == 1 else labels
    if flat_labels.shape != (boxes.shape[0],):
        raise ValueError(
            f"labels must have shape ({boxes.shape[0]},) or ({boxes.shape[0]}, 1) to match "
            f"{boxes.shape[0]} boxes, got {labels.shape}"
        )
    num_anchors = anchors.shape[0]
    out_labels = np.zeros(num_anchors, dtype=labels.dtype)
    anchor_centre, anchor_extent = _centre_extent(anchors)
    if offset:
        out_boxes = np.zeros((num_anchors, 4), dtype=np.float64)
    else:
        out_boxes = np.concatenate([anchor_centre, anchor_extent], axis=1)
    if boxes.shape[0] == 0:
        return out_boxes.astype(np.float32), out_labels
    ious = iou(boxes[:, None, :2], boxes[:, None, 2:], anchors[None, :, :2], anchors[None, :, 2:])
    last = num_anchors - 1
    best_anchor = last - np.argmax(ious[:, ::-1], axis=1)
    ious[np.arange(boxes.shape[0]), best_anchor] = 2.0
    best_box = boxes.shape[0] - 1 - np.argmax(ious[::-1, :], axis=0)
    matched = np.flatnonzero(ious[best_box, np.arange(num_anchors)] > criteria)
    chosen = best_box[matched]
    box_centre, box_extent = _centre_extent(boxes[chosen])
    if offset:
        a_centre, a_extent = anchor_centre[matched] * scale, anchor_extent[matched] * scale
        box_centre, box_extent = box_centre * scale, box_extent * scale
        mean, std = np.asarray(means, np.float64), np.asarray(stds, np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            out_boxes[matched, :2] = ((box_centre - a_centre) / a_extent - mean[:2]) / std[:2]
            out_boxes[matched, 2:] = (np.log(box_extent / a_extent) - mean[2:]) / std[2:]
    else:
        out_boxes[matched, :2] = box_centre
        out_boxes[matched, 2:] = box_extent
    out_labels[matched] = flat_labels[chosen]
    return out_boxes.astype(np.float32), out_labels


class BoxEncoderKernel(SampleKernel):
    """``box_encoder`` on one sample: ``(boxes, labels) -> (encoded boxes, encoded labels)``."""

    def setup(self) -> None:
        args = self.args
        self.anchors = prepare_anchors(args["anchors"])
        if not 0.0 <= args["criteria"] <= 1.0:
            raise ValueError(f"criteria must lie in [0, 1], got {args['criteria']}")
        for name in ("means", "stds"):
            if len(args[name]) != 4:
                raise ValueError(f"{name} must hold 4 values [x, y, w, h], got {len(args[name])}")
        if any(s == 0 for s in args["stds"]):
            raise ValueError(f"stds must not contain zeros, got {list(args['stds'])}")
        if args["scale"] == 0:
            raise ValueError("scale must not be 0")

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        return ("", "")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, np.ndarray]:
        return encode_boxes(
            inputs[0],
            inputs[1],
            self.anchors,
            criteria=args["criteria"],
            offset=args["offset"],
            scale=args["scale"],
            means=args["means"],
            stds=args["stds"],
        )
