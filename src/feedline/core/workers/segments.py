"""The shared-memory transport of :class:`~feedline.core.workers.WorkerPool` results.

Each worker owns a small ring of *slots*; the parent assigns a slot to every task it sends and
frees it once it has copied the result out, so a slot is never written while it is being read.
A slot is backed by one POSIX shared-memory segment that the worker creates, at its initial size
when the worker starts (:meth:`WorkerSegments.preallocate`, so that the first batches need no
new segment), and replaces by a larger one when a result does not fit. Ownership rule:
**workers create and only close segments; the parent unlinks every one of them**, exactly once.
Segment names are ``{prefix}w{worker}n{seq}`` with a per-worker sequence number counting up from
0, and every reply reports the segments created for it, so after a worker crash the parent finds
an unreported one by probing the following sequence numbers.

A result is a list of samples, each a tuple of arrays, packed at naturally aligned offsets
(equal-shaped samples of one dtype end up contiguous); only the layout, ``(dtype, shape,
offset)`` per array, is pickled through the pipe.
"""

from __future__ import annotations

import math
import mmap
from collections.abc import Sequence
from contextlib import suppress
from multiprocessing.shared_memory import SharedMemory

import numpy as np

__all__ = [
    "MIN_INITIAL_SLOT_BYTES",
    "Layout",
    "ParentSegments",
    "WorkerSegments",
    "plan_layout",
    "segment_name",
]

Layout = list[tuple[tuple[np.dtype, tuple[int, ...], int], ...]]
"""Per sample, per output: ``(dtype, shape, byte offset)`` in the slot's segment."""

_MIN_CAPACITY = 1 << 16

MIN_INITIAL_SLOT_BYTES = 1 << 20
"""The smallest initial size of a slot's segment (DALI's default initial chunk, 1 MiB)."""


def segment_name(prefix: str, worker: int, seq: int) -> str:
    """The name of a worker's ``seq``-th segment."""
    return f"{prefix}w{worker}n{seq}"


def plan_layout(samples: Sequence[tuple[np.ndarray, ...]]) -> tuple[Layout, int]:
    """Place every array at an offset aligned for its dtype; return the layout and total bytes."""
    layout: Layout = []
    offset = 0
    for sample in samples:
        entry = []
        for array in sample:
            align = array.dtype.alignment
            offset = -(-offset // align) * align
            entry.append((array.dtype, array.shape, offset))
            offset += array.nbytes
        layout.append(tuple(entry))
    return layout, offset


def _capacity(nbytes: int) -> int:
    """Segment size for ``nbytes``: a quarter of headroom, whole pages, at least 64 KiB."""
    wanted = max(nbytes + nbytes // 4, _MIN_CAPACITY)
    return -(-wanted // mmap.PAGESIZE) * mmap.PAGESIZE


def _unlink(segment: SharedMemory) -> None:
    segment.close()
    with suppress(FileNotFoundError):
        segment.unlink()


class WorkerSegments:
    """The worker's side of its ring: writes results, creating or growing slot segments."""

    def __init__(self, prefix: str, worker: int) -> None:
        self._prefix = prefix
        self._worker = worker
        self._segments: dict[int, SharedMemory] = {}
        self._seq = 0
        self._created: list[tuple[int, int]] = []

    def preallocate(self, sizes: Sequence[int]) -> None:
        """Create the segments of slots ``0..len(sizes)-1`` with the given sizes (whole pages)."""
        for slot, size in enumerate(sizes):
            self._create(slot, -(-size // mmap.PAGESIZE) * mmap.PAGESIZE)

    def _create(self, slot: int, size: int) -> SharedMemory:
        name = segment_name(self._prefix, self._worker, self._seq)
        segment = SharedMemory(name, create=True, size=size)
        self._segments[slot] = segment
        self._created.append((slot, self._seq))
        self._seq += 1
        return segment

    def write(self, slot: int, samples: Sequence[tuple[np.ndarray, ...]]) -> tuple[Layout, int]:
        """Copy ``samples`` into ``slot`` (growing it if needed); return the layout and size."""
        layout, total = plan_layout(samples)
        if not total:
            return layout, total
        segment = self._segments.get(slot)
        if segment is None or segment.size < total:
            if segment is not None:
                segment.close()
            segment = self._create(slot, _capacity(total))
        for sample, entry in zip(samples, layout, strict=True):
            for array, (dtype, shape, offset) in zip(sample, entry, strict=True):
                if array.nbytes:
                    target = np.ndarray(shape, dtype, buffer=segment.buf, offset=offset)
                    np.copyto(target, array, casting="no")
                    del target
        return layout, total

    def take_created(self) -> list[tuple[int, int]]:
        """The ``(slot, seq)`` of segments created since the last call (reported to the parent)."""
        created, self._created = self._created, []
        return created

    def close(self) -> None:
        """Unmap every segment (the parent unlinks them)."""
        for segment in self._segments.values():
            segment.close()
        self._segments.clear()


class ParentSegments:
    """The parent's view of every worker's ring: attaches, copies out and unlinks segments."""

    def __init__(self, prefix: str, num_workers: int) -> None:
        self.prefix = prefix
        self._handles: dict[tuple[int, int], SharedMemory] = {}
        self._samples: dict[tuple[int, int], int] = {}
        self._next_seq = [0] * num_workers

    def install(self, worker: int, slot: int, seq: int) -> None:
        """Attach the segment a worker created for ``slot``, unlinking the one it replaced."""
        self._next_seq[worker] = max(self._next_seq[worker], seq + 1)
        old = self._handles.pop((worker, slot), None)
        if old is not None:
            _unlink(old)
        self._handles[worker, slot] = SharedMemory(segment_name(self.prefix, worker, seq))

    def expect(self, worker: int, slot: int, samples: int) -> None:
        """Note how many samples a task's result in ``slot`` is planned to hold at most (for
        :meth:`statistics`)."""
        self._samples[worker, slot] = samples

    def read(
        self, worker: int, slot: int, layout: Layout, total: int
    ) -> list[tuple[np.ndarray, ...]]:
        """Copy a result of ``total`` bytes out of ``slot`` into parent-owned arrays.

        The arrays are views of one private buffer per result; nothing refers to shared memory.
        """
        buffer = np.empty(total, np.uint8)
        if total:
            source = np.frombuffer(self._handles[worker, slot].buf, np.uint8, total)
            buffer[:] = source
            del source
        self._samples[worker, slot] = max(self._samples.get((worker, slot), 1), len(layout))
        return [
            tuple(
                np.ndarray(shape, dtype, buffer=buffer, offset=offset)
                if dtype.itemsize * math.prod(shape)
                else np.empty(shape, dtype)
                for dtype, shape, offset in entry
            )
            for entry in layout
        ]

    def statistics(self) -> dict[str, list[int]]:
        """Bytes per live segment, and per sample: divided by the most samples the slot is
        planned to hold (a task's share of the batch) or has held."""
        keys = sorted(self._handles)
        capacities = [self._handles[key].size for key in keys]
        counts = [max(self._samples.get(key, 1), 1) for key in keys]
        per_sample = [size // count for size, count in zip(capacities, counts, strict=True)]
        return {"capacities": capacities, "per_sample_capacities": per_sample}

    def release_all(self) -> None:
        """Unlink every known segment, then any that a dead worker never reported."""
        for handle in self._handles.values():
            _unlink(handle)
        self._handles.clear()
        for worker, seq in enumerate(self._next_seq):
            while True:
                try:
                    orphan = SharedMemory(segment_name(self.prefix, worker, seq))
                except FileNotFoundError:
                    break
                _unlink(orphan)
                seq += 1
            self._next_seq[worker] = seq
