"""Python binding of the geometry family's compiled kernel (``feedline_points.c``).

It lives in the compiled CPU library (:data:`~feedline.operators.native.CPU_LIBRARY`), built on
first use; cffi releases the GIL around the call. :func:`affine_points_f32` returns None where
that library is unavailable (or disabled with ``FEEDLINE_NATIVE=0``) or the arrays do not suit
it; the caller then takes its NumPy path, which computes the same values.
"""

from __future__ import annotations

import numpy as np

from feedline.operators.native.libraries import CPU_LIBRARY

__all__ = ["affine_points_f32"]


def affine_points_f32(points: np.ndarray, affines: np.ndarray) -> np.ndarray | None:
    """``affines`` ``(batch or 1, m, n + 1)`` applied to the stacked float32 points
    ``(batch, ..., n)``, in float64 and rounded to float32 once; None when the compiled
    kernel cannot do it (no library, other types, no points)."""
    loaded = CPU_LIBRARY.try_load()
    if loaded is None or points.dtype != np.float32 or points.ndim < 2 or not points.size:
        return None
    ffi, lib = loaded
    batch, in_dim = len(points), points.shape[-1]
    if affines.shape[0] not in (1, batch) or affines.shape[2] != in_dim + 1:
        return None
    points = np.ascontiguousarray(points)
    affines = np.ascontiguousarray(affines, dtype=np.float64)
    out_dim = affines.shape[1]
    out = np.empty((*points.shape[:-1], out_dim), np.float32)
    count = points[0].size // in_dim
    lib.fl_affine_points_f32(
        ffi.from_buffer("float[]", points),
        batch,
        count,
        in_dim,
        ffi.from_buffer("double[]", affines),
        int(affines.shape[0] == 1),
        out_dim,
        ffi.from_buffer("float[]", out),
    )
    return out
