"""Reads that bypass the page cache (``O_DIRECT``), for the readers' ``use_o_direct`` argument.

``O_DIRECT`` needs the buffer, the file offset and the length aligned to the device's block
size: :func:`read_direct` reads the enclosing page-aligned span into an anonymous (page-aligned)
mapping and returns a view of the bytes asked for.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

__all__ = ["read_direct"]


def read_direct(path: str, offset: int = 0, size: int | None = None) -> np.ndarray:
    """``size`` bytes of ``path`` from ``offset`` (default: to the end), read with O_DIRECT.

    Raises:
        OSError: the file cannot be opened with O_DIRECT (e.g. the file system refuses it) or
            the read fails; the message names the file.
    """
    flags = os.O_RDONLY | getattr(os, "O_DIRECT", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot open {path!r} with O_DIRECT: {exc.strerror}") from None
    try:
        file_size = os.fstat(fd).st_size
        size = file_size - offset if size is None else size
        page = mmap.PAGESIZE
        start = offset - offset % page
        span = -(-(offset + size - start) // page) * page
        buffer = mmap.mmap(-1, max(page, span))
        view, done = memoryview(buffer), 0
        while done < span:
            count = os.preadv(fd, [view[done:]], start + done)
            if count == 0:
                break
            done += count
    except OSError as exc:
        raise OSError(exc.errno, f"O_DIRECT read of {path!r} failed: {exc.strerror}") from None
    finally:
        os.close(fd)
    if done < offset - start + size:
        raise OSError(
            f"O_DIRECT read of {path!r}: {size} bytes at {offset} pass the end of the file"
        )
    return np.frombuffer(buffer, np.uint8, count=size, offset=offset - start)
