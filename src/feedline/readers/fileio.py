"""Whole files as ``uint8`` arrays: memory-mapped (read-only) or read into new buffers.

:func:`read_bytes` reads one file. :class:`FileBytes` is what a reader uses: with mmap it shares
one mapping of a file among all the samples read from it while any of them lives, as DALI's
memory-mapped file streams do, so a small data set read over and over is mapped once per pass
rather than once per sample.

A reader that decodes each file as it loads it and drops the bytes (audio) passes
``map_from=SMALL_FILE_BYTES``: files under that size are then read, even with mmap, into
read-only buffers shared the same way. A mapping that lives only for one load costs more than
the copy it saves there (the mapping and unmapping calls, a page fault per 16 pages, and on
unmapping an interrupt to every other core running one of the process's threads, to flush its
TLB); a mapping handed on in a batch, whose pages may never be read, costs less.
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
import weakref

import numpy as np

__all__ = ["SMALL_FILE_BYTES", "FileBytes", "read_bytes"]

_POPULATE = getattr(mmap, "MAP_POPULATE", 0)
#: Below this size a file decoded as it is loaded is read rather than mapped. Measured with two
#: threads reading one file each over and over and touching every page (2026-11-28, CPU time
#: per file, mapping / reading): 14.5 / 8.6 us at 16 KiB, 19.4 / 12.0 at 128 KiB, 30.0 / 32.2
#: at 512 KiB, 47.2 / 61.7 at 1 MiB; a speech pipeline reading 80 KiB WAV files took 3-26% more
#: clips/s with reads.
SMALL_FILE_BYTES = 512 << 10


def read_bytes(
    path: str, *, use_mmap: bool = True, read_ahead: bool = False, map_from: int = 0
) -> np.ndarray:
    """The content of the file at ``path`` as a 1-D ``uint8`` array.

    Memory-maps the file (read-only array) unless ``use_mmap`` is False (a new writable
    buffer) or the file is smaller than ``map_from`` bytes (a read-only copy). Empty files give
    an empty array. ``read_ahead`` populates the whole mapping at once.

    Raises:
        OSError: the file cannot be opened or read, or is not a regular file (message names it).
    """
    return _read(path, use_mmap, read_ahead, map_from)[0]


def _read(
    path: str, use_mmap: bool, read_ahead: bool, map_from: int = 0
) -> tuple[np.ndarray, bool]:
    """:func:`read_bytes`, and whether the array is read-only and may be shared (a mapping, or
    a file under ``map_from`` bytes read with ``use_mmap``)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot open {path!r}: {exc.strerror}") from None
    try:
        if use_mmap and map_from <= 0:
            try:
                # Length 0 maps the whole file; Python checks the size with its own fstat.
                return _map(fd, read_ahead), True
            except (OSError, ValueError):
                pass  # empty or not a regular file, or out of mappings: checked below
        return _read_checked(fd, path, use_mmap, read_ahead, map_from)
    finally:
        os.close(fd)


def _map(fd: int, read_ahead: bool) -> np.ndarray:
    """The whole open file ``fd`` mapped read-only (raises for empty and irregular files)."""
    populate = _POPULATE if read_ahead else 0
    mapping = mmap.mmap(fd, 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
    if read_ahead and not populate and hasattr(mapping, "madvise"):
        mapping.madvise(mmap.MADV_WILLNEED)
    return np.frombuffer(mapping, np.uint8)


def _read_checked(
    fd: int, path: str, use_mmap: bool, read_ahead: bool, map_from: int
) -> tuple[np.ndarray, bool]:
    """Read ``fd`` after checking that it is a regular file: an empty array for an empty file,
    a mapping if ``use_mmap``, the file has ``map_from`` bytes or more and a mapping can be
    made, else a plain read (read-only and shared when ``use_mmap`` chose it for its size)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        code = errno.EISDIR if stat.S_ISDIR(info.st_mode) else errno.EINVAL
        raise OSError(code, f"cannot read {path!r}: not a regular file")
    size = info.st_size
    if size == 0:
        return np.empty(0, np.uint8), False
    if use_mmap and size >= map_from:
        try:
            return _map(fd, read_ahead), True
        except (OSError, ValueError):
            pass  # out of mappings (vm.max_map_count), or the file just shrank: plain read
        return _read_all(fd, path, size), False
    buffer = _read_all(fd, path, size)
    buffer.flags.writeable = not use_mmap
    return buffer, use_mmap


def _read_all(fd: int, path: str, size: int) -> np.ndarray:
    """The ``size`` bytes of the open file ``fd``, read into a new buffer."""
    buffer = np.empty(size, np.uint8)
    view = memoryview(buffer)
    done = 0
    while done < size:
        count = os.readv(fd, [view[done:]])
        if count == 0:
            raise OSError(f"cannot read {path!r}: file shrank to {done} of {size} bytes")
        done += count
    return buffer


class FileBytes:
    """Reads files for one reader, like :func:`read_bytes` with the same settings.

    With mmap, a file whose mapping (or read-only copy, under ``map_from`` bytes) is still
    alive (some sample read from it still exists) is not read again: the new sample is another
    read-only view of it. So a file replaced or resized on disk meanwhile is seen as it was
    first read, as in DALI; data sets that change under the reader should use plain reads
    (``dont_use_mmap``).

    Args:
        use_mmap: memory-map files (else read them into new, writable buffers).
        read_ahead: populate each mapping when it is made.
        map_from: with mmap, read files smaller than this into read-only buffers instead
            (shared the same way); see :data:`SMALL_FILE_BYTES`.
    """

    def __init__(self, use_mmap: bool = True, read_ahead: bool = False, map_from: int = 0) -> None:
        self.use_mmap = use_mmap
        self.read_ahead = read_ahead
        self.map_from = map_from
        self._maps: dict[str, weakref.ref[np.ndarray]] = {}
        self._sweep_at = 1024

    def __call__(self, path: str) -> np.ndarray:
        """The content of the file at ``path`` as a 1-D ``uint8`` array.

        Raises:
            OSError: as :func:`read_bytes`.
        """
        if not self.use_mmap:
            return read_bytes(path, use_mmap=False)
        ref = self._maps.get(path)
        if ref is not None:
            alive = ref()
            if alive is not None:
                return alive.view()
        data, shared = _read(path, True, self.read_ahead, self.map_from)
        if shared:
            maps = self._maps
            if len(maps) >= self._sweep_at:
                self._sweep()
                maps = self._maps
            maps[path] = weakref.ref(data)
        return data.view()

    def _sweep(self) -> None:
        """Forget the files whose arrays are gone (amortised: the table at most doubles)."""
        live = {path: ref for path, ref in self._maps.copy().items() if ref() is not None}
        self._maps = live
        self._sweep_at = max(1024, 2 * len(live))

    def __len__(self) -> int:
        """Number of files remembered (alive or not yet swept)."""
        return len(self._maps)
