"""Recycled batch buffers: large output arrays reused once nothing else references them.

Every iteration fills new batch buffers (e.g. 64 float ``3 x 224 x 224`` images: 38 MB), and a
freshly allocated buffer costs a page fault per 4 KiB page on its first write, about 5% of a
whole image pipeline. :class:`BufferPool` keeps the large buffers it handed out and gives one
back out once the pool holds the only reference to it, i.e. once the batch, every view of it
and every consumer that borrowed it (DLPack capsules, ``torch.from_numpy``) are gone. A buffer
that anything still references is never reused, so outputs stay valid as long as they are held.

Batches whose samples differ in shape (photos of several sizes) get the same treatment through
:class:`Slab`: their samples are carved, back to back, from one recycled flat block.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

import numpy as np

__all__ = ["BufferPool", "Slab", "unreferenced"]

#: Samples carved from a block start at multiples of this many bytes.
ALIGNMENT = 64


def _idle_refcount() -> int:
    """What :func:`unreferenced` sees for an item nothing else references (measured rather than
    assumed: it depends on the interpreter)."""
    probe = [object()]
    item = probe[0]
    return sys.getrefcount(item)


_IDLE = _idle_refcount() if hasattr(sys, "getrefcount") else None


def unreferenced(items: list[Any], position: int) -> bool:
    """Whether ``items[position]`` is referenced only by ``items`` (always False where the
    interpreter has no reference counts). The caller must hold no other reference to it."""
    if _IDLE is None:
        return False
    item = items[position]
    return sys.getrefcount(item) == _IDLE


class BufferPool:
    """Hands out ``np.empty`` arrays, reusing large ones that are no longer referenced.

    Args:
        capacity: how many buffers the pool keeps (the oldest are forgotten beyond it).
        min_bytes: smaller arrays are always freshly allocated.
    """

    def __init__(self, capacity: int = 8, min_bytes: int = 1 << 20) -> None:
        self.capacity = capacity
        self.min_bytes = min_bytes
        self._buffers: list[np.ndarray] = []
        self._lock = threading.Lock()

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised array of ``shape`` and ``dtype``, recycled when one is free."""
        dtype = np.dtype(dtype)
        if _IDLE is None or math.prod(shape) * dtype.itemsize < self.min_bytes:
            return np.empty(shape, dtype)
        with self._lock:
            for position in range(len(self._buffers)):
                candidate = self._buffers[position]
                fits = (
                    candidate.shape == shape
                    and candidate.dtype == dtype
                    and candidate.dtype.metadata == dtype.metadata  # enum-typed data
                )
                del candidate
                if fits and unreferenced(self._buffers, position):
                    buffer = self._buffers.pop(position)
                    self._buffers.append(buffer)
                    return buffer
            buffer = np.empty(shape, dtype)
            self._buffers.append(buffer)
            del self._buffers[: -self.capacity]
            return buffer

    def block(self, nbytes: int) -> np.ndarray:
        """A flat uint8 array of at least ``nbytes`` bytes to carve samples from: a free block
        that is large enough (but less than twice as large), else a new one with some room to
        spare (so that a batch a little larger than the last one fits too)."""
        if _IDLE is None or nbytes < self.min_bytes:
            return np.empty(nbytes, np.uint8)
        with self._lock:
            for position in range(len(self._buffers)):
                candidate = self._buffers[position]
                fits = (
                    candidate.ndim == 1
                    and candidate.dtype == np.uint8
                    and nbytes <= candidate.size < 2 * nbytes
                )
                del candidate
                if fits and unreferenced(self._buffers, position):
                    buffer = self._buffers.pop(position)
                    self._buffers.append(buffer)
                    return buffer
            buffer = np.empty(nbytes + nbytes // 8, np.uint8)
            self._buffers.append(buffer)
            del self._buffers[: -self.capacity]
            return buffer

    def clear(self) -> None:
        """Forget every buffer (they are freed when their last user drops them)."""
        with self._lock:
            self._buffers.clear()


def _aligned(nbytes: int) -> int:
    return -(-nbytes // ALIGNMENT) * ALIGNMENT


class Slab:
    """Arrays of any shape carved one after another from one flat block of a pool.

    Each array is a view of the block, so the block is reused only once every array carved
    from it is gone. Thread-safe.

    Args:
        pool: where the block comes from.
        nbytes: the room expected; arrays that no longer fit are allocated on their own.
    """

    __slots__ = ("_block", "_lock", "_used", "requested")

    def __init__(self, pool: BufferPool, nbytes: int) -> None:
        self._block = pool.block(nbytes) if nbytes > 0 else None
        self._used = 0
        self._lock = threading.Lock()
        self.requested = 0
        """The room that every array asked for so far would take (to size the next slab)."""

    @staticmethod
    def room(shape: tuple[int, ...], dtype: Any) -> int:
        """The bytes an array of ``shape`` and ``dtype`` takes in a slab."""
        return _aligned(math.prod(shape) * np.dtype(dtype).itemsize)

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised array of ``shape`` and ``dtype``: a view of the block when it fits."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        with self._lock:
            start = self._used
            self.requested += _aligned(nbytes)
            block = self._block
            if block is None or dtype.hasobject or start + nbytes > block.size:
                return np.empty(shape, dtype)
            self._used = start + _aligned(nbytes)
        return block[start : start + nbytes].view(dtype).reshape(shape)
