"""Host-memory interop shared by the CPU tensor types: DLPack import, raw addresses, raw copies;
and the allocator setting that keeps per-sample temporaries from faulting in fresh pages.

Pure NumPy and ``ctypes``; nothing here knows about tensors or layouts.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

import numpy as np

__all__ = [
    "CPU_DLPACK_DEVICE",
    "address_of",
    "copy_to_address",
    "from_dlpack",
    "keep_freed_memory",
    "to_array",
    "to_dlpack",
]

CPU_DLPACK_DEVICE = (1, 0)  # DLPack kDLCPU, device 0


def from_dlpack(obj: Any) -> np.ndarray:
    """Import a DLPack producer (or a legacy capsule) as a NumPy array without copying."""
    if type(obj).__name__ != "PyCapsule":
        return np.from_dlpack(obj)
    capsule = obj

    class _Capsule:
        def __dlpack__(self, stream: Any = None) -> Any:
            return capsule

        def __dlpack_device__(self) -> tuple[int, int]:
            return CPU_DLPACK_DEVICE

    return np.from_dlpack(_Capsule())


def to_dlpack(array: np.ndarray) -> Any:
    """A DLPack capsule of ``array``: shared memory when it is writable, else of a copy (DLPack's
    unversioned capsules, which every consumer reads, cannot mark memory read-only)."""
    try:
        return array.__dlpack__()
    except BufferError:
        return np.array(array).__dlpack__()


def to_array(data: Any) -> np.ndarray:
    """A NumPy view of a DLPack producer or capsule, a bytes-like buffer (as uint8) or any
    array-like."""
    if type(data).__name__ == "PyCapsule" or (
        hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray)
    ):
        return from_dlpack(data)
    if isinstance(data, bytes | bytearray):
        return np.frombuffer(data, np.uint8)
    return np.asarray(data)


def address_of(ptr: Any) -> int:
    """A raw address from an int or a ``ctypes.c_void_p`` (as DALI's ``copy_to_external`` takes)."""
    if isinstance(ptr, ctypes.c_void_p):
        if ptr.value is None:
            raise ValueError("copy_to_external: the destination pointer is NULL")
        return int(ptr.value)
    if isinstance(ptr, int | np.integer) and not isinstance(ptr, bool):
        if ptr <= 0:
            raise ValueError(f"copy_to_external: invalid destination address {int(ptr)}")
        return int(ptr)
    raise TypeError(
        f"copy_to_external: expected an int address or a ctypes.c_void_p, got {type(ptr).__name__}"
    )


def copy_to_address(address: int, array: np.ndarray) -> None:
    """Copy ``array``'s bytes (C order) to raw memory at ``address``."""
    if array.nbytes:
        destination = (ctypes.c_uint8 * array.nbytes).from_address(address)
        np.frombuffer(destination, np.uint8)[:] = (
            np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        )


#: glibc's ``mallopt`` parameters (malloc.h) and the values :func:`keep_freed_memory` sets.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20
#: Set to ``0`` to leave the C allocator's settings alone.
OPT_OUT_VARIABLE = "FEEDLINE_KEEP_FREED_MEMORY"
_USER_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")
_tuned: bool | None = None
_tuning = threading.Lock()


def keep_freed_memory() -> bool:
    """Make glibc's ``malloc`` keep freed blocks of up to 32 MiB for reuse (once per process);
    whether the setting is in effect.

    By default glibc serves blocks from 128 KiB to a few MiB (an image, the temporaries of an
    OpenCV call on it) with fresh ``mmap`` pages and gives them back on ``free``, so every
    sample pays a page fault per 4 KiB page on first write: on full-size photos more time than
    a cheap operator takes. With this setting such blocks come from the allocator's heaps and
    are reused; up to 64 MiB of free memory may stay with the process per heap. Nothing is
    changed where the C library is not glibc, where the ``MALLOC_*`` variables that tune the
    same thresholds are set, or where ``FEEDLINE_KEEP_FREED_MEMORY=0``.
    """
    global _tuned
    with _tuning:
        if _tuned is None:
            _tuned = _set_thresholds()
        return _tuned


def _set_thresholds() -> bool:
    if os.environ.get(OPT_OUT_VARIABLE, "1") == "0":
        return False
    if any(name in os.environ for name in _USER_VARIABLES):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
