"""Pillow decodes into the buffer that becomes the output array.

Left to itself, Pillow decodes into memory of its own, and converting that into a NumPy array
makes a second full-size copy. Here the opened image is given, before it loads, an image core
mapped onto a NumPy buffer sized for the larger of Pillow's pixels and the output; the decoder
writes into it, and the conversion to the output (channel order, palette, grey, 16-bit values)
then runs in place, a strip of rows at a time: top-down when output rows are no longer than
Pillow's (RGB's padding byte dropped, RGB to grey), bottom-up when they are longer (grey to RGB,
a palette expanded), so that no strip overwrites rows not yet converted. Finally the buffer is
shrunk to the output's size. One image therefore holds the larger of Pillow's pixels (4 bytes a
pixel for RGB) and the output, plus a strip.

Images whose mode has no mapped layout (1-bit), or whose plugin replaces the core while loading,
are converted from Pillow's own memory instead, a strip at a time (Pillow's copy plus the output).
Pillow reads the encoded file through :class:`EncodedFile`, which does not copy it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from feedline.core.types import ImageType

__all__ = ["EncodedFile", "PixelTarget", "pil_to_array"]

#: Bytes a pixel takes in a Pillow image core, for the modes that can be mapped onto a buffer.
_PIXEL_BYTES = {
    "L": 1,
    "P": 1,
    "I;16": 2,
    "I;16L": 2,
    "I;16B": 2,
    "LA": 4,
    "PA": 4,
    "RGB": 4,
    "RGBA": 4,
    "CMYK": 4,
    "YCbCr": 4,
    "I": 4,
    "F": 4,
}
_16BIT_MODES = ("I;16", "I;16B", "I;16L", "I;16N", "I")
#: NumPy's type of a 16-bit mode's stored values.
_16BIT_DTYPES = {"I;16": "<u2", "I;16L": "<u2", "I;16B": ">u2", "I;16N": "=u2", "I": "=i4"}
#: Bytes of decoded pixels converted per strip.
_STRIP_BYTES = 1 << 20

Strip = Callable[[Any, int, int], np.ndarray]
"""Rows ``[top, bottom)`` of a loaded Pillow image, converted: a new ``(rows, W, C)`` array."""


class EncodedFile(io.RawIOBase):
    """A read-only, seekable file over an encoded image in memory that, unlike
    ``io.BytesIO``, does not copy it first."""

    def __init__(self, data: Any) -> None:
        """Read ``data`` (any object with a C-contiguous buffer: bytes, a uint8 array)."""
        super().__init__()
        self._view = memoryview(data).cast("B")
        self._position = 0

    def readable(self) -> bool:
        """Always readable."""
        return True

    def seekable(self) -> bool:
        """Always seekable."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Copy the next bytes into ``buffer``; how many (0 at the end)."""
        target = memoryview(buffer).cast("B")  # its length in bytes, whatever its item type
        start = min(self._position, len(self._view))
        count = min(len(target), len(self._view) - start)
        target[:count] = self._view[start : start + count]
        self._position += count
        return count

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move to ``offset`` from the start, the current position or the end (as
        ``io.BytesIO`` does: a negative offset from the start is an error, a move before the
        start from elsewhere stops at the start)."""
        if whence == io.SEEK_SET and offset < 0:
            raise ValueError(f"negative seek value {offset}")
        origin = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: len(self._view)}
        self._position = max(0, origin[whence] + offset)
        return self._position

    def tell(self) -> int:
        """The current position."""
        return self._position


def _target_mode(image: Any, output_type: ImageType) -> str:
    """The Pillow mode an 8-bit image is converted to for ``output_type``."""
    mode = image.mode
    if output_type != ImageType.ANY_DATA:
        return {
            ImageType.RGB: "RGB",
            ImageType.BGR: "RGB",
            ImageType.GRAY: "L",
            ImageType.YCbCr: "YCbCr",
        }[ImageType(output_type)]
    if mode == "P":
        return "RGBA" if "transparency" in image.info else "RGB"
    if mode in ("L", "LA", "RGB", "RGBA"):
        return mode
    if mode == "1":
        return "L"
    if mode == "PA":
        return "RGBA"
    return "RGB"


#: Where each output band lies among the bytes Pillow stores a pixel in, for the conversions
#: that only pick bytes (``(mode, target mode) → byte of each band``); others go through Pillow.
_BANDS = {
    ("L", "RGB"): (0, 0, 0),
    ("LA", "LA"): (0, 3),
    ("LA", "RGB"): (0, 0, 0),
    ("RGB", "RGB"): (0, 1, 2),
    ("RGBA", "RGB"): (0, 1, 2),
    ("RGBA", "RGBA"): (0, 1, 2, 3),
}


@dataclass(frozen=True)
class _Layout:
    """What one image becomes.

    Attributes:
        mode: Pillow's mode of the image.
        channels: the output's channels.
        dtype: the output's type.
        stored: NumPy's type of the values Pillow stores (a pixel is a row of them).
        from_stored: output pixels from a strip of stored pixels ``(rows, W, values)``, for
            conversions NumPy does alone; None where Pillow converts.
        from_pillow: output pixels of rows ``[top, bottom)`` of the image, through Pillow.
        identical: whether the stored pixels already are the output.
    """

    mode: str
    channels: int
    dtype: np.dtype
    stored: np.dtype = field(compare=False)
    from_stored: Callable[[np.ndarray], np.ndarray] | None = field(compare=False)
    from_pillow: Strip = field(compare=False)
    identical: bool = field(compare=False)


def _layout(image: Any, output_type: ImageType) -> _Layout:
    """How ``image`` (opened; loaded or not) turns into an ``output_type`` array."""
    from PIL import Image

    mode = image.mode
    if mode in _16BIT_MODES:
        if output_type == ImageType.YCbCr:
            raise ValueError("YCbCr output is not supported for 16-bit images")
        channels = 3 if output_type in (ImageType.RGB, ImageType.BGR) else 1
        stored = np.dtype(_16BIT_DTYPES[mode])
        values = _16bit_values(channels)
        strip = _raw_strip(stored, values)
        identical = channels == 1 and stored == np.dtype(np.uint16)
        return _Layout(mode, channels, np.dtype(np.uint16), stored, values, strip, identical)
    target = _target_mode(image, output_type)
    reverse = output_type == ImageType.BGR
    bands = _BANDS.get((mode, target))
    picked = None
    if bands is not None:
        picked = _picked_bands(bands[::-1] if reverse else bands)
    strip = _8bit_strip(target, reverse)
    identical = (target == mode == "L") or (bands == (0, 1, 2, 3) and not reverse)
    channels = Image.getmodebands(target)
    return _Layout(mode, channels, np.dtype(np.uint8), np.dtype(np.uint8), picked, strip, identical)


def _picked_bands(bands: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    index = list(bands)

    def picked(stored: np.ndarray) -> np.ndarray:
        return stored[:, :, index]

    return picked


def _16bit_values(channels: int) -> Callable[[np.ndarray], np.ndarray]:
    def values(stored: np.ndarray) -> np.ndarray:
        clipped = np.clip(stored, 0, 65535).astype(np.uint16)
        return np.repeat(clipped, channels, axis=2) if channels > 1 else clipped

    return values


def _8bit_strip(target: str, reverse: bool) -> Strip:
    def strip(image: Any, top: int, bottom: int) -> np.ndarray:
        width = image.size[0]
        rows = image.crop((0, top, width, bottom))
        if rows.mode != target:
            rows = rows.convert(target)
        pixels = np.frombuffer(rows.tobytes(), np.uint8).reshape(bottom - top, width, -1)
        return pixels[:, :, ::-1] if reverse else pixels

    return strip


def _raw_strip(stored: np.dtype, values: Callable[[np.ndarray], np.ndarray]) -> Strip:
    def strip(image: Any, top: int, bottom: int) -> np.ndarray:
        width = image.size[0]
        raw = image.crop((0, top, width, bottom)).tobytes()
        return values(np.frombuffer(raw, stored).reshape(bottom - top, width, -1))

    return strip


def pil_to_array(image: Any, output_type: ImageType) -> np.ndarray:
    """Convert a loaded Pillow image to an ``HWC`` array in ``output_type``, a strip of rows at
    a time into a new array (the image keeps its own pixels).

    ``ANY_DATA`` keeps the file's channels (L → 1, LA → 2, RGB → 3, RGBA → 4; palettes become RGB
    or RGBA, CMYK becomes RGB). 16-bit grey images stay 16-bit (one channel, replicated to three
    for RGB/BGR).
    """
    layout = _layout(image, output_type)
    width, height = image.size
    out = np.empty((height, width, layout.channels), layout.dtype)
    rows = max(1, _STRIP_BYTES // max(1, 4 * width * layout.channels))
    for top in range(0, height, rows):
        bottom = min(height, top + rows)
        out[top:bottom] = layout.from_pillow(image, top, bottom)
    return out


class PixelTarget:
    """The buffer one Pillow image decodes into and is converted in, then returned as its array.

    Use: ``target = PixelTarget(image, output_type)`` on the opened image (after any
    ``draft``), then ``image.load()``, then ``target.array(image)``.
    """

    def __init__(self, image: Any, output_type: ImageType) -> None:
        """Map a core of ``image``'s mode onto a new buffer (when the mode allows it) and give it
        to the image, so that loading decodes into the buffer.

        Raises:
            ValueError: ``output_type`` is impossible for this image (YCbCr of 16-bit pixels).
        """
        from PIL import Image

        self._output_type = output_type
        self._layout = _layout(image, output_type)
        width, height = image.size
        pixel_bytes = _PIXEL_BYTES.get(image.mode)
        self._core: Any = None
        self._buffer: np.ndarray | None = None
        if pixel_bytes is None:
            return
        self._in_row = width * pixel_bytes
        self._out_row = width * self._layout.channels * self._layout.dtype.itemsize
        self._buffer = np.empty(height * max(self._in_row, self._out_row), np.uint8)
        try:
            self._core = Image.core.map_buffer(
                self._buffer, image.size, "raw", 0, (image.mode, self._in_row, 1)
            )
        except (ValueError, TypeError):  # a Pillow that lays this mode out otherwise
            self._buffer = None
            return
        image.im = self._core

    def array(self, image: Any) -> np.ndarray:
        """The loaded ``image`` as its ``HWC`` output array; closes ``image``.

        Converted in the buffer it was decoded into when the decoder wrote there and the image
        still needs what it needed when it was opened (else from Pillow's own pixels).
        """
        layout = _layout(image, self._output_type)
        mapped = self._core is not None and image.im is self._core and layout == self._layout
        self._core = None
        if not mapped:
            self._buffer = None
            array = pil_to_array(image, self._output_type)
            image.close()
            return array
        if not layout.identical:
            self._convert_in_place(image)
        image.close()
        return self._shrunk(*image.size)

    def _convert_in_place(self, image: Any) -> None:
        """Replace Pillow's rows by output rows in the same buffer, one strip at a time, in the
        order in which no write reaches rows not yet read."""
        width, height = image.size
        rows = max(1, _STRIP_BYTES // max(self._in_row, self._out_row))
        tops = range(0, height, rows)
        if self._out_row > self._in_row:
            tops = reversed(tops)
        layout = self._layout
        stored = self._buffer[: height * self._in_row].view(layout.stored)
        stored = stored.reshape(height, width, -1)
        shape = (width, layout.channels)
        for top in tops:
            bottom = min(height, top + rows)
            if layout.from_stored is not None:
                pixels = layout.from_stored(stored[top:bottom])
            else:
                pixels = layout.from_pillow(image, top, bottom)
            rows_out = self._buffer[top * self._out_row : bottom * self._out_row]
            rows_out.view(self._layout.dtype).reshape(bottom - top, *shape)[...] = pixels

    def _shrunk(self, width: int, height: int) -> np.ndarray:
        """The output array: the buffer cut to the output's size, returning the rest to the
        allocator where no one else holds the buffer."""
        buffer, self._buffer = self._buffer, None
        size = height * self._out_row
        if buffer.size > size:
            try:
                buffer.resize(size)
            except ValueError:  # still referenced: keep the larger buffer rather than copy it
                buffer = buffer[:size]
        return buffer.view(self._layout.dtype).reshape(height, width, self._layout.channels)
