"""16-bit colour PNG and TIFF files, decoded at full depth with OpenCV.

Pillow keeps only 8 bits of each channel of a 16-bit RGB or RGBA image, so these files (and only
these: :func:`is_deep_colour` reads the header Pillow has already parsed) are decoded by
``cv2.imdecode`` with ``IMREAD_UNCHANGED``, which keeps the 16 bits. The result is laid out as
the 8-bit path lays it out: RGB (alpha dropped), BGR, GRAY (one channel) or ANY_DATA (the file's
3 or 4 channels), ``uint16``.

Grey output follows each format's own conversion, as DALI's decoders do: PNG through libpng's
RGB-to-grey (OpenCV's grey decode), TIFF as ``0.299 R + 0.587 G + 0.114 B`` in float32, rounded
half away from zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline.core.types import ImageType
from feedline.operators.cpu.image.many_channels import bt601_grey

__all__ = ["decode_deep_colour", "is_deep_colour"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: PNG colour types with three colour channels: truecolour, truecolour with alpha.
_PNG_COLOUR_TYPES = (2, 6)
_TIFF_BITS_PER_SAMPLE = 258
_TIFF_SAMPLES_PER_PIXEL = 277


def is_deep_colour(image: Any, data: Any) -> bool:
    """Whether an opened (not loaded) Pillow image is a 16-bit colour PNG or TIFF.

    Args:
        image: the image Pillow opened from ``data`` (its header parsed, no pixels decoded).
        data: the encoded file (bytes or a uint8 array).
    """
    if image.format == "PNG":
        header = bytes(memoryview(data).cast("B")[:26])
        return header[:8] == _PNG_SIGNATURE and header[24] == 16 and header[25] in _PNG_COLOUR_TYPES
    if image.format == "TIFF":
        tags = image.tag_v2
        bits = tags.get(_TIFF_BITS_PER_SAMPLE, (1,))
        bits = bits if isinstance(bits, tuple) else (bits,)
        samples = tags.get(_TIFF_SAMPLES_PER_PIXEL, 1)
        return samples in (3, 4) and all(b == 16 for b in bits) and image.mode in ("RGB", "RGBA")
    return False


def _decoded(data: Any, flags: int) -> np.ndarray:
    import cv2

    encoded = np.frombuffer(memoryview(data).cast("B"), np.uint8)
    pixels = cv2.imdecode(encoded, flags | cv2.IMREAD_IGNORE_ORIENTATION)
    if pixels is None:
        raise ValueError("corrupt or truncated 16-bit colour image data")
    return pixels


def decode_deep_colour(data: Any, file_format: str, output_type: ImageType) -> np.ndarray:
    """Decode a 16-bit colour PNG or TIFF to an ``HWC`` ``uint16`` array in ``output_type``
    (EXIF orientation not applied).

    Args:
        data: the encoded file.
        file_format: Pillow's name of its format, ``"PNG"`` or ``"TIFF"``.
        output_type: RGB, BGR, GRAY or ANY_DATA.

    Raises:
        ValueError: YCbCr output (not supported for 16-bit images), or data OpenCV cannot decode.
    """
    import cv2

    if output_type == ImageType.YCbCr:
        raise ValueError("YCbCr output is not supported for 16-bit images")
    if output_type == ImageType.GRAY and file_format == "PNG":
        grey = _decoded(data, cv2.IMREAD_GRAYSCALE | cv2.IMREAD_ANYDEPTH)
        return grey[:, :, np.newaxis]
    stored = _decoded(data, cv2.IMREAD_UNCHANGED)  # B, G, R[, A]
    if output_type == ImageType.GRAY:
        return bt601_grey(stored[:, :, 2::-1])
    if output_type == ImageType.BGR:
        return np.ascontiguousarray(stored[:, :, :3])
    order = [2, 1, 0]
    if output_type == ImageType.ANY_DATA and stored.shape[2] == 4:
        order.append(3)
    return np.ascontiguousarray(stored[:, :, order])
