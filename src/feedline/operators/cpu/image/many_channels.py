"""TIFF files with more than four samples per pixel, decoded with every channel by tifffile.

Pillow and OpenCV read at most four channels of a TIFF. Files whose first image directory says
more (:func:`many_channel_tiff`, a look at the header only) are decoded by ``tifffile`` (the
``tiff`` extra), and laid out as DALI lays them out: ANY_DATA keeps every channel, RGB and BGR
take the first three, GRAY is ``0.299 R + 0.587 G + 0.114 B`` of them in float32, rounded half
away from zero. 8- and 16-bit samples are supported.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.types import ImageType

__all__ = ["TiffHeader", "bt601_grey", "decode_many_channels", "many_channel_tiff"]

_WIDTH, _HEIGHT, _BITS, _ORIENTATION, _SAMPLES = 256, 257, 258, 274, 277
#: Bytes of a classic TIFF field's types that can hold these tags (SHORT, LONG).
_FIELD_FORMATS = {3: "H", 4: "I"}
_GREY_WEIGHTS = (np.float32(0.299), np.float32(0.587), np.float32(0.114))


@dataclass(frozen=True)
class TiffHeader:
    """What a TIFF's first image directory says.

    Attributes:
        height: rows, as stored.
        width: columns, as stored.
        samples: samples (channels) per pixel.
        bits: bits of the first sample.
        orientation: the Orientation tag (1 when absent).
    """

    height: int
    width: int
    samples: int
    bits: int
    orientation: int


def _fields(data: Any) -> dict[int, int]:
    """The first value of each SHORT or LONG field of a classic TIFF's first directory."""
    view = bytes(memoryview(data).cast("B")[:8])
    endian = {b"II": "<", b"MM": ">"}.get(view[:2])
    if endian is None or len(view) < 8:
        return {}
    (offset,) = struct.unpack(endian + "I", view[4:8])
    raw = memoryview(data).cast("B")
    if offset + 2 > len(raw):
        return {}
    (count,) = struct.unpack(endian + "H", raw[offset : offset + 2])
    fields = {}
    for index in range(count):
        entry = offset + 2 + 12 * index
        if entry + 12 > len(raw):
            break
        tag, kind, number = struct.unpack(endian + "HHI", raw[entry : entry + 8])
        fmt = _FIELD_FORMATS.get(kind)
        if fmt is None or number == 0:
            continue
        size = struct.calcsize(fmt)
        at = entry + 8
        if size * number > 4:  # stored elsewhere: the field holds its offset
            (at,) = struct.unpack(endian + "I", raw[entry + 8 : entry + 12])
        if at + size <= len(raw):
            (fields[tag],) = struct.unpack(endian + fmt, raw[at : at + size])
    return fields


def many_channel_tiff(data: Any) -> TiffHeader | None:
    """The header of a TIFF with more than four samples per pixel; None for any other file."""
    if bytes(memoryview(data).cast("B")[:4]) not in (b"II*\x00", b"MM\x00*"):
        return None
    fields = _fields(data)
    samples = fields.get(_SAMPLES, 1)
    if samples <= 4 or _WIDTH not in fields or _HEIGHT not in fields:
        return None
    orientation = fields.get(_ORIENTATION, 1)
    return TiffHeader(
        height=fields[_HEIGHT],
        width=fields[_WIDTH],
        samples=samples,
        bits=fields.get(_BITS, 1),
        orientation=orientation if 1 <= orientation <= 8 else 1,
    )


def bt601_grey(rgb: np.ndarray) -> np.ndarray:
    """``0.299 R + 0.587 G + 0.114 B`` of the first three channels of an ``HWC`` uint8 or uint16
    image, in float32, rounded half away from zero: an ``HW1`` image of the same type."""
    red, green, blue = (rgb[:, :, index].astype(np.float32) for index in range(3))
    weighted = _GREY_WEIGHTS[0] * red + _GREY_WEIGHTS[1] * green + _GREY_WEIGHTS[2] * blue
    rounded = np.floor(weighted.astype(np.float64) + 0.5)
    top = float(np.iinfo(rgb.dtype).max)
    return np.clip(rounded, 0, top).astype(rgb.dtype)[:, :, np.newaxis]


def _tifffile() -> Any:
    try:
        import tifffile
    except ImportError:
        raise ImportError(
            "decoding a TIFF file with more than four channels needs tifffile: "
            "pip install 'feedline[tiff]'"
        ) from None
    return tifffile


def decode_many_channels(data: Any, output_type: ImageType) -> np.ndarray:
    """Decode a TIFF with more than four samples per pixel to an ``HWC`` array in
    ``output_type`` (EXIF orientation not applied).

    Raises:
        ImportError: tifffile is not installed.
        ValueError: YCbCr output, samples other than 8- or 16-bit unsigned integers, or pixels
            tifffile cannot decode (a compression it has no decoder for, say).
    """
    if output_type == ImageType.YCbCr:
        raise ValueError("YCbCr output is not supported for TIFF files with more than 4 channels")
    tifffile = _tifffile()
    from feedline.operators.cpu.image.pillow_pixels import EncodedFile

    try:
        with tifffile.TiffFile(EncodedFile(data)) as tiff:
            page = tiff.pages.first
            pixels = page.asarray()
            if page.planarconfig == 2:  # one plane per sample
                pixels = np.moveaxis(pixels, 0, -1)
    except Exception as exc:  # tifffile's own errors name the problem
        raise ValueError(f"cannot decode this many-channel TIFF: {exc}") from None
    if pixels.dtype not in (np.uint8, np.uint16) or pixels.ndim != 3:
        raise ValueError(
            f"many-channel TIFF with {pixels.dtype} samples of shape {pixels.shape}: only 8- and "
            "16-bit unsigned samples are supported"
        )
    if output_type == ImageType.GRAY:
        return bt601_grey(pixels)
    if output_type == ImageType.RGB:
        return np.ascontiguousarray(pixels[:, :, :3])
    if output_type == ImageType.BGR:
        return np.ascontiguousarray(pixels[:, :, 2::-1])
    return np.ascontiguousarray(pixels)
