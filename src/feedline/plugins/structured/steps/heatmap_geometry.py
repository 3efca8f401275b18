"""The per-object geometry of :class:`BoundingBoxToHeatmapConverter`, in NumPy (float32).

One call per annotation and sample: boxes and centers scaled from image to heatmap pixels and
clipped to the heatmap, the centers' integer pixels and sub-pixel offsets, which objects are
active, and the radii of their Gaussians (``draw_gaussians`` then draws them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["HeatmapGeometry", "HeatmapRules", "heatmap_geometry"]

_F32 = np.float32


@dataclass(frozen=True)
class HeatmapRules:
    """What makes an object active and how large its Gaussian is.

    Attributes:
        heatmap_hw: the heatmap's ``(height, width)``.
        num_categories: objects of a category outside ``0 .. num_categories - 1`` are inactive
            (None: categories are not checked).
        min_object_size: a ``[height, width]`` minimum for every object (heatmap pixels).
        per_category_min_object_sizes: a ``[height, width]`` minimum per category.
        min_fraction_area_clipping: the smallest share of its area an object may keep after
            clipping.
        min_radius: the smallest radius.
        max_radius: the largest radius.
        radius_scaling_factor: the radius is the distance from the center to the nearest edge
            times this factor.
    """

    heatmap_hw: tuple[int, int]
    num_categories: int | None
    min_object_size: tuple[float, float] | None
    per_category_min_object_sizes: np.ndarray | None
    min_fraction_area_clipping: float
    min_radius: float
    max_radius: float
    radius_scaling_factor: float


@dataclass(frozen=True)
class HeatmapGeometry:
    """The per-object results (``N`` objects)."""

    bboxes: np.ndarray  # float32 [N, 4], clipped, heatmap pixels
    centers: np.ndarray  # int32 [N, 2], the center's pixel
    center_offsets: np.ndarray  # float32 [N, 2], the center minus its pixel
    height_width: np.ndarray  # float32 [N, 2], of the clipped box
    active: np.ndarray  # bool [N]
    radii: np.ndarray  # float32 [N]


def _scale_and_clip(points: np.ndarray, scale: np.ndarray, hw: Sequence[int]) -> tuple:
    scaled = points.reshape(-1, 2).astype(_F32) * scale
    upper = np.array([hw[1] - 1, hw[0] - 1], _F32)
    return scaled, np.clip(scaled, _F32(0), upper)


def _radii(bboxes: np.ndarray, centers: np.ndarray, factor: float) -> np.ndarray:
    """Distance from each center to its box's nearest edge (0 outside the box), times factor."""
    xs, ys = np.sort(bboxes[:, 0::2], axis=1), np.sort(bboxes[:, 1::2], axis=1)
    distances = np.stack(
        [
            centers[:, 0] - xs[:, 0],
            centers[:, 1] - ys[:, 0],
            xs[:, 1] - centers[:, 0],
            ys[:, 1] - centers[:, 1],
        ],
        axis=1,
    )
    nearest = np.maximum(distances.min(axis=1, initial=np.inf), _F32(0))
    return (nearest.astype(np.float64) * factor).astype(_F32)


def _active(
    height_width: np.ndarray,
    fractions: np.ndarray,
    categories: np.ndarray | None,
    rules: HeatmapRules,
) -> np.ndarray:
    active = fractions >= rules.min_fraction_area_clipping
    if rules.min_object_size is not None:
        active &= np.all(height_width >= np.asarray(rules.min_object_size, _F32), axis=1)
    if categories is None:
        return active
    known = categories >= 0
    if rules.num_categories is not None:
        known &= categories < rules.num_categories
    active &= known
    if rules.per_category_min_object_sizes is not None:
        minimum = rules.per_category_min_object_sizes[np.where(known, categories, 0)]
        active &= np.all(height_width >= minimum, axis=1)
    return active


def heatmap_geometry(
    bboxes: np.ndarray,
    centers: np.ndarray | None,
    image_hw: Sequence[int],
    categories: np.ndarray | None,
    is_valid: np.ndarray | None,
    rules: HeatmapRules,
) -> HeatmapGeometry:
    """Everything :class:`BoundingBoxToHeatmapConverter` needs of one annotation.

    Args:
        bboxes: ``[N, 4]`` boxes ``[x1, y1, x2, y2]`` in image pixels (corners of either
            diagonal, in any order).
        centers: ``[N, 2]`` object centers in image pixels; None: the boxes' centers.
        image_hw: the image's ``(height, width)``.
        categories: per object, its category (None: not used).
        is_valid: per object, whether it may be active at all (None: all may).
        rules: the step's configuration.
    """
    boxes = np.asarray(bboxes).reshape(-1, 4).astype(_F32)
    if centers is None:
        centers = (boxes[:, 0:2] + boxes[:, 2:4]) / _F32(2.0)
    hw = rules.heatmap_hw
    scale = np.array([hw[1], hw[0]], _F32) / np.asarray(image_hw, _F32).reshape(-1)[[1, 0]]
    corners, clipped = _scale_and_clip(boxes, scale, hw)
    corners, clipped = corners.reshape(-1, 4), clipped.reshape(-1, 4)
    _, center_points = _scale_and_clip(np.asarray(centers), scale, hw)
    height_width = np.abs(
        np.stack([clipped[:, 3] - clipped[:, 1], clipped[:, 2] - clipped[:, 0]], 1)
    )
    full = np.abs(corners[:, 3] - corners[:, 1]) * np.abs(corners[:, 2] - corners[:, 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        fractions = height_width[:, 0] * height_width[:, 1] / full
    active = _active(height_width, fractions, categories, rules)
    if is_valid is not None:
        active &= np.asarray(is_valid, bool).reshape(-1)
    radii = _radii(clipped, center_points, rules.radius_scaling_factor)
    radii = np.minimum(np.maximum(_F32(rules.min_radius), radii), _F32(rules.max_radius))
    pixels = np.floor(center_points).astype(np.int32)
    return HeatmapGeometry(
        clipped,
        pixels,
        (center_points - pixels).astype(_F32),
        height_width.astype(_F32),
        active,
        radii.astype(_F32),
    )
