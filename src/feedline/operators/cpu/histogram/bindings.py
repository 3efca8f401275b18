"""Python bindings of the histogram family's compiled kernels (``feedline_histogram.c``,
``feedline_clahe.c``, ``feedline_lab.c``).

They live in the compiled CPU library (:data:`~feedline.operators.native.CPU_LIBRARY`), built
on first use; cffi releases the GIL around each call (one call per sample, whatever its number
of planes and channels). :func:`equalize_u8` and :func:`clahe_u8` return False where that
library is unavailable (or disabled with ``FEEDLINE_NATIVE=0``) or the arrays do not suit it;
the caller then takes its OpenCV path, which computes the same values. CLAHE blends its tiles'
tables in single precision, where a build of OpenCV that fuses multiplies and adds would round
differently: the first :func:`clahe_u8` call checks the kernel against the installed OpenCV on a
probe image (:func:`clahe_matches_opencv`) and, if they differ, leaves CLAHE to OpenCV.
:func:`clahe_lab_u8` also converts RGB to CIE Lab and back in the same call, with OpenCV's 8-bit
integer conversions rebuilt from their tables; the first call checks those against the
installed OpenCV too (:func:`lab_matches_opencv`).
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.native.libraries import CPU_LIBRARY
from feedline.operators.native.pointers import byte_pointer, rows_contiguous

__all__ = [
    "clahe_lab_u8",
    "clahe_matches_opencv",
    "clahe_u8",
    "equalize_u8",
    "lab_matches_opencv",
    "lab_to_rgb",
    "rgb_to_lab",
]

#: Held while the colour conversions' tables are built (once, before any conversion).
_LAB_INIT = threading.Lock()
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


def clahe_u8(
    image: np.ndarray,
    out: np.ndarray,
    channel: int,
    clip_limit: float,
    tiles_x: int,
    tiles_y: int,
) -> bool:
    """OpenCV's ``createCLAHE(clip_limit, (tiles_x, tiles_y)).apply`` on channel ``channel``
    (-1: each channel) of the uint8 ``(H, W, C)`` ``image``, into the same channel of ``out``
    (same shape; may be ``image``; its other channels are left as they are); False (nothing
    written) when the compiled kernel cannot do it.

    ``image`` may have any strides (it is copied first unless each row's pixels are
    contiguous); ``out`` must have contiguous rows.
    """
    if CPU_LIBRARY.try_load() is None or not clahe_matches_opencv():
        return False
    return _clahe(image, out, channel, clip_limit, tiles_x, tiles_y) == 0


def _suited(image: np.ndarray, out: np.ndarray) -> np.ndarray | None:
    """``image`` with contiguous rows (copied if need be) when it and ``out`` suit the compiled
    kernels (non-empty uint8 HWC arrays of one shape, ``out``'s rows contiguous), else None."""
    if image.dtype != np.uint8 or out.dtype != np.uint8 or image.ndim != 3:
        return None
    if out.shape != image.shape or not image.size or not rows_contiguous(out):
        return None
    return image if rows_contiguous(image) else np.ascontiguousarray(image)


def _clahe(
    image: np.ndarray,
    out: np.ndarray,
    channel: int,
    clip_limit: float,
    tiles_x: int,
    tiles_y: int,
) -> int:
    """``fl_clahe_u8``'s status for these arrays (1: they do not suit it)."""
    suited = _suited(image, out)
    if suited is None:
        return 1
    image = suited
    ffi, lib = CPU_LIBRARY.load()
    height, width, channels = image.shape
    status = lib.fl_clahe_u8(
        byte_pointer(ffi, image),
        image.strides[0],
        byte_pointer(ffi, out),
        out.strides[0],
        height,
        width,
        channels,
        channel,
        tiles_x,
        tiles_y,
        clip_limit,
    )
    if status == -2:
        raise MemoryError("clahe: out of memory for the tiles' tables")
    return status


@functools.cache
def clahe_matches_opencv() -> bool:
    """Whether the compiled CLAHE gives the installed OpenCV's results, checked once on a
    probe image of a size the tile grids do not divide (False without OpenCV)."""
    try:
        cv2 = import_cv2("clahe")
    except ImportError:
        return False
    rows = np.arange(61, dtype=np.uint32)[:, None]
    cols = np.arange(53, dtype=np.uint32)[None, :]
    probe = ((rows * 37 + cols * 11 + rows * cols * 7) % 251).astype(np.uint8)[:, :, None]
    for clip_limit, tiles in ((2.0, (8, 8)), (40.0, (3, 5))):
        expected = cv2.createCLAHE(clip_limit, tiles).apply(probe[:, :, 0])
        got = np.empty_like(probe)
        if _clahe(probe, got, -1, clip_limit, *tiles) != 0:
            return False
        if not np.array_equal(got[:, :, 0], expected):
            return False
    return True


def clahe_lab_u8(
    image: np.ndarray, out: np.ndarray, clip_limit: float, tiles_x: int, tiles_y: int
) -> bool:
    """``clahe`` with ``luma_only`` on the uint8 RGB ``(H, W, 3)`` ``image`` into ``out`` (same
    shape; may be ``image``), as OpenCV computes it: ``cvtColor`` to Lab, CLAHE of L, back to
    RGB; False (nothing written) when the compiled kernels cannot do it.

    ``image`` may have any strides; ``out`` must have contiguous rows.
    """
    if CPU_LIBRARY.try_load() is None or not (clahe_matches_opencv() and lab_matches_opencv()):
        return False
    suited = _suited(image, out)
    if suited is None or image.shape[2] != 3:
        return False
    image = suited
    ffi, lib = CPU_LIBRARY.load()
    height, width, _ = image.shape
    status = lib.fl_clahe_lab_u8(
        byte_pointer(ffi, image),
        image.strides[0],
        byte_pointer(ffi, out),
        out.strides[0],
        height,
        width,
        tiles_x,
        tiles_y,
        clip_limit,
    )
    if status == -2:
        raise MemoryError("clahe: out of memory for the Lab planes")
    return status == 0


def rgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """The compiled ``COLOR_RGB2Lab`` of uint8 pixels ``(..., 3)`` (the library must load)."""
    ffi, lib = CPU_LIBRARY.load()
    _init_lab_tables()
    pixels = np.ascontiguousarray(rgb).reshape(-1, 3)
    planes = np.empty((3, len(pixels)), np.uint8)
    lib.fl_rgb_to_lab_u8(
        byte_pointer(ffi, pixels),
        len(pixels),
        byte_pointer(ffi, planes[0]),
        byte_pointer(ffi, planes[1]),
        byte_pointer(ffi, planes[2]),
    )
    return planes.T.reshape(rgb.shape)


def lab_to_rgb(lab: np.ndarray) -> np.ndarray:
    """The compiled ``COLOR_Lab2RGB`` of uint8 pixels ``(..., 3)`` (the library must load)."""
    ffi, lib = CPU_LIBRARY.load()
    _init_lab_tables()
    planes = np.ascontiguousarray(np.moveaxis(lab.reshape(-1, 3), 1, 0))
    pixels = np.empty((planes.shape[1], 3), np.uint8)
    lib.fl_lab_to_rgb_u8(
        byte_pointer(ffi, planes[0]),
        byte_pointer(ffi, planes[1]),
        byte_pointer(ffi, planes[2]),
        planes.shape[1],
        byte_pointer(ffi, pixels),
    )
    return pixels.reshape(lab.shape)


def _init_lab_tables() -> None:
    """Build the conversions' tables once (before any thread converts)."""
    with _LAB_INIT:
        CPU_LIBRARY.load()[1].fl_lab_init()


@functools.cache
def lab_matches_opencv() -> bool:
    """Whether the compiled colour conversions give the installed OpenCV's results, checked
    once on every grey and 65536 other colours each way (False without OpenCV)."""
    try:
        cv2 = import_cv2("clahe")
    except ImportError:
        return False
    rng = np.random.default_rng(20261128)
    grey = np.repeat(np.arange(256, dtype=np.uint8)[:, None], 3, axis=1)
    colours = np.concatenate([grey, rng.integers(0, 256, (65536, 3), dtype=np.uint8)])[None]
    expected_lab = cv2.cvtColor(colours, cv2.COLOR_RGB2Lab)
    expected_rgb = cv2.cvtColor(colours, cv2.COLOR_Lab2RGB)
    return np.array_equal(rgb_to_lab(colours), expected_lab) and np.array_equal(
        lab_to_rgb(colours), expected_rgb
    )
