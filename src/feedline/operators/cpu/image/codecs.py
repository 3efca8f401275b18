"""Image codecs: the decoding back ends behind ``decoders.*`` and ``peek_image_shape``.

A codec is any object (or class, instantiated once without arguments) with

* ``shape(data) -> (height, width, channels)``: the decoded shape from the header only, EXIF
  orientation applied (``channels`` is the file's own channel count);
* ``decode(data, output_type, roi=None) -> np.ndarray``: an ``HWC`` ``uint8`` (or ``uint16`` for
  16-bit files, grey or colour) image in ``output_type``
  (:class:`~feedline.core.types.ImageType`) with the EXIF orientation applied.
  ``roi = (y0, x0, y1, x1)`` (in oriented coordinates, inside the image)
  asks for that region only; a codec that cannot decode less simply crops. The JPEG codec
  decodes only the region with libjpeg-turbo when feedline's region decoder could be built (it
  needs libjpeg's headers, e.g. Debian's ``libjpeg-dev``); the pixels are the same.

Codecs are registered by plugins through ``feedline_register_codecs`` with the file signatures
they claim; :class:`ImageCodec` is a convenient base class. Built in: JPEG (simplejpeg, the
libjpeg-turbo decoder, when installed, else Pillow), WebP (Pillow's libwebp straight into the
output, :mod:`~feedline.operators.cpu.image.webp`) and Pillow for PNG, BMP, TIFF, PNM and GIF
(first frame), decoded into the output's own buffer
(:mod:`~feedline.operators.cpu.image.pillow_pixels`), except 16-bit colour PNG and TIFF, which
OpenCV decodes at full depth (:mod:`~feedline.operators.cpu.image.deep_colour`), and TIFF
with more than four channels, which tifffile decodes
(:mod:`~feedline.operators.cpu.image.many_channels`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import warn_corrupt_data
from feedline.core.types import ImageType
from feedline.operators.cpu.image.arg_schemas import MAX_DECODED_BYTES, MAX_IMAGE_PIXELS
from feedline.operators.cpu.image.bindings import (
    Normalization,
    decode_jpeg_region,
    decode_jpeg_resampled,
)
from feedline.operators.cpu.image.deep_colour import decode_deep_colour, is_deep_colour
from feedline.operators.cpu.image.limits import (
    check_decoded_bytes,
    check_image_size,
    check_jpeg_entropy,
)
from feedline.operators.cpu.image.many_channels import (
    TiffHeader,
    decode_many_channels,
    many_channel_tiff,
)
from feedline.operators.cpu.image.pillow_pixels import EncodedFile, PixelTarget, pil_to_array
from feedline.operators.cpu.image.windows import Source

__all__ = [
    "MAX_DECODED_BYTES",
    "MAX_IMAGE_PIXELS",
    "ImageCodec",
    "JpegCodec",
    "JpegProbe",
    "PillowCodec",
    "apply_orientation",
    "check_image_size",
    "jpeg_orientation",
    "pil_to_array",
]

Roi = tuple[int, int, int, int]


@dataclass(frozen=True)
class JpegProbe:
    """What a JPEG's header says (:meth:`JpegCodec.probe`).

    Attributes:
        shape: the decoded ``(H, W, C)``, EXIF orientation applied.
        direct: whether the file can go straight to the compiled decode+resample call (not
            rotated, not CMYK/YCCK).
    """

    shape: tuple[int, int, int]
    direct: bool


try:  # pragma: no cover - depends on the environment
    import simplejpeg as _simplejpeg
except ImportError:  # pragma: no cover
    _simplejpeg = None


#: TurboJPEG's refusal of a chroma subsampling it has no name for (4x2 luma blocks, say).
_SUBSAMPLING_UNKNOWN = "Could not determine subsampling level"


class _TurboJpegLimit(Exception):
    """simplejpeg (TurboJPEG's API) cannot decode a valid file that libjpeg decodes."""


def apply_orientation(image: np.ndarray, orientation: int) -> np.ndarray:
    """Turn a decoded ``HW[C]`` image upright according to its EXIF orientation (1-8)."""
    if orientation in (0, 1) or orientation > 8:
        return image
    if orientation == 2:
        out = image[:, ::-1]
    elif orientation == 3:
        out = image[::-1, ::-1]
    elif orientation == 4:
        out = image[::-1]
    else:
        swapped = image.swapaxes(0, 1)
        out = {
            5: swapped,
            6: swapped[:, ::-1],
            7: swapped[::-1, ::-1],
            8: swapped[::-1],
        }[orientation]
    return np.ascontiguousarray(out)


def _exif_orientation(tiff: bytes) -> int:
    """The orientation tag of a TIFF-structured EXIF block (1 when absent or unreadable)."""
    if len(tiff) < 8 or tiff[:2] not in (b"II", b"MM"):
        return 1
    endian = "<" if tiff[:2] == b"II" else ">"
    (offset,) = struct.unpack(endian + "I", tiff[4:8])
    if offset + 2 > len(tiff):
        return 1
    (count,) = struct.unpack(endian + "H", tiff[offset : offset + 2])
    for index in range(count):
        entry = offset + 2 + 12 * index
        if entry + 12 > len(tiff):
            break
        tag, kind = struct.unpack(endian + "HH", tiff[entry : entry + 4])
        if tag == 0x0112 and kind == 3:
            (value,) = struct.unpack(endian + "H", tiff[entry + 8 : entry + 10])
            return value if 1 <= value <= 8 else 1
    return 1


#: Start-of-frame markers (baseline, extended, progressive, lossless; Huffman or arithmetic).
_SOF_MARKERS = frozenset(
    (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF)
)
#: libjpeg's colour space names by component count, as simplejpeg reports them.
_COLORSPACE_OF = {1: "Gray", 3: "YCbCr", 4: "CMYK"}


def _scan_jpeg(data: Any) -> tuple[tuple[int, int, int] | None, int]:
    """One walk over a JPEG's markers up to its scan: the frame header's ``(height, width,
    components)`` (None if there is none) and the EXIF orientation (1 when absent)."""
    view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
    size = len(view)
    frame, orientation = None, 1
    pos = 2
    while pos + 4 <= size:
        if view[pos] != 0xFF:
            break
        marker = view[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker in (0xD9, 0xDA):
            break
        length = (view[pos + 2] << 8) | view[pos + 3]
        if marker in _SOF_MARKERS and frame is None and pos + 10 <= size:
            height = (view[pos + 5] << 8) | view[pos + 6]
            width = (view[pos + 7] << 8) | view[pos + 8]
            frame = (height, width, view[pos + 9])
        elif marker == 0xE1 and bytes(view[pos + 4 : pos + 10]) == b"Exif\x00\x00":
            orientation = _exif_orientation(bytes(view[pos + 10 : pos + 2 + length]))
        pos += 2 + length
    return frame, orientation


def jpeg_orientation(data: Any) -> int:
    """The EXIF orientation of a JPEG stream (1 when it has none), read from its APP1 segment."""
    return _scan_jpeg(data)[1]


def _swap_for(orientation: int, height: int, width: int) -> tuple[int, int]:
    return (width, height) if orientation in (5, 6, 7, 8) else (height, width)


def _crop(image: np.ndarray, roi: Roi | None) -> np.ndarray:
    if roi is None:
        return image
    y0, x0, y1, x1 = roi
    return image[y0:y1, x0:x1]


def _stored_channels(image: Any) -> tuple[int, int]:
    """``(channels, bytes per channel)`` of a Pillow image's pixels once decoded."""
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I;16N"):
        return 1, 2
    if mode == "I":
        return 1, 4
    if mode in ("F", "I;32"):
        return 1, 4
    return max(len(image.getbands()), 3 if mode == "P" else 1), 1


class ImageCodec:
    """Base class of codecs: override :meth:`shape` and :meth:`decode`.

    Attributes:
        max_pixels: the largest image to accept, set by the decoder operator to its own
            ``max_pixels`` on its copy of the codec; a codec refuses larger images from the
            header (:func:`check_image_size`) before allocating.
        max_decoded_bytes: the largest decoded image in bytes, set likewise from the operator's
            ``max_decoded_bytes`` (:func:`check_decoded_bytes`).
        adjust_orientation: whether the EXIF orientation is applied (to the pixels and to the
            shape), set from the operator's ``adjust_orientation``.
        fast_idct: whether JPEGs use libjpeg-turbo's fast integer inverse DCT, set from the
            operator's ``use_fast_idct`` (a codec without a choice of IDCT ignores it).
    """

    name = "codec"
    max_pixels: int = MAX_IMAGE_PIXELS
    max_decoded_bytes: int = MAX_DECODED_BYTES
    adjust_orientation: bool = True
    fast_idct: bool = False

    def check_size(self, height: int, width: int, channels: int, depth: int = 1) -> None:
        """Refuse, from the header, an image above this codec's ``max_pixels`` or
        ``max_decoded_bytes``."""
        check_image_size(height, width, self.max_pixels)
        check_decoded_bytes(height, width, channels, depth, self.max_decoded_bytes)

    def shape(self, data: Any) -> tuple[int, int, int]:
        """``(height, width, channels)`` of the decoded image, from the header only."""
        raise NotImplementedError

    def decode(self, data: Any, output_type: ImageType, roi: Roi | None = None) -> np.ndarray:
        """Decode ``data`` to an ``HWC`` array (``roi`` = ``(y0, x0, y1, x1)`` or None)."""
        raise NotImplementedError


class PillowCodec(ImageCodec):
    """Any format Pillow reads (first frame of animations), EXIF orientation applied."""

    name = "pillow"

    def _open(self, data: Any) -> Any:
        from PIL import Image

        try:
            image = Image.open(EncodedFile(data))
        except Image.DecompressionBombError as exc:  # Pillow's own size limit, before decoding
            raise ValueError(f"image too large: {exc}") from None
        except (OSError, SyntaxError, ValueError, struct.error) as exc:
            raise ValueError(f"unrecognised or corrupt image data: {exc}") from None
        channels, depth = _stored_channels(image)
        if is_deep_colour(image, data):
            depth = 2
        self.check_size(image.height, image.width, channels, depth)
        return image

    def _orientation(self, image: Any) -> int:
        """The EXIF orientation to apply to ``image`` (1 without one, or when not adjusting)."""
        if not self.adjust_orientation:
            return 1
        try:
            value = image.getexif().get(0x0112, 1)
        except Exception:  # malformed EXIF must not hide the pixels
            return 1
        return value if isinstance(value, int) and 1 <= value <= 8 else 1

    def _many_channels(self, data: Any) -> TiffHeader | None:
        """The header of a TIFF with more than four channels (None for other files), checked
        against the size limits."""
        header = many_channel_tiff(data)
        if header is not None:
            depth = 2 if header.bits > 8 else 1
            self.check_size(header.height, header.width, header.samples, depth)
        return header

    def shape(self, data: Any) -> tuple[int, int, int]:
        """Shape from the header (no pixel decoding)."""
        tiff = self._many_channels(data)
        if tiff is not None:
            orientation = tiff.orientation if self.adjust_orientation else 1
            return (*_swap_for(orientation, tiff.height, tiff.width), tiff.samples)
        image = self._open(data)
        width, height = image.size
        channels = {"L": 1, "1": 1, "LA": 2, "RGBA": 4, "PA": 4}.get(image.mode, 3)
        if image.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
            channels = 1
        if image.mode == "P":
            channels = 4 if "transparency" in image.info else 3
        return (*_swap_for(self._orientation(image), height, width), channels)

    @staticmethod
    def _load(image: Any) -> None:
        try:
            image.load()
        except (OSError, SyntaxError, ValueError, struct.error) as exc:
            raise ValueError(f"corrupt or truncated {image.format} data: {exc}") from None

    def decode(self, data: Any, output_type: ImageType, roi: Roi | None = None) -> np.ndarray:
        """Decode with Pillow into the output's own buffer (:class:`PixelTarget`), then orient
        and crop."""
        tiff = self._many_channels(data)
        if tiff is not None:
            orientation = tiff.orientation if self.adjust_orientation else 1
            pixels = decode_many_channels(data, output_type)
            return _crop(apply_orientation(pixels, orientation), roi)
        image = self._open(data)
        if is_deep_colour(image, data):
            pixels = decode_deep_colour(data, image.format, output_type)
            return _crop(apply_orientation(pixels, self._orientation(image)), roi)
        if image.format == "JPEG" and output_type in (ImageType.GRAY, ImageType.YCbCr):
            image.draft("L" if output_type == ImageType.GRAY else "YCbCr", image.size)
        target = PixelTarget(image, output_type)
        self._load(image)
        orientation = self._orientation(image)
        array = apply_orientation(target.array(image), orientation)
        return _crop(array, roi)


class JpegCodec(PillowCodec):
    """JPEG through simplejpeg (libjpeg-turbo, releases the GIL) with Pillow as fallback.

    Pillow handles CMYK/YCCK files, YCbCr output and machines without simplejpeg. Output is
    bit-identical to Pillow's (and DALI's) libjpeg-turbo decode.
    """

    name = "jpeg"
    _COLORSPACES: ClassVar[dict[ImageType, str]] = {
        ImageType.RGB: "RGB",
        ImageType.BGR: "BGR",
        ImageType.GRAY: "GRAY",
    }

    def _header(self, data: Any) -> tuple[int, int, str, int] | None:
        """``(height, width, colorspace, orientation)`` from the header (raw orientation), or
        None without simplejpeg. Plain frame headers are read in Python, which is faster than
        a call into libjpeg and keeps the GIL (a short release costs a wait for it when
        another thread holds it); anything else (no or an empty frame, an unusual component
        count) goes to libjpeg, which gives the exact error."""
        if _simplejpeg is None:
            return None
        frame, orientation = _scan_jpeg(data)
        if not self.adjust_orientation:
            orientation = 1
        if frame is not None and frame[0] > 0 and frame[1] > 0 and frame[2] in _COLORSPACE_OF:
            self.check_size(frame[0], frame[1], frame[2])
            return frame[0], frame[1], _COLORSPACE_OF[frame[2]], orientation
        try:
            height, width, colorspace, _ = _simplejpeg.decode_jpeg_header(data)
        except ValueError as exc:
            raise ValueError(f"corrupt JPEG header: {exc}") from None
        self.check_size(height, width, 1 if colorspace == "Gray" else 3)
        return height, width, colorspace, orientation

    def probe(self, data: Any) -> JpegProbe:
        """What the header says: the decoded shape and whether :meth:`decode_resampled` applies."""
        header = self._header(data)
        if header is None:
            return JpegProbe(super().shape(data), direct=False)
        height, width, colorspace, orientation = header
        channels = 1 if colorspace == "Gray" else 3
        shape = (*_swap_for(orientation, height, width), channels)
        return JpegProbe(shape, direct=orientation == 1 and colorspace not in ("CMYK", "YCCK"))

    def shape(self, data: Any) -> tuple[int, int, int]:
        """Shape from the JPEG header."""
        return self.probe(data).shape

    def _fast_colorspace(
        self, header: tuple[int, int, str, int] | None, output_type: ImageType
    ) -> str | None:
        """simplejpeg's colour space for ``output_type`` given the :meth:`_header`, or None
        when the file needs Pillow."""
        if header is None or header[2] in ("CMYK", "YCCK"):
            return None
        if output_type == ImageType.ANY_DATA:
            return "GRAY" if header[2] == "Gray" else "RGB"
        return self._COLORSPACES.get(output_type)

    def decode(self, data: Any, output_type: ImageType, roi: Roi | None = None) -> np.ndarray:
        """Decode (simplejpeg when it can produce ``output_type``, else Pillow); a file too
        short for the size it declares is refused first (:func:`check_jpeg_entropy`)."""
        header = self._header(data)
        check_jpeg_entropy(data)
        colorspace = self._fast_colorspace(header, output_type)
        if header is None or colorspace is None:
            return super().decode(data, output_type, roi)
        orientation = header[3]
        region = self._decode_region(data, colorspace, roi, orientation, self.fast_idct)
        if region is not None:
            return region
        try:
            array = self._simplejpeg_decode(data, colorspace, self.fast_idct)
        except _TurboJpegLimit:  # an unusual chroma subsampling: libjpeg itself decodes it
            array = self._libjpeg_decode(data, colorspace, header[:2])
            if array is None:
                return super().decode(data, output_type, roi)
        if array.ndim == 2:
            array = array[:, :, None]
        return _crop(apply_orientation(array, orientation), roi)

    def _libjpeg_decode(
        self, data: Any, colorspace: str, size: tuple[int, int]
    ) -> np.ndarray | None:
        """The whole image (``size``: height, width as stored) decoded by libjpeg-turbo through
        feedline's region decoder, which takes any chroma subsampling; None without it."""
        gray = colorspace == "GRAY"
        full = (0, 0, size[0], size[1])
        try:
            array = decode_jpeg_region(data, full, "GRAY" if gray else "RGB", self.fast_idct)
        except ValueError as exc:
            raise ValueError(f"corrupt or truncated JPEG data: {exc}") from None
        if array is not None and colorspace == "BGR":
            array = np.ascontiguousarray(array[:, :, ::-1])
        return array

    @staticmethod
    def _decode_region(
        data: Any, colorspace: str, roi: Roi | None, orientation: int, fast_idct: bool
    ) -> np.ndarray | None:
        """Only ``roi``, decoded by libjpeg-turbo when feedline's region decoder is built (the
        pixels of a full decode); None when there is no region, the file is rotated, or the
        decoder is unavailable."""
        if roi is None or orientation != 1 or colorspace not in ("RGB", "GRAY"):
            return None
        try:
            return decode_jpeg_region(data, roi, colorspace, fast_idct)
        except ValueError as exc:
            raise ValueError(f"corrupt or truncated JPEG data: {exc}") from None

    @staticmethod
    def _simplejpeg_decode(data: Any, colorspace: str, fast_idct: bool) -> np.ndarray:
        """simplejpeg's decode (TurboJPEG's API).

        Raises:
            _TurboJpegLimit: a chroma subsampling the TurboJPEG API does not name (libjpeg
                decodes it).
            ValueError: corrupt data.
        """
        try:
            return _simplejpeg.decode_jpeg(data, colorspace, fastdct=fast_idct, strict=True)
        except ValueError as exc:
            if _SUBSAMPLING_UNKNOWN in str(exc):
                raise _TurboJpegLimit from None
            damage = str(exc)
        try:  # a libjpeg warning is recoverable: decode as libjpeg recovers, and say so
            image = _simplejpeg.decode_jpeg(data, colorspace, fastdct=fast_idct, strict=False)
        except ValueError as exc:
            raise ValueError(f"corrupt or truncated JPEG data: {exc}") from None
        warn_corrupt_data(f"corrupt JPEG data: {damage}")
        return image

    def decode_resampled(
        self,
        data: Any,
        probe: JpegProbe,
        out: np.ndarray,
        source: Source,
        filter_ids: tuple[int, int],
        antialias: bool,
        normalization: Normalization | None = None,
        window: tuple[int, int, int, int] | None = None,
    ) -> bool:
        """Resample ``source`` of the decoded RGB image into ``out`` (then normalise it into the
        float ``out`` with a ``normalization``) in one compiled call that decodes only the pixels
        it reads; False when this file (``probe``, from :meth:`probe`) or machine needs the
        general path (rotated or CMYK file, no region decoder). With a ``window``
        ``(y, x, h, w)`` the image is that window (``source`` relative to it, edges clamped to
        it)."""
        if not probe.direct or self.fast_idct:
            return False
        check_jpeg_entropy(data)
        y, x, h, w = window if window is not None else (0, 0, *probe.shape[:2])
        try:
            return decode_jpeg_resampled(
                data, (h, w), out, source, filter_ids, antialias, normalization, (y, x)
            )
        except ValueError as exc:
            raise ValueError(f"corrupt or truncated JPEG data: {exc}") from None
