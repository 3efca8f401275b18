"""byte_pointer: the address of an array's first byte, whatever its layout; rows_contiguous:
whether a kernel may walk an image's rows with a row stride alone."""

from __future__ import annotations

import numpy as np
import pytest

from feedline.operators.native.pointers import byte_pointer, rows_contiguous

cffi = pytest.importorskip("cffi")


@pytest.mark.parametrize(
    "array",
    [
        np.arange(24, dtype=np.uint8).reshape(2, 4, 3),
        np.arange(96, dtype=np.uint8).reshape(8, 4, 3)[::2, 1:],  # strided rows, offset start
        np.zeros((0, 3), np.uint8),
        np.arange(6, dtype=np.float32),
    ],
)
def test_points_at_the_first_element(array: np.ndarray) -> None:
    ffi = cffi.FFI()
    pointer = byte_pointer(ffi, array)
    assert int(ffi.cast("uintptr_t", pointer)) == array.ctypes.data or array.size == 0


def test_reads_through_a_read_only_array() -> None:
    ffi = cffi.FFI()
    array = np.arange(5, dtype=np.uint8)
    array.flags.writeable = False
    pointer = byte_pointer(ffi, array)
    assert [pointer[i] for i in range(5)] == [0, 1, 2, 3, 4]


def test_rows_contiguous_needs_packed_pixels_within_each_row() -> None:
    image = np.zeros((2, 6, 8, 3), np.uint8)
    assert rows_contiguous(image) and rows_contiguous(image[0])
    assert rows_contiguous(image[:, ::2])  # strided rows and planes: still packed rows
    assert not rows_contiguous(image[:, :, ::2])  # every other pixel
    assert not rows_contiguous(image[..., ::-1])  # channels reversed
    assert not rows_contiguous(image[..., :1])  # one channel of three: pixels apart
    assert rows_contiguous(image[:, :, ::8])  # rows of one pixel
