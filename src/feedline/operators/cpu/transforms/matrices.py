"""The affine transform formulas, vectorised over a stack of ``N`` transforms.

Every function takes its parameters as ``(N, k)`` float64 arrays (one row per transform) and
returns ``(N, ndim, ndim + 1)`` matrices ``[M | t]``: a point ``p`` maps to ``M @ p + t``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "about_center",
    "compose",
    "crop",
    "rotation",
    "scale",
    "shear",
    "translation",
]


def _affine(linear: np.ndarray, offset: np.ndarray | None) -> np.ndarray:
    """``[linear | offset]`` (a zero offset for None)."""
    count, ndim, _ = linear.shape
    result = np.empty((count, ndim, ndim + 1))
    result[:, :, :ndim] = linear
    result[:, :, ndim] = 0.0 if offset is None else offset
    return result


def about_center(linear: np.ndarray, center: np.ndarray | None) -> np.ndarray:
    """``[M | c - M @ c]``: the linear maps ``linear`` ``(N, nd, nd)`` keeping ``center`` fixed."""
    if center is None:
        return _affine(linear, None)
    return _affine(linear, center - np.einsum("nij,nj->ni", linear, center))


def translation(offset: np.ndarray) -> np.ndarray:
    """``[I | offset]``."""
    count, ndim = offset.shape
    return _affine(np.broadcast_to(np.eye(ndim), (count, ndim, ndim)), offset)


def scale(factors: np.ndarray, center: np.ndarray | None) -> np.ndarray:
    """``diag(factors)`` about ``center``."""
    count, ndim = factors.shape
    linear = np.zeros((count, ndim, ndim))
    linear[:, np.arange(ndim), np.arange(ndim)] = factors
    return about_center(linear, center)


def rotation(degrees: np.ndarray, axis: np.ndarray | None, center: np.ndarray | None) -> np.ndarray:
    """A counter-clockwise 2-D rotation (``axis`` None) or a right-handed 3-D one about
    ``axis`` (Rodrigues' formula; a zero axis gives NaN), by ``degrees`` ``(N, 1)``."""
    radians = np.deg2rad(degrees[:, 0])
    cos, sin = np.cos(radians), np.sin(radians)
    if axis is None:
        linear = np.empty((len(radians), 2, 2))
        linear[:, 0, 0], linear[:, 0, 1] = cos, -sin
        linear[:, 1, 0], linear[:, 1, 1] = sin, cos
        return about_center(linear, center)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = axis / np.linalg.norm(axis, axis=1, keepdims=True)
    x, y, z = unit[:, 0], unit[:, 1], unit[:, 2]
    zero = np.zeros_like(x)
    cross = np.stack(
        [np.stack([zero, -z, y], 1), np.stack([z, zero, -x], 1), np.stack([-y, x, zero], 1)], 1
    )
    outer = unit[:, :, None] * unit[:, None, :]
    linear = (
        cos[:, None, None] * np.eye(3)
        + sin[:, None, None] * cross
        + (1.0 - cos)[:, None, None] * outer
    )
    return about_center(linear, center)


def shear(factors: np.ndarray, center: np.ndarray | None) -> np.ndarray:
    """Identity with the off-diagonal entries ``factors`` (2 for 2-D, 6 for 3-D), row by row."""
    count, size = factors.shape
    ndim = 2 if size == 2 else 3
    linear = np.broadcast_to(np.eye(ndim), (count, ndim, ndim)).copy()
    rows, cols = np.nonzero(~np.eye(ndim, dtype=bool))
    linear[:, rows, cols] = factors
    return about_center(linear, center)


def crop(
    from_start: np.ndarray,
    from_end: np.ndarray,
    to_start: np.ndarray,
    to_end: np.ndarray,
    absolute: bool,
) -> np.ndarray:
    """The per-axis scale and offset mapping ``from_start..from_end`` onto ``to_start..to_end``
    (a degenerate source box gives infinities, as in DALI)."""
    if absolute:
        from_start, from_end = np.minimum(from_start, from_end), np.maximum(from_start, from_end)
        to_start, to_end = np.minimum(to_start, to_end), np.maximum(to_start, to_end)
    with np.errstate(divide="ignore", invalid="ignore"):
        factors = (to_end - to_start) / (from_end - from_start)
        offset = to_start - factors * from_start
    count, ndim = factors.shape
    linear = np.zeros((count, ndim, ndim))
    linear[:, np.arange(ndim), np.arange(ndim)] = factors
    return _affine(linear, offset)


def compose(first: np.ndarray, *then: np.ndarray) -> np.ndarray:
    """The transform applying ``first``, then each of ``then`` in order: for ``[A | a]`` then
    ``[B | b]``, ``[B @ A | B @ a + b]``."""
    linear, offset = first[:, :, :-1], first[:, :, -1]
    for matrices in then:
        outer = matrices[:, :, :-1]
        offset = np.einsum("nij,nj->ni", outer, offset) + matrices[:, :, -1]
        linear = outer @ linear
    return _affine(linear, offset)
