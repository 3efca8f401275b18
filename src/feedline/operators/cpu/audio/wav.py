"""A direct reader for plain 16-bit PCM WAV files.

Speech corpora are mostly mono 16-bit PCM WAV; for them, parsing the RIFF header and viewing the
``data`` chunk with :func:`numpy.frombuffer` costs a few microseconds, where libsndfile behind
``soundfile``'s Python virtual-file callbacks costs about a tenth of a millisecond per clip.
Anything else (other sample formats, ``WAVE_FORMAT_EXTENSIBLE``, truncated or unusual chunk
layouts) is left to libsndfile: :func:`read_pcm16_wav` returns None for it.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["read_pcm16_wav"]

_PCM = 1
_CHUNK = struct.Struct("<4sI")
_FORMAT = struct.Struct("<HHIIHH")


def read_pcm16_wav(data: memoryview) -> tuple[np.ndarray, int] | None:
    """``(samples, sample rate)`` of a plain 16-bit PCM WAV file, else None.

    Args:
        data: the whole file, as bytes (a 1-D byte memoryview).

    Returns:
        A read-only ``(frames, channels)`` int16 view of ``data`` and the file's rate, or None
        when the file is not a well-formed little-endian 16-bit PCM WAV (``WAVE_FORMAT_PCM``)
        with its ``fmt `` chunk before a complete ``data`` chunk.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    position, layout = 12, None
    while position + _CHUNK.size <= len(data):
        name, size = _CHUNK.unpack_from(data, position)
        body = position + _CHUNK.size
        if name == b"fmt ":
            if size < _FORMAT.size or body + _FORMAT.size > len(data):
                return None
            tag, channels, rate, _, block_align, bits = _FORMAT.unpack_from(data, body)
            if tag != _PCM or bits != 16 or channels < 1 or block_align != 2 * channels:
                return None
            layout = (channels, rate)
        elif name == b"data":
            if layout is None or body + size > len(data):
                return None
            channels, rate = layout
            frames = size // (2 * channels)
            samples = np.frombuffer(data, "<i2", frames * channels, body)
            return samples.reshape(frames, channels), rate
        position = body + size + (size & 1)
    return None
