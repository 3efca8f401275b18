"""Array functions for structured pipelines: called on one sample's arrays (NumPy or CuPy).

The first five are ACCV-Lab's ``python_operator_functions`` (meant for ``fn.python_function``);
they run on CuPy arrays too when given them. The rest are the per-sample kernels of the graph
functions in :mod:`feedline.plugins.structured.graph_functions`, vectorised with NumPy.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

__all__ = [
    "add_post_transform_to_projection_matrix",
    "apply_clipping_and_get_with_clipping_info",
    "apply_transform_to_points",
    "get_is_active",
    "pad_to_common_size",
]


def array_module(*arrays: Any) -> ModuleType:
    """CuPy when one of ``arrays`` is a CuPy array (CuPy already imported), else NumPy."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and any(isinstance(a, cupy.ndarray) for a in arrays):
        return cupy
    return np


def _homogeneous(xp: ModuleType, points: Any) -> Any:
    """``(2, N)`` points with a row of ones below."""
    return xp.concatenate([points, xp.ones((1, points.shape[1]), dtype=points.dtype)], axis=0)


def apply_transform_to_points(points: Any, transform: Any) -> Any:
    """An affine transform of rows of points, each row holding ``x, y`` pairs.

    Args:
        points: ``(N, 2k)`` coordinates: ``k`` points per row.
        transform: the 2x3 or 3x3 matrix (homogeneous; the third row is not used).

    Raises:
        ValueError: rows whose length is not a multiple of two.
    """
    xp = array_module(points, transform)
    if points.size == 0:
        return xp.zeros_like(points)
    if points.shape[1] % 2:
        raise ValueError(
            "apply_transform_to_points(): One matrix row has to contain one or more points, and "
            f"therefore to be divisible by 2. Got a row length of {points.shape[1]} instead."
        )
    pairs = points.reshape(-1, 2)
    moved = pairs @ transform[:2, :2].T + transform[:2, 2]
    return moved.reshape(points.shape).astype(points.dtype, copy=False)


def add_post_transform_to_projection_matrix(proj_mat: Any, transform: Any) -> Any:
    """The projection matrix followed by a 2D affine image transform.

    Args:
        proj_mat: a 3xN projection (for intrinsics plus extrinsics, pass the intrinsics only).
        transform: the 2x3 affine transform of the image.
    """
    xp = array_module(proj_mat, transform)
    last_row = xp.asarray([[0.0, 0.0, 1.0]], dtype=transform.dtype)
    return xp.concatenate([transform, last_row], axis=0) @ proj_mat


def apply_clipping_and_get_with_clipping_info(
    rects: Any, centers: Any, scaling_trafo: Any, image_hw: Sequence[int]
) -> tuple[Any, Any, Any, Any]:
    """Rectangles and centres moved by ``scaling_trafo`` then clipped to the image.

    Args:
        rects: ``(N, 4)`` rectangles ``x1, y1, x2, y2``.
        centers: ``(N, 2)`` centres.
        scaling_trafo: a 3x3 matrix, meant for scaling and shifting (corners stay corners).
        image_hw: the image size ``(height, width)``; coordinates are clipped to
            ``[0, width - 1]`` and ``[0, height - 1]``.

    Returns:
        The clipped rectangles, the clipped centres, the clipped sizes ``(N, 2)`` as height and
        width, and the fraction of each moved rectangle's area left after clipping.
    """
    xp = array_module(rects, centers, scaling_trafo)
    high = (image_hw[1] - 1, image_hw[0] - 1)
    first = (scaling_trafo @ _homogeneous(xp, rects[:, :2].T))[:2].T
    second = (scaling_trafo @ _homogeneous(xp, rects[:, 2:].T))[:2].T
    moved = xp.concatenate([first, second], axis=1)
    clipped = xp.zeros_like(rects)
    for column in range(4):
        clipped[:, column] = xp.clip(moved[:, column], 0, high[column % 2])
    height = xp.abs(clipped[:, 3] - clipped[:, 1])
    width = xp.abs(clipped[:, 2] - clipped[:, 0])
    full_area = xp.abs(moved[:, 3] - moved[:, 1]) * xp.abs(moved[:, 2] - moved[:, 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = height * width / full_area
    moved_centres = (scaling_trafo @ _homogeneous(xp, centers.T))[:2]
    centres = xp.stack(
        [xp.clip(moved_centres[0], 0, high[0]), xp.clip(moved_centres[1], 0, high[1])], axis=1
    )
    return clipped, centres, xp.stack([height, width], axis=1), fraction


def get_is_active(
    hw: Any,
    classes: Any | None,
    fraction_areas: Any,
    min_object_size: Any | None,
    per_class_min_object_sizes: Any | None,
    num_classes: int,
    min_fraction_area_thresh: float,
) -> Any:
    """Which objects count: a known class, large enough, and enough of their area left.

    Args:
        hw: ``(N, 2)`` object sizes (height, width).
        classes: ``(N,)`` class ids, or None to accept every object's class.
        fraction_areas: ``(N,)`` fractions of the area left in the image.
        min_object_size: the least ``(height, width)`` for all classes, or None.
        per_class_min_object_sizes: ``(num_classes, 2)`` least sizes per class, or None (give
            at most one of the two size settings).
        num_classes: class ids from this value on are not active.
        min_fraction_area_thresh: the least fraction of the area left.

    Returns:
        A ``(N,)`` bool mask.
    """
    xp = array_module(hw, fraction_areas)
    count = hw.shape[0]
    if classes is not None:
        known = classes < num_classes
        usable = xp.where(known, classes, 0)
    else:
        known = xp.ones(count, dtype=bool)
    if classes is not None and per_class_min_object_sizes is not None:
        least = per_class_min_object_sizes[usable]
        big_enough = (hw[:, 0] >= least[:, 0]) & (hw[:, 1] >= least[:, 1])
    elif min_object_size is not None:
        big_enough = (hw[:, 0] >= min_object_size[0]) & (hw[:, 1] >= min_object_size[1])
    else:
        big_enough = xp.ones(count, dtype=bool)
    return (known & big_enough & (fraction_areas >= min_fraction_area_thresh)).astype(bool)


def pad_to_common_size(*inputs: np.ndarray, fill_value: float) -> tuple[np.ndarray, ...]:
    """Every input padded at the end of each axis to the largest size among them."""
    shapes = np.array([a.shape for a in inputs])
    target = shapes.max(axis=0)
    return tuple(
        np.pad(
            a,
            [(0, int(t) - s) for s, t in zip(a.shape, target, strict=True)],
            constant_values=fill_value,
        )
        for a in inputs
    )


def pad_first_axis(data: np.ndarray, size: int) -> np.ndarray:
    """``data`` cut or zero-padded to ``size`` rows."""
    out = np.zeros((size, *data.shape[1:]), dtype=data.dtype)
    count = min(size, data.shape[0])
    out[:count] = data[:count]
    return out


def keep_active(data: np.ndarray, mask: np.ndarray, axis: int) -> np.ndarray:
    """The elements of ``data`` along ``axis`` whose ``mask`` entry is non-zero."""
    return np.compress(np.asarray(mask).ravel() != 0, data, axis=axis)


def wrap_into_range(data: np.ndarray, low: float, high: float, period: float) -> np.ndarray:
    """Values outside ``[low, high]`` moved by whole periods to just inside the range."""
    out = np.array(data, copy=True)
    below, above = out < low, out > high
    out[below] += np.ceil((low - out[below]) / period) * period
    out[above] -= np.ceil((out[above] - high) / period) * period
    return out


def visible_boxes(
    boxes: np.ndarray, depths: np.ndarray, image_hw: np.ndarray, shrink: bool
) -> np.ndarray:
    """Which boxes some pixel of the image shows when nearer boxes cover farther ones.

    Boxes are painted from the farthest to the nearest on a canvas of the image's size; a box is
    visible when one of its pixels is left. Corners may come in any order; box edges are rounded
    inwards (``shrink``) or outwards to whole pixels.
    """
    height, width = int(image_hw[0]), int(image_hw[1])
    canvas = np.full((max(height, 0), max(width, 0)), -1, dtype=np.int64)
    low = np.minimum(boxes[:, :2], boxes[:, 2:4])
    high = np.maximum(boxes[:, :2], boxes[:, 2:4])
    low = np.ceil(low) if shrink else np.floor(low)
    high = np.floor(high) if shrink else np.ceil(high)
    for index in np.argsort(-np.asarray(depths), kind="stable"):
        x0, y0 = (int(v) for v in low[index])
        x1, y1 = (int(v) for v in high[index])
        if x0 > width or x1 < 0 or y0 > height or y1 < 0:
            continue
        canvas[max(y0, 0) : min(y1, height), max(x0, 0) : min(x1, width)] = index
    shown = np.zeros(boxes.shape[0], dtype=bool)
    seen = np.unique(canvas)
    shown[seen[seen >= 0]] = True
    return shown


def large_enough_boxes(boxes: np.ndarray, image_hw: np.ndarray, min_size: float) -> np.ndarray:
    """Which boxes, clipped to the image, are at least ``min_size`` wide and high."""
    limits = np.array([image_hw[1], image_hw[0], image_hw[1], image_hw[0]], dtype=np.float32)
    clipped = np.clip(boxes[:, :4].astype(np.float32), 0.0, limits)
    width = np.abs(clipped[:, 2] - clipped[:, 0])
    height = np.abs(clipped[:, 3] - clipped[:, 1])
    return (width >= min_size) & (height >= min_size)


def rotation_from_vector(vector: np.ndarray, as_homog: bool, eps: float) -> np.ndarray:
    """The rotation matrix of a Rodrigues vector (axis times angle), 3x3 or 4x4."""
    vector = np.asarray(vector, np.float64).ravel()
    angle = float(np.linalg.norm(vector))
    rotation = np.eye(3)
    if angle >= eps:
        x, y, z = vector / angle
        cross = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        rotation += np.sin(angle) * cross + (1.0 - np.cos(angle)) * (cross @ cross)
    return _maybe_homogeneous(rotation, as_homog)


def scaling_from_vector(vector: np.ndarray, as_homog: bool) -> np.ndarray:
    """The diagonal scaling matrix of three factors, 3x3 or 4x4."""
    return _maybe_homogeneous(np.diag(np.asarray(vector, np.float64).ravel()[:3]), as_homog)


def translation_from_vector(vector: np.ndarray) -> np.ndarray:
    """The 4x4 homogeneous matrix moving points by a 3-vector."""
    matrix = np.eye(4, dtype=np.float32)
    matrix[:3, 3] = np.asarray(vector).ravel()[:3]
    return matrix


def _maybe_homogeneous(matrix: np.ndarray, as_homog: bool) -> np.ndarray:
    if as_homog:
        full = np.eye(4)
        full[:3, :3] = matrix
        matrix = full
    return matrix.astype(np.float32)


def matrix_applied(
    data: np.ndarray,
    matrix: np.ndarray,
    homogeneous: bool,
    data_transposed: bool,
    matrix_transposed: bool,
    matrix_inverted: bool,
    from_right: bool,
) -> np.ndarray:
    """``matrix @ data`` (or ``data @ matrix``) with the variations ``apply_matrix`` offers.

    A 1-D ``data`` is one column vector. With ``homogeneous`` a row of ones is added before and
    the result is divided by its last row after.
    """
    values = np.asarray(data, np.float64)
    flat = values.ndim == 1
    values = values[:, None] if flat else values
    if data_transposed:
        values = values.T
    if homogeneous:
        values = np.vstack([values, np.ones((1, values.shape[1]))])
    operator = np.asarray(matrix, np.float64)
    if matrix_transposed:
        operator = operator.T
    if matrix_inverted:
        operator = np.linalg.inv(operator)
    values = values @ operator if from_right else operator @ values
    if homogeneous:
        values = values[:-1] / values[-1]
    if data_transposed:
        values = values.T
    return (values[:, 0] if flat else values).astype(np.float32)


def box_centres(boxes: np.ndarray) -> np.ndarray:
    """``(N, 2)`` float32 midpoints of ``x1, y1, x2, y2`` rows."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    return ((boxes[:, :2] + boxes[:, 2:4]) / np.float32(2.0)).astype(np.float32)


def box_radii(boxes: np.ndarray, centres: np.ndarray, scaling_factor: float) -> np.ndarray:
    """``scaling_factor`` times the distance from each centre to its box's nearest edge (>= 0)."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    centres = np.asarray(centres, np.float32).reshape(-1, 2)
    low = np.minimum(boxes[:, :2], boxes[:, 2:4])
    high = np.maximum(boxes[:, :2], boxes[:, 2:4])
    distances = np.concatenate([centres - low, high - centres], axis=1)
    if not len(boxes):
        return np.zeros(0, np.float32)
    nearest = np.maximum(distances.min(axis=1), 0.0)
    return (nearest * np.float32(scaling_factor)).astype(np.float32)
