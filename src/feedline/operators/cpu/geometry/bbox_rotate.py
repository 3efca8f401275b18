"""``bbox_rotate``: move boxes the way ``rotate`` moves the image they belong to.

The box corners are rotated about the image centre onto the output canvas (the one ``rotate``
makes: ``size``, else the input size with ``keep_size``, else the rotated bounding size). The
new box is the corners' enclosing box (``expand``), the original extent centred on the rotated
centre (``fixed``), or halfway between. With ``keep_size`` boxes are clipped to the canvas and
those keeping less than ``remove_threshold`` of their area are dropped (with their labels).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.geometry.warp import rotated_size

__all__ = ["BBoxRotateKernel", "rotate_boxes"]

_MODES = ("expand", "halfway", "fixed")
_LAYOUTS = ("xyWH", "xyXY")


def rotate_boxes(
    ltrb: np.ndarray,
    angle: float,
    in_size: tuple[float, float],
    out_size: tuple[float, float],
    mode: str,
) -> np.ndarray:
    """Rotate pixel boxes ``(N, 4)`` ``[l, t, r, b]`` by ``angle`` degrees (counter-clockwise on
    screen) from an ``in_size`` (h, w) image onto an ``out_size`` canvas, centre onto centre."""
    radians = math.radians(angle)
    cos, sin = math.cos(radians), math.sin(radians)
    xs = ltrb[:, [0, 2, 0, 2]] - in_size[1] / 2
    ys = ltrb[:, [1, 1, 3, 3]] - in_size[0] / 2
    new_x = cos * xs + sin * ys + out_size[1] / 2
    new_y = -sin * xs + cos * ys + out_size[0] / 2
    lo = np.stack([new_x.min(axis=1), new_y.min(axis=1)], axis=1)
    hi = np.stack([new_x.max(axis=1), new_y.max(axis=1)], axis=1)
    if mode != "expand":
        centre = (lo + hi) / 2
        half = (ltrb[:, 2:] - ltrb[:, :2]) / 2
        if mode == "halfway":
            half = (half + (hi - lo) / 2) / 2
        lo, hi = centre - half, centre + half
    return np.concatenate([lo, hi], axis=1)


class BBoxRotateKernel(SampleKernel):
    """``bbox_rotate`` on one sample: boxes (and labels) in, rotated boxes (and labels) out."""

    def setup(self) -> None:
        """Check ``mode``, ``bbox_layout``, ``shape_layout`` and ``remove_threshold``."""
        args = self.args
        if args["mode"] not in _MODES:
            raise ValueError(
                f"unknown mode {args['mode']!r}; supported modes are {', '.join(_MODES)}"
            )
        if args["bbox_layout"] not in _LAYOUTS:
            raise ValueError(
                f"unknown bbox_layout {args['bbox_layout']!r}; supported layouts are xyWH, xyXY"
            )
        layout = args["shape_layout"]
        if "H" not in layout or "W" not in layout:
            raise ValueError(f"shape_layout {layout!r} must name the H and W dimensions")
        if not 0.0 <= args["remove_threshold"] <= 1.0:
            raise ValueError(f"remove_threshold must lie in [0, 1], got {args['remove_threshold']}")

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layout on the boxes; labels keep theirs."""
        return ("", *input_layouts[1:])

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        boxes = inputs[0]
        if boxes.dtype != np.float32 or boxes.ndim != 2 or boxes.shape[1] != 4:
            raise ValueError(f"boxes must be float32 [N, 4], got {boxes.dtype} {boxes.shape}")
        in_size = self._input_size(args["input_shape"])
        out_size: tuple[float, float] = in_size
        size = np.asarray(args["size"], dtype=np.float64).reshape(-1)
        if size.size == 2:
            out_size = (float(size[0]), float(size[1]))
        elif size.size:
            raise ValueError(f"size must hold 2 values (H, W) or none, got {size.tolist()}")
        elif not args["keep_size"]:
            out_size = rotated_size(int(in_size[0]), int(in_size[1]), float(args["angle"]))
        ltrb = boxes.astype(np.float64)
        if args["bbox_layout"] == "xyWH":
            ltrb[:, 2:] += ltrb[:, :2]
        scale_in = np.array([in_size[1], in_size[0]] * 2)
        scale_out = np.array([out_size[1], out_size[0]] * 2)
        if args["bbox_normalized"]:
            ltrb *= scale_in
        rotated = rotate_boxes(ltrb, float(args["angle"]), in_size, out_size, args["mode"])
        kept = np.arange(len(boxes))
        if args["keep_size"]:
            clipped = np.clip(rotated, 0.0, scale_out)
            area = np.prod(rotated[:, 2:] - rotated[:, :2], axis=1)
            left = np.prod(clipped[:, 2:] - clipped[:, :2], axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                fraction = np.where(area > 0, left / np.where(area > 0, area, 1.0), 1.0)
            kept = np.flatnonzero(fraction >= args["remove_threshold"])
            rotated = clipped[kept]
        if args["bbox_normalized"]:
            rotated = rotated / scale_out
        if args["bbox_layout"] == "xyWH":
            rotated[:, 2:] -= rotated[:, :2]
        out = rotated.astype(np.float32)
        if len(inputs) == 1:
            return out
        labels = inputs[1]
        if labels.ndim not in (1, 2) or labels.shape[0] != boxes.shape[0]:
            raise ValueError(
                f"labels must have one entry per box ({boxes.shape[0]}), got shape {labels.shape}"
            )
        return out, labels[kept]

    def _input_size(self, value: Any) -> tuple[float, float]:
        layout = self.args["shape_layout"]
        shape = np.asarray(value, dtype=np.float64).reshape(-1)
        if shape.size < len(layout):
            raise ValueError(
                f"input_shape {shape.tolist()} has fewer values than shape_layout {layout!r}"
            )
        return float(shape[layout.index("H")]), float(shape[layout.index("W")])
