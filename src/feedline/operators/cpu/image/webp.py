"""The WebP codec: libwebp decodes straight into the output array.

Pillow decodes a WebP image through libwebp's animation decoder, which keeps a canvas of its
own and hands over a copy of it, before Pillow copies it once more into its image: five times
the decoded size at the peak. Here, for a still image, the libwebp that Pillow itself loaded
writes the pixels once, in the output's channel order (``WebPDecodeRGBInto`` and its BGR and
RGBA siblings), into the array that becomes the output. The pixels are Pillow's: the same
library decodes them, and the tests compare them on lossy and lossless files, with and without
alpha. Animated files, the grey and YCbCr outputs (Pillow's conversions), and machines where
Pillow's libwebp cannot be found (it is looked up in the process's memory map, which only Linux
has) go through :class:`~feedline.operators.cpu.image.codecs.PillowCodec`.
"""

from __future__ import annotations

import ctypes
import functools
import os
from typing import Any

import numpy as np

from feedline.core.types import ImageType
from feedline.operators.cpu.image.codecs import PillowCodec, Roi, apply_orientation

__all__ = ["WebpCodec"]

#: libwebp's decoder into a caller's buffer for each output type, by the channels it writes.
_DECODERS = {
    (ImageType.RGB, 3): "WebPDecodeRGBInto",
    (ImageType.BGR, 3): "WebPDecodeBGRInto",
    (ImageType.ANY_DATA, 3): "WebPDecodeRGBInto",
    (ImageType.ANY_DATA, 4): "WebPDecodeRGBAInto",
}


class WebpCodec(PillowCodec):
    """WebP through libwebp into the output (one copy of the pixels), Pillow for what that
    does not cover."""

    name = "webp"

    def decode(self, data: Any, output_type: ImageType, roi: Roi | None = None) -> np.ndarray:
        """Decode with libwebp into the output array, then orient and crop; Pillow where the
        file, ``output_type`` or the machine needs it."""
        image = self._open(data)  # refuses, from the header, what the limits do not allow
        channels = 4 if image.mode == "RGBA" else 3
        decoder = _DECODERS.get((output_type, channels), _DECODERS.get((output_type, 3)))
        pixels = None
        if decoder is not None and not getattr(image, "is_animated", False):
            width, height = image.size
            out_channels = 4 if decoder == "WebPDecodeRGBAInto" else 3
            pixels = _decode_into(data, decoder, height, width, out_channels)
        if pixels is None:
            return super().decode(data, output_type, roi)
        orientation = self._orientation(image)
        image.close()
        pixels = apply_orientation(pixels, orientation)
        if roi is None:
            return pixels
        y0, x0, y1, x1 = roi
        return pixels[y0:y1, x0:x1]


def _decode_into(
    data: Any, decoder: str, height: int, width: int, channels: int
) -> np.ndarray | None:
    """The file decoded by libwebp's ``decoder`` into a new ``(height, width, channels)`` array,
    or None when libwebp is not at hand, the bitstream's size is not ``height`` × ``width``, or
    libwebp refuses the file."""
    library = _libwebp()
    if library is None:
        return None
    encoded = np.ascontiguousarray(np.frombuffer(data, np.uint8))
    source = ctypes.c_void_p(encoded.ctypes.data)
    found_width, found_height = ctypes.c_int(), ctypes.c_int()
    if not library.WebPGetInfo(
        source, encoded.size, ctypes.byref(found_width), ctypes.byref(found_height)
    ):
        return None
    if (found_height.value, found_width.value) != (height, width):
        return None
    pixels = np.empty((height, width, channels), np.uint8)
    written = getattr(library, decoder)(
        source, encoded.size, ctypes.c_void_p(pixels.ctypes.data), pixels.nbytes, width * channels
    )
    return pixels if written else None


@functools.cache
def _libwebp() -> Any:
    """The libwebp that Pillow's WebP module loaded (so that the pixels are Pillow's), with the
    signatures of the functions used here; None where it cannot be found."""
    try:
        from PIL import _webp  # noqa: F401  (loads Pillow's libwebp into the process)

        with open("/proc/self/maps") as maps:
            paths = {
                line.split()[-1] for line in maps if line.rstrip().endswith(".so") or ".so." in line
            }
    except (ImportError, OSError):
        return None
    for path in sorted(paths):
        name = os.path.basename(path)
        if name.startswith("libwebp") and not name.startswith(("libwebpdemux", "libwebpmux")):
            library = ctypes.CDLL(path)
            info = library.WebPGetInfo
            info.restype = ctypes.c_int
            info.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p]
            for decoder in set(_DECODERS.values()):
                function = getattr(library, decoder)
                function.restype = ctypes.c_void_p
                function.argtypes = [
                    ctypes.c_void_p,
                    ctypes.c_size_t,
                    ctypes.c_void_p,
                    ctypes.c_size_t,
                    ctypes.c_int,
                ]
            return library
    return None
