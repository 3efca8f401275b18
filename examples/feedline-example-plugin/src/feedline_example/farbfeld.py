"""A codec for farbfeld images: ``farbfeld``, width and height (big-endian ``uint32``), then
16-bit big-endian RGBA pixels, row by row.

A codec is any object with ``shape(data)`` and ``decode(data, output_type, roi)``; feedline's
decoders convert the 16-bit result to the ``dtype`` asked for.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
from feedline.types import ImageType

MAGIC = b"farbfeld"
_HEADER = 16


def encode(rgba: np.ndarray) -> bytes:
    """A farbfeld file of an ``(H, W, 4)`` ``uint16`` image (for tests and examples)."""
    height, width, channels = rgba.shape
    if channels != 4 or rgba.dtype != np.uint16:
        raise ValueError(f"expected an (H, W, 4) uint16 image, got {rgba.shape} {rgba.dtype}")
    return MAGIC + struct.pack(">II", width, height) + rgba.astype(">u2").tobytes()


class FarbfeldCodec:
    """Decodes farbfeld to ``uint16``: RGB, BGR, GRAY (ITU-R 601 luma) or RGBA (``ANY_DATA``)."""

    def shape(self, data: Any) -> tuple[int, int, int]:
        """``(height, width, 4)`` from the header.

        Raises:
            ValueError: the header is truncated.
        """
        header = bytes(data[:_HEADER])
        if len(header) < _HEADER or not header.startswith(MAGIC):
            raise ValueError("farbfeld: truncated header")
        width, height = struct.unpack(">II", header[8:16])
        return height, width, 4

    def decode(
        self, data: Any, output_type: ImageType, roi: tuple[int, int, int, int] | None = None
    ) -> np.ndarray:
        """The pixels as ``uint16`` ``HWC`` (only ``roi`` = ``(y0, x0, y1, x1)`` if given).

        Raises:
            ValueError: truncated pixel data, or an output type farbfeld cannot give (YCbCr).
        """
        height, width, _ = self.shape(data)
        size = height * width * 4
        pixels = np.frombuffer(bytes(data[_HEADER : _HEADER + 2 * size]), ">u2")
        if pixels.size != size:
            raise ValueError(f"farbfeld: {pixels.size} of {size} values present (truncated)")
        rgba = pixels.astype(np.uint16).reshape(height, width, 4)
        if roi is not None:
            y0, x0, y1, x1 = roi
            rgba = rgba[y0:y1, x0:x1]
        if output_type == ImageType.ANY_DATA:
            return rgba
        if output_type == ImageType.RGB:
            return rgba[..., :3]
        if output_type == ImageType.BGR:
            return rgba[..., 2::-1]
        if output_type == ImageType.GRAY:
            luma = rgba[..., :3].astype(np.float64) @ np.array([0.299, 0.587, 0.114])
            return np.rint(luma).astype(np.uint16)[..., None]
        raise ValueError(f"farbfeld: output type {ImageType(output_type).name} is not supported")
