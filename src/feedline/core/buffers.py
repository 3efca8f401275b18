"""Recycled batch buffers: large output arrays reused once nothing else references them.

Every iteration fills new batch buffers (e.g. 64 float ``3 x 224 x 224`` images: 38 MB), and a
freshly allocated buffer costs a page fault per 4 KiB page on its first write, about 5% of a
whole image pipeline. :class:`BufferPool` keeps the large buffers it handed out and gives one
back out once the pool holds the only reference to it, i.e. once the batch, every view of it
and every consumer that borrowed it (DLPack capsules, ``torch.from_numpy``) are gone. A buffer
that anything still references is never reused, so outputs stay valid as long as they are held.
"""

from __future__ import annotations

import math
import sys
import threading
from typing import Any

import numpy as np

__all__ = ["BufferPool", "unreferenced"]


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

    def clear(self) -> None:
        """Forget every buffer (they are freed when their last user drops them)."""
        with self._lock:
            self._buffers.clear()
