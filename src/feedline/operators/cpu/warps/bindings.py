"""Python binding of the warps family's compiled kernel (``feedline_warp.c``).

It lives in the compiled CPU library (:data:`~feedline.operators.native.CPU_LIBRARY`), built on
first use (where the build has AVX2 and FMA); cffi releases the GIL around the call.
:func:`warp_perspective_u8` computes what OpenCV's ``warpPerspective`` gives for uint8 images
of 1 or 3 channels with linear interpolation (any border but the transparent one), bit for
bit, in one call per image (4-channel images are left to OpenCV, whose own code for them is as
fast). OpenCV 5 computes such a warp in float32 in blocks of pixels whose size, and the
rounding of a few steps, depend on how OpenCV was built and on the CPU, so the first call
measures which way the installed OpenCV works (:func:`opencv_arithmetic`) and the kernel
follows it; where none matches (OpenCV 4.x, 4.12 included, warps with fixed-point maps),
:func:`warp_perspective_u8` returns False, as it does where the library is unavailable (or
disabled with ``FEEDLINE_NATIVE=0``), the kernel is not built, or the arrays do not suit it;
the caller then calls OpenCV.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence

import numpy as np

from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.native.libraries import CPU_LIBRARY
from feedline.operators.native.pointers import byte_pointer, rows_contiguous

__all__ = ["Arithmetic", "fill_bytes", "opencv_arithmetic", "warp_perspective_u8"]

_OP = "experimental.warp_perspective"
_CHANNELS = (1, 3)
#: OpenCV's border types the kernel reproduces: constant, replicate, reflect, wrap, reflect_101
#: (the values of ``cv2.BORDER_*``, which the kernel takes as they are).
_CONSTANT = 0
_BORDERS = (0, 1, 2, 3, 4)
#: ``(block, fused_row, tail, fused_tail)`` as the kernel takes them (see ``feedline_warp.c``).
Arithmetic = tuple[int, int, int, int]
#: The candidates, most likely first: OpenCV 5.0's AVX2 code, then the other block sizes and
#: roundings compilers and SIMD targets may give.
_ARITHMETICS: tuple[Arithmetic, ...] = (
    (16, 0, 1, 1),
    *(
        candidate
        for candidate in itertools.product((16, 32, 8), (0, 1), (1, 0, 2), (1, 0))
        if candidate != (16, 0, 1, 1)
    ),
)


def fill_bytes(fill: Sequence[float]) -> bytes:
    """The border value's four channels as OpenCV converts them to uint8: rounded to nearest
    even and saturated, 0 for NaN and values beyond int32 (its conversion gives INT32_MIN)."""
    return _fill_bytes(tuple(float(value) for value in fill))


@functools.lru_cache(maxsize=64)
def _fill_bytes(fill: tuple[float, ...]) -> bytes:
    out = []
    for value in list(fill)[:4] + [0.0] * (4 - len(fill)):
        rounded = round(value) if math.isfinite(value) else None  # half to even, as cvRound
        if rounded is None or not -(2**31) <= rounded < 2**31:
            rounded = 0
        out.append(min(max(rounded, 0), 255))
    return bytes(out)


def warp_perspective_u8(
    image: np.ndarray,
    matrix: np.ndarray,
    inverse_map: bool,
    border: int,
    fill: Sequence[float],
    out: np.ndarray,
) -> bool:
    """Warp the uint8 ``(H, W)`` or ``(H, W, C)`` ``image`` by the float32 3x3 ``matrix``
    (OpenCV's centre origin; destination to source when ``inverse_map``, else source to
    destination) with linear interpolation and OpenCV's ``border`` (``cv2.BORDER_CONSTANT``
    with ``fill``, ``REPLICATE``, ``REFLECT``, ``REFLECT_101`` or ``WRAP``) into the uint8
    ``out`` (``(h, w)`` or ``(h, w, C)``), as ``cv2.warpPerspective`` would; False when the
    compiled kernel cannot do it (``out`` may then hold part of the warp)."""
    if image.dtype != np.uint8 or out.dtype != np.uint8 or image.ndim not in (2, 3):
        return False
    channels = 1 if image.ndim == 2 else image.shape[2]
    if channels not in _CHANNELS or out.shape[2:] != image.shape[2:] or not image.size:
        return False
    if border not in _BORDERS:
        return False
    if not out.size or CPU_LIBRARY.try_load() is None:
        return False
    arithmetic = opencv_arithmetic()
    if arithmetic is None:
        return False
    planes = (image, out) if image.ndim == 3 else (image[..., None], out[..., None])
    if not all(rows_contiguous(plane) for plane in planes):
        return False
    # rows going up in memory: the bytes a load reads past a row's end would leave the image
    if image.strides[0] < image.shape[1] * channels:
        return False
    mapping = _source_map(matrix, inverse_map)
    return _run(image, mapping, border, fill_bytes(fill), arithmetic, out) == 0


def _source_map(matrix: np.ndarray, inverse_map: bool) -> np.ndarray:
    """The float64 destination-to-source matrix OpenCV's warp kernels receive (it inverts a
    source-to-destination matrix with ``cv::invert``)."""
    mapping = np.asarray(matrix, np.float32).astype(np.float64).reshape(3, 3)
    if not inverse_map:
        _, mapping = import_cv2(_OP).invert(mapping)
    return np.ascontiguousarray(mapping, np.float64)


def _run(
    image: np.ndarray,
    mapping: np.ndarray,
    border: int,
    fill: bytes,
    arithmetic: Arithmetic,
    out: np.ndarray,
) -> int:
    """``fl_warp_perspective_u8``'s status for these arrays (-2: a tap too far outside for a
    border other than the constant, -3: the kernel is not built)."""
    ffi, lib = CPU_LIBRARY.load()
    height, width = image.shape[:2]
    out_height, out_width = out.shape[:2]
    channels = 1 if image.ndim == 2 else image.shape[2]
    block, fused_row, tail, fused_tail = arithmetic
    return lib.fl_warp_perspective_u8(
        byte_pointer(ffi, image),
        image.strides[0],
        height,
        width,
        channels,
        byte_pointer(ffi, out),
        out.strides[0],
        out_height,
        out_width,
        ffi.from_buffer("double[]", mapping),
        border,
        fill,
        block,
        fused_row,
        tail,
        fused_tail,
    )


@functools.cache
def opencv_arithmetic() -> Arithmetic | None:
    """How the installed OpenCV computes a bilinear ``warpPerspective`` of uint8 images on this
    CPU (its block size and roundings, see :data:`Arithmetic`), measured once on probe warps
    where the candidates give different results; None when the compiled kernel is unavailable
    or none matches."""
    if CPU_LIBRARY.try_load() is None:
        return None
    cv2 = import_cv2(_OP)
    probes = _probes()
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    expected = [
        cv2.warpPerspective(image, matrix, size[::-1], flags=flags, borderValue=fill)
        for image, matrix, fill, size in probes
    ]
    for arithmetic in _ARITHMETICS:
        for (image, matrix, fill, _), reference in zip(probes, expected, strict=True):
            got = np.empty(reference.shape, np.uint8)
            mapping = _source_map(matrix, True)
            status = _run(image, mapping, _CONSTANT, fill_bytes(fill), arithmetic, got)
            if status != 0:
                return None
            if not np.array_equal(got, reference):
                break
        else:
            return arithmetic
    return None


def _probes() -> list[tuple[np.ndarray, np.ndarray, tuple[float, ...], tuple[int, int]]]:
    """Probe warps (image, matrix, fill, output size) on which the candidate arithmetics give
    different pixels:

    * rows of 31 pixels (past blocks of 8 or 16, or all in the rows' last part for blocks of
      32) sampling columns in pairs, x -> 2x + f, at a fraction f where many pairs of uint8
      values give a different rounded p0 + f * (p1 - p0) fused than unfused, each pair of
      columns holding such pairs: the rounding of the rows' last pixels' interpolation;
    * rows of 63 pixels of an image of 0 and 255 under a perspective map to large source
      coordinates: the block size and the coordinates' roundings (an ulp of the coordinates
      moves a pixel between 0 and 255 by about 0.03).
    """
    rng = np.random.default_rng(28)
    fraction = np.float32(_FRACTION)
    pairs = _rounding_pairs(fraction)
    chosen = pairs[rng.integers(0, len(pairs), (66, 32, 3))]  # (rows, pairs, channels, 2)
    columns = np.stack([chosen[..., 0], chosen[..., 1]], axis=2).reshape(66, 64, 3)
    halves = np.array([[2, 0, fraction], [0, 1, 0], [0, 0, 1]], np.float32)
    checker = rng.integers(0, 2, (16, 2048, 3), dtype=np.uint8) * np.uint8(255)
    perspective = np.array(
        [[31.37, 2.71, 123.45], [0.0123, 0.0311, 0.77], [1.2345e-3, 2.3456e-3, 1.0]], np.float32
    )
    return [
        (columns.astype(np.uint8), halves, (0.0,) * 4, (64, 31)),
        (checker, perspective, (7.0,) * 4, (400, 63)),
    ]


#: A fraction of 18 bits (2x + f stays exact for x < 32) whose products with differences of
#: uint8 values round differently fused and unfused for many pairs (49 of the 65536).
_FRACTION = 256337 / 2**18


def _rounding_pairs(fraction: np.float32) -> np.ndarray:
    """The ``(p0, p1)`` uint8 pairs whose ``p0 + fraction * (p1 - p0)`` rounds to a different
    integer computed with one rounding (fused) than with two."""
    first = np.arange(256, dtype=np.float32)[:, None]
    difference = np.arange(256, dtype=np.float32)[None, :] - first
    unfused = first + fraction * difference
    fused = (first.astype(np.float64) + np.float64(fraction) * difference).astype(np.float32)
    return np.argwhere(np.rint(unfused) != np.rint(fused)).astype(np.uint8)
