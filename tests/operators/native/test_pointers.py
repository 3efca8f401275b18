"""byte_pointer: the address of an array's first byte, whatever its layout."""

from __future__ import annotations

import numpy as np
import pytest

from feedline.operators.native.pointers import byte_pointer

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
