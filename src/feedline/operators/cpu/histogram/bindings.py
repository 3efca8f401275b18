"""Python binding of the histogram family's compiled kernel (``feedline_histogram.c``).

It lives in the compiled CPU library (:data:`~feedline.operators.native.CPU_LIBRARY`), built on
first use; cffi releases the GIL around the call (one call per sample, whatever its number of
planes and channels). :func:`equalize_u8` returns False where that library is unavailable (or
disabled with ``FEEDLINE_NATIVE=0``) or the arrays do not suit it; the caller then takes its
OpenCV path, which computes the same values.
"""

from __future__ import annotations

import numpy as np

from feedline.operators.native.libraries import CPU_LIBRARY
from feedline.operators.native.pointers import byte_pointer, rows_contiguous

__all__ = ["equalize_u8"]

#: The most pixels a plane may have: OpenCV counts them in a C ``int``.
_MAX_PIXELS = 2**31 - 1


def equalize_u8(planes: np.ndarray, out: np.ndarray) -> bool:
    """Equalize each channel of each plane of the uint8 ``(planes, H, W, C)`` array ``planes``
    into ``out`` (same shape) as OpenCV's ``equalizeHist`` does per channel; False (nothing
    written) when the compiled kernel cannot do it.

    Rows and planes may have any stride; planes whose pixels are not contiguous within a row
    are copied first. ``out`` must have contiguous rows.
    """
    loaded = CPU_LIBRARY.try_load()
    if loaded is None or planes.dtype != np.uint8 or out.dtype != np.uint8:
        return False
    count, height, width, channels = planes.shape
    if not 1 <= channels <= 512 or height * width > _MAX_PIXELS or out.shape != planes.shape:
        return False
    if not planes.size:
        return True
    if not (out.flags.c_contiguous or rows_contiguous(out)):
        return False
    if not (planes.flags.c_contiguous or rows_contiguous(planes)):
        planes = np.ascontiguousarray(planes)
    ffi, lib = loaded
    status = lib.fl_equalize_u8(
        byte_pointer(ffi, planes),
        planes.strides[0],
        planes.strides[1],
        byte_pointer(ffi, out),
        out.strides[0],
        out.strides[1],
        count,
        height,
        width,
        channels,
    )
    if status == -2:
        raise MemoryError("equalize: out of memory for the channels' histograms")
    return status == 0
