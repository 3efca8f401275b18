"""Python bindings of the crops family's compiled kernels (``feedline_crops.c``).

The kernels live in the compiled CPU library (:data:`~feedline.operators.native.CPU_LIBRARY`),
built on first use; cffi releases the GIL around each call. :func:`crop_kernels` is None when
that library is unavailable (or disabled with ``FEEDLINE_NATIVE=0``); the callers then take
their NumPy path, which computes the same values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline.operators.native.libraries import CPU_LIBRARY

__all__ = ["CropKernels", "crop_kernels"]


class CropKernels:
    """The SSD window search, box cropping and region pasting of the opened library
    ``(ffi, lib)``."""

    __slots__ = ("_ffi", "_lib")

    def __init__(self, loaded: tuple[Any, Any]) -> None:
        self._ffi, self._lib = loaded

    def first_window(
        self, boxes: np.ndarray, draws: np.ndarray, thresholds: np.ndarray, attempts: int
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The first candidate window that succeeds (see ``ssd.py``) and the mask of the boxes
        whose centre it holds, or None.

        Args:
            boxes: contiguous float32 ``(N, 4)`` ``ltrb`` boxes.
            draws: contiguous float64 ``(2, count, 2)`` draws in ``[0, 1)``: each window's
                width and height draw, then its anchor draw.
            thresholds: float64 minimum IoU of each round (``count / attempts`` of them).
            attempts: windows per round.
        """
        ffi = self._ffi
        window = np.empty(4)
        inside = np.empty(len(boxes), np.uint8)
        hit = self._lib.fl_ssd_first_window(
            ffi.from_buffer("float[]", boxes),
            len(boxes),
            ffi.from_buffer("double[]", draws),
            ffi.from_buffer("double[]", thresholds),
            attempts,
            draws.shape[1],
            ffi.from_buffer("double[]", window),
            ffi.from_buffer("uint8_t[]", inside),
        )
        return None if hit < 0 else (window, inside)

    def crop_boxes(
        self, boxes: np.ndarray, inside: np.ndarray, window: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The boxes marked in ``inside`` relative to ``window``, clipped to ``[0, 1]``
        (float32 ``(K, 4)``), and their indices."""
        ffi = self._ffi
        out = np.empty((len(boxes), 4), np.float32)
        kept = np.empty(len(boxes), np.int32)
        count = self._lib.fl_ssd_crop_boxes(
            ffi.from_buffer("float[]", boxes),
            ffi.from_buffer("uint8_t[]", inside),
            len(boxes),
            ffi.from_buffer("double[]", window),
            ffi.from_buffer("float[]", out),
            ffi.from_buffer("int32_t[]", kept),
        )
        return out[:count], kept[:count]

    def paste(self, canvases: np.ndarray, first: np.ndarray, regions: np.ndarray) -> None:
        """Zero each canvas, then copy its regions in order (``fl_paste_regions``).

        Args:
            canvases: contiguous int64 ``(n, 2)``: each canvas's address and size in bytes.
            first: contiguous int64 ``(n + 1,)``: where each canvas's regions start in
                ``regions`` (the last entry: where the last one's end).
            regions: contiguous int64 ``(R, 9)`` (see ``feedline_cpu.h``); every address must
                point into arrays that stay alive during the call.
        """
        ffi = self._ffi
        self._lib.fl_paste_regions(
            len(canvases),
            ffi.from_buffer("int64_t[]", canvases),
            ffi.from_buffer("int64_t[]", first),
            ffi.from_buffer("int64_t[]", regions),
        )


def crop_kernels() -> CropKernels | None:
    """The compiled box kernels, or None where the CPU library is unavailable."""
    loaded = CPU_LIBRARY.try_load()
    return None if loaded is None else CropKernels(loaded)
