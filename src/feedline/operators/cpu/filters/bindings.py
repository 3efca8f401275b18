"""Python binding of the filters family's compiled kernel (``feedline_filter.c``).

It lives in the compiled CPU library (:data:`~feedline.operators.native.CPU_LIBRARY`), built on
first use (where the build has AVX2 and FMA); cffi releases the GIL around the call.
:func:`filter_u8` computes what OpenCV's ``filter2D`` gives for uint8 images filtered into
uint8, bit for bit: OpenCV adds a product with a fused multiply-add or not depending on the
SIMD code it runs on this CPU, and computes the last values of each row apart, so the first
call measures which way the installed OpenCV works (:func:`opencv_arithmetic`) and the
kernel follows it. :func:`filter_u8` returns False where the library is unavailable (or
disabled with ``FEEDLINE_NATIVE=0``), the kernel is not built, no way matches OpenCV, or the
arrays do not suit it; the caller then calls OpenCV.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.native.libraries import CPU_LIBRARY
from feedline.operators.native.pointers import byte_pointer, rows_contiguous

__all__ = ["border_indices", "filter_u8", "opencv_arithmetic"]

#: OpenCV filters 8-bit images with kernels of this many taps or more through the DFT.
_DFT_TAPS = 130
#: OpenCV's filter2D takes up to 4 channels at a time (feedline filters more channel by channel).
_CV_CHANNELS = 4
#: ``(fused, tail_like_body)`` candidates: AVX2/AVX-512 (fused, unfused scalar tail), SSE
#: (unfused), NEON with a fused scalar tail.
_ARITHMETICS = ((True, False), (False, False), (True, True))


@functools.lru_cache(maxsize=256)
def border_indices(length: int, taps: int, anchor: int, border: str) -> np.ndarray:
    """The source index of each of the ``length + taps - 1`` positions of a padded axis whose
    position ``anchor`` is source index 0, as OpenCV's ``borderInterpolate`` gives them
    (``-1``: the fill value). ``border`` is a canonical border name."""
    position = np.arange(length + taps - 1, dtype=np.int64) - anchor
    if border == "constant":
        index = np.where((position >= 0) & (position < length), position, -1)
    elif border == "clamp":
        index = np.clip(position, 0, length - 1)
    elif border == "wrap":
        index = position % length
    elif border == "reflect_1001":
        folded = position % (2 * length)
        index = np.where(folded < length, folded, 2 * length - 1 - folded)
    elif length == 1:  # reflect_101 of one pixel
        index = np.zeros_like(position)
    else:
        period = 2 * (length - 1)
        folded = position % period
        index = np.where(folded < length, folded, period - folded)
    index = index.astype(np.int32)
    index.flags.writeable = False
    return index


def filter_u8(
    plane: np.ndarray,
    taps: np.ndarray,
    anchor: tuple[int, int],
    border: str,
    fill: float,
    out: np.ndarray,
) -> bool:
    """Correlate the uint8 ``(H, W, C)`` ``plane`` with float32 ``taps`` placed at ``anchor``
    (row, column) into the uint8 ``out`` of the same shape, as the filter kernel's OpenCV call
    would; False (nothing written) when the compiled kernel cannot do it.

    ``border`` is a canonical border name; ``wrap`` and a non-zero constant ``fill`` are what
    OpenCV computes on the padded image. Planes with more than 4 channels follow OpenCV's
    arithmetic for one channel at a time, as the OpenCV path filters them.
    """
    if plane.dtype != np.uint8 or out.dtype != np.uint8 or plane.ndim != 3 or taps.ndim != 2:
        return False
    if taps.size >= _DFT_TAPS or out.shape != plane.shape or not plane.size:
        return False
    if CPU_LIBRARY.try_load() is None:
        return False
    arithmetic = opencv_arithmetic()
    if arithmetic is None or not (rows_contiguous(plane) and rows_contiguous(out)):
        return False
    fused, tail_like_body = arithmetic
    _, width, channels = plane.shape
    # the row OpenCV computes: the padded image's for wrap and a non-zero fill
    padded = border == "wrap" or (border == "constant" and fill != 0)
    cv_width = width + taps.shape[1] - 1 if padded else width
    per_call = channels if channels <= _CV_CHANNELS else 1
    cv_values = cv_width * per_call
    body = cv_values - cv_values % 4
    tail_from = width * channels if tail_like_body else body * (channels // per_call)
    return _run(plane, taps, anchor, border, fill, fused, tail_from, out) == 0


def _run(
    plane: np.ndarray,
    taps: np.ndarray,
    anchor: tuple[int, int],
    border: str,
    fill: float,
    fused: bool,
    tail_from: int,
    out: np.ndarray,
) -> int:
    """``fl_filter_u8``'s status for these arrays (-3: the kernel is not built)."""
    ffi, lib = CPU_LIBRARY.load()
    height, width, channels = plane.shape
    taps_h, taps_w = taps.shape
    rows, cols = _border_buffers(height, width, taps_h, taps_w, anchor, border)
    weights = np.ascontiguousarray(taps, dtype=np.float32)
    return lib.fl_filter_u8(
        byte_pointer(ffi, plane),
        plane.strides[0],
        height,
        width,
        channels,
        rows,
        cols,
        anchor[1],
        ffi.from_buffer("float[]", weights),
        taps_h,
        taps_w,
        float(fill),
        int(fused),
        tail_from,
        byte_pointer(ffi, out),
        out.strides[0],
    )


@functools.lru_cache(maxsize=256)
def _border_buffers(
    height: int, width: int, taps_h: int, taps_w: int, anchor: tuple[int, int], border: str
) -> tuple[Any, Any]:
    """The row and column :func:`border_indices` of a filter, as the kernel's ``int32_t``
    arrays (prepared once per image size, filter size, anchor and border)."""
    ffi, _ = CPU_LIBRARY.load()
    rows = border_indices(height, taps_h, anchor[0], border)
    cols = border_indices(width, taps_w, anchor[1], border)
    return ffi.from_buffer("int32_t[]", rows), ffi.from_buffer("int32_t[]", cols)


@functools.cache
def opencv_arithmetic() -> tuple[bool, bool] | None:
    """``(fused, tail_like_body)``: how the installed OpenCV adds the products of an 8-bit
    filter on this CPU (fused multiply-adds or not; the last ``row length % 4`` values of a
    row the same way or unfused), measured once on a probe image where every candidate gives
    different values; None when the compiled kernel is unavailable or none matches."""
    if CPU_LIBRARY.try_load() is None:
        return None
    cv2 = import_cv2("filter")
    probe, taps = _probe()
    expected = cv2.filter2D(probe, -1, taps, borderType=cv2.BORDER_REFLECT_101)[..., None]
    for fused, tail_like_body in _ARITHMETICS:
        got = np.empty_like(probe)
        tail_from = probe.shape[1] if tail_like_body else probe.shape[1] - probe.shape[1] % 4
        status = _run(probe, taps, (1, 1), "reflect_101", 0.0, fused, tail_from, got)
        if status != 0:
            return None
        if np.array_equal(got, expected):
            return fused, tail_like_body
    return None


def _probe() -> tuple[np.ndarray, np.ndarray]:
    """A one-channel ``(64, 67, 1)`` image (rows of 67 values: a 3-value tail) and 3x3 taps in
    tenths, whose sums often fall near a half: the candidate arithmetics of
    :data:`_ARITHMETICS` give different results on it, in the rows' bodies and tails."""
    image = np.random.default_rng(3).integers(0, 256, (64, 67, 1), dtype=np.uint8)
    taps = np.array([[-1, 2, 1], [-3, 3, 3], [3, -3, -2]], np.float32) / np.float32(10)
    return image, taps
