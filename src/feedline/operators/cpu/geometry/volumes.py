"""Volumetric affine warps and DALI's 3-D rotation: the 3-D half of ``rotate``.

Coordinates follow the 2-D warps (:mod:`.warp`) with a third axis: ``(x, y, z)`` run along
W, H and D, ``(0, 0, 0)`` is the outer corner of the first voxel and voxel ``(x, y, z)`` has its
centre at ``(x + 0.5, y + 0.5, z + 0.5)``. An output voxel takes the input value at
``M @ (x + 0.5, y + 0.5, z + 0.5, 1)`` for the destination-to-source 3x4 matrix ``M``: the
nearest neighbour is the voxel containing that point, linear interpolation blends the eight
voxels whose centres surround it. Points outside the input take ``fill_value`` or, without one,
the nearest border voxel.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from feedline.core.types import InterpType
from feedline.operators.cpu.common.tensors import saturate_cast

__all__ = [
    "rotate_volume_matrix",
    "rotated_volume_size",
    "rotation_3d",
    "warp_volume",
]


def rotation_3d(axis: Sequence[float], degrees: float) -> np.ndarray:
    """The 3x3 rotation by ``degrees`` about ``axis`` (``(x, y, z)``: W, H, D), positive as the
    right-hand rule turns (Rodrigues' formula, DALI's ``rotation3D``).

    Raises:
        ValueError: ``axis`` does not have 3 values or has zero length.
    """
    values = np.asarray(axis, dtype=np.float64).ravel()
    if values.size != 3:
        raise ValueError(f"rotate: argument 'axis' must be a 3D vector, got {values.tolist()}")
    length = float(np.linalg.norm(values))
    if length == 0 or not math.isfinite(length):
        raise ValueError(f"rotate: argument 'axis' must have a non-zero length, got {values}")
    u, v, w = values / length
    radians = math.radians(degrees)
    cos, sin = math.cos(radians), math.sin(radians)
    one = 1 - cos
    return np.array(
        [
            [u * u * one + cos, u * v * one - w * sin, u * w * one + v * sin],
            [u * v * one + w * sin, v * v * one + cos, v * w * one - u * sin],
            [u * w * one - v * sin, v * w * one + u * sin, w * w * one + cos],
        ]
    )


def rotated_volume_size(
    shape: Sequence[int], axis: Sequence[float], degrees: float, parity: bool = True
) -> tuple[int, int, int]:
    """DALI's canvas ``(D, H, W)`` for a volume of ``shape`` ``(D, H, W)`` rotated without
    ``size``/``keep_size``.

    Each output extent is the rotated bounding box rounded up (ignoring overshoots below
    0.01 voxel); with ``parity`` it then grows by one where needed to have the parity of the
    input extent that contributes most to it, which keeps the centre on a voxel centre or
    corner as in the input.
    """
    extents = np.asarray(shape[::-1], dtype=np.float64)  # x, y, z
    spread = np.abs(rotation_3d(axis, degrees)).astype(np.float32)
    out = np.ceil(spread.astype(np.float64) @ extents - 0.01).astype(np.int64)
    if parity:
        dominant = np.argmax(spread, axis=1)
        out += (out % 2) ^ (extents[dominant].astype(np.int64) % 2)
    return int(out[2]), int(out[1]), int(out[0])


def rotate_volume_matrix(
    axis: Sequence[float],
    degrees: float,
    in_shape: Sequence[int],
    out_shape: Sequence[int],
) -> np.ndarray:
    """The destination-to-source 3x4 matrix rotating by ``degrees`` about ``axis``: the centre
    of the output canvas (``out_shape``, ``(D, H, W)``) maps to the centre of the input."""
    inverse = rotation_3d(axis, -degrees)
    in_centre = np.asarray(in_shape[::-1], dtype=np.float64) / 2
    out_centre = np.asarray(out_shape[::-1], dtype=np.float64) / 2
    return np.hstack([inverse, (in_centre - inverse @ out_centre)[:, None]])


def _source_points(matrix: np.ndarray, out_shape: Sequence[int]) -> list[np.ndarray]:
    """Source ``x, y, z`` (float32, flat, in output order) of every output voxel centre."""
    depth, height, width = out_shape
    z, y, x = (np.arange(n, dtype=np.float64) + 0.5 for n in (depth, height, width))
    points = []
    for row in matrix:
        plane = (row[2] * z[:, None, None] + row[1] * y[None, :, None] + row[3]).astype(np.float32)
        points.append((plane + (row[0] * x).astype(np.float32)[None, None, :]).ravel())
    return points


def _nearest(
    voxels: np.ndarray, shape: tuple[int, int, int], points: list[np.ndarray], fill: float | None
) -> np.ndarray:
    depth, height, width = shape
    cells = [
        np.floor(np.clip(p, -1, n)).astype(np.intp)
        for p, n in zip(points, (width, height, depth), strict=True)
    ]
    index = _flat_index(cells, shape)
    values = np.take(voxels, index, axis=0)
    if fill is None:
        return values
    inside = _inside(cells, shape)[:, None]
    return np.where(inside, values.astype(np.float32), np.float32(fill))


def _flat_index(cells: list[np.ndarray], shape: tuple[int, int, int]) -> np.ndarray:
    depth, height, width = shape
    x, y, z = (np.clip(c, 0, n - 1) for c, n in zip(cells, (width, height, depth), strict=True))
    return (z * height + y) * width + x


def _inside(cells: list[np.ndarray], shape: tuple[int, int, int]) -> np.ndarray:
    depth, height, width = shape
    x, y, z = cells
    return (x >= 0) & (x < width) & (y >= 0) & (y < height) & (z >= 0) & (z < depth)


def _linear(
    voxels: np.ndarray, shape: tuple[int, int, int], points: list[np.ndarray], fill: float | None
) -> np.ndarray:
    depth, height, width = shape
    low, fractions = [], []
    for p, n in zip(points, (width, height, depth), strict=True):
        centred = p - np.float32(0.5)
        # far-away points behave like the nearest border (clamp) or like any outside point
        np.clip(centred, 0 if fill is None else -2, n - 1 if fill is None else n + 1, out=centred)
        floor = np.floor(centred)
        low.append(floor.astype(np.intp))
        fractions.append((centred - floor)[:, None])
    out = None
    for corner in range(8):
        cells = [c + ((corner >> bit) & 1) for bit, c in enumerate(low)]
        values = np.take(voxels, _flat_index(cells, shape), axis=0).astype(np.float32)
        if fill is not None:
            values = np.where(_inside(cells, shape)[:, None], values, np.float32(fill))
        for bit, fraction in enumerate(fractions):
            values *= fraction if (corner >> bit) & 1 else np.float32(1) - fraction
        out = values if out is None else out + values
    return out


def warp_volume(
    volume: np.ndarray,
    matrix: np.ndarray,
    out_shape: Sequence[int],
    interp: InterpType,
    fill_value: float | None,
    out_type: np.dtype,
) -> np.ndarray:
    """Resample a ``DHWC`` volume through the destination-to-source 3x4 ``matrix`` (x, y, z
    order) onto ``out_shape`` ``(D, H, W)``; integer outputs are rounded and saturated."""
    shape = tuple(int(n) for n in volume.shape[:3])
    channels = volume.shape[3]
    out_shape = tuple(int(n) for n in out_shape)
    if volume.size == 0:
        blank = np.full((*out_shape, channels), fill_value or 0)
        return saturate_cast(blank, out_type)
    voxels = np.ascontiguousarray(volume).reshape(-1, channels)
    points = _source_points(np.asarray(matrix, dtype=np.float64), out_shape)
    if interp == InterpType.INTERP_NN:
        values = _nearest(voxels, shape, points, fill_value)
    else:
        values = _linear(voxels, shape, points, fill_value)
    if values.dtype != out_type:
        values = saturate_cast(values, out_type)
    return values.reshape(*out_shape, channels)
