"""Passing NumPy arrays to the compiled kernels through cffi, cheaply.

A kernel called once per sample pays for its arguments once per sample: ``array.ctypes.data``
builds a ctypes helper object (about 1 us), while ``ffi.from_buffer`` on a C-contiguous array
takes its buffer directly (about 0.2 us).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["byte_pointer", "rows_contiguous"]


def byte_pointer(ffi: Any, array: np.ndarray) -> Any:
    """A ``uint8_t`` pointer to ``array``'s first byte, for an argument of type ``uint8_t *``
    or ``const uint8_t *`` (the array, of any layout, must outlive the call)."""
    if array.flags.c_contiguous:
        return ffi.from_buffer("uint8_t[]", array)
    return ffi.cast("uint8_t *", array.ctypes.data)


def rows_contiguous(array: np.ndarray) -> bool:
    """Whether each row of an image array (``(..., W, C)``, uint8) is ``W * C`` consecutive
    bytes, so a kernel may walk it with a row stride alone."""
    width, channels = array.shape[-2:]
    packed_pixels = channels == 1 or array.strides[-1] == 1
    return packed_pixels and (width == 1 or array.strides[-2] == channels)
