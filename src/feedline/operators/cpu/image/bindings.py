"""Python bindings of the image family's compiled kernels: the resampler and normaliser of
``feedline_cpu.c`` and the region JPEG decoder of ``feedline_jpeg.c``.

The libraries are built on first use by :mod:`feedline.core.native`. Each wrapper returns
False (or None) when its library is unavailable or the arrays' memory layout does not suit the
kernel, and the caller then takes its NumPy/Pillow path, which computes the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.kernel import warn_corrupt_data
from feedline.operators.cpu.image.windows import Source
from feedline.operators.native.libraries import CPU_LIBRARY, JPEG_LIBRARY

__all__ = [
    "Normalization",
    "axis_weights_native",
    "decode_jpeg_region",
    "decode_jpeg_resampled",
    "normalize_u8",
    "resample_u8",
]

_JPEG_FORMATS = {"RGB": (0, 3), "GRAY": (1, 1)}
#: Flag of ``fl_jpeg_decode_region``'s format: libjpeg's fast integer inverse DCT.
_FAST_IDCT = 2


@dataclass(frozen=True)
class Normalization:
    """What :func:`normalize_u8` does to a resampled image (``crop_mirror_normalize`` without a
    crop).

    Attributes:
        gain: ``C`` float32 gains.
        centre: ``C`` float32 centres (``out = (pixel - centre) * gain``).
        mirror: flip horizontally.
        planar: write ``CHW`` instead of ``HWC``.
        fill: the value of padding channels.
    """

    gain: np.ndarray
    centre: np.ndarray
    mirror: bool
    planar: bool
    fill: float


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def _pointer(ffi: Any, ctype: str, array: np.ndarray) -> Any:
    """A ``ctype *`` to the first element of ``array`` (cheapest through the buffer protocol
    for contiguous arrays; strided views go through their address)."""
    if array.flags.c_contiguous:
        return ffi.from_buffer(f"{ctype}[]", array)
    return ffi.cast(f"{ctype} *", _address(array))


def _float_pointer(ffi: Any, values: Any) -> Any:
    """A ``float *`` to ``values`` as contiguous float32 (converted when they are not)."""
    return _pointer(ffi, "float", np.ascontiguousarray(values, dtype=np.float32))


def _call_decoder(ffi: Any, function: Any, *args: Any) -> None:
    """Call a ``fl_jpeg_*`` entry point, which takes an error buffer and its size last; a
    recoverable corruption it decoded through is warned about (:func:`warn_corrupt_data`).

    Raises:
        ValueError: the call failed; the message is the decoder's.
    """
    error = ffi.new("char[]", 200)
    status = function(*args, error, len(error))
    if status < 0:
        raise ValueError(ffi.string(error).decode(errors="replace"))
    if status > 0:
        warn_corrupt_data(f"corrupt JPEG data: {ffi.string(error).decode(errors='replace')}")


def _interleaved(image: np.ndarray) -> bool:
    """Whether ``image`` (``HW`` or ``HWC`` uint8) has dense pixels: channels adjacent, pixels
    adjacent within a row (rows may be strided)."""
    if image.dtype != np.uint8 or image.ndim not in (2, 3):
        return False
    channels = image.shape[2] if image.ndim == 3 else 1
    if image.ndim == 3 and channels > 1 and image.strides[2] != 1:
        return False
    return image.shape[1] <= 1 or image.strides[1] == channels


def axis_weights_native(
    in_size: int,
    out_size: int,
    start: float,
    end: float,
    filter_id: int,
    antialias: bool,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The taps of one axis as ``resample.axis_weights`` defines them, computed in C: ``(first,
    weights)`` as int32 ``(out,)`` and float32 ``(out, K)``; None without the library."""
    loaded = CPU_LIBRARY.try_load()
    if loaded is None:
        return None
    ffi, lib = loaded
    antialias = bool(antialias)
    max_taps = lib.fl_axis_max_taps(in_size, out_size, start, end, filter_id, antialias)
    first = np.empty(out_size, np.int32)
    weights = np.empty(out_size * max_taps, np.float32)
    taps = lib.fl_axis_weights(
        in_size,
        out_size,
        float(start),
        float(end),
        filter_id,
        antialias,
        max_taps,
        _pointer(ffi, "int32_t", first),
        _pointer(ffi, "float", weights),
    )
    if taps == -2:
        raise MemoryError("resample: out of memory computing filter weights")
    if taps < 0:
        raise AssertionError(f"fl_axis_weights needs more than {max_taps} taps")
    return first, weights[: out_size * taps].reshape(out_size, taps)


def resample_u8(
    image: np.ndarray,
    out: np.ndarray,
    row_first: np.ndarray,
    row_weights: np.ndarray,
    col_first: np.ndarray,
    col_weights: np.ndarray,
) -> bool:
    """Separable resampling of an 8-bit image into ``out``; False if it could not run here.

    Args:
        image: ``HW`` or ``HWC`` uint8 source (copied first unless its pixels are dense).
        out: ``(out_h, out_w[, C'])`` uint8 destination with ``C' <= C`` (extra source channels
            are dropped, e.g. the X of RGBX).
        row_first: int32 ``(out_h,)`` first source row of each output row.
        row_weights: float32 ``(out_h, K)`` weights of rows ``first .. first + K - 1``.
        col_first: int32 ``(out_w,)`` first source column of each output column.
        col_weights: float32 ``(out_w, K')`` weights of those columns.
    """
    if image.dtype != np.uint8 or not _interleaved(out):
        return False
    if not _interleaved(image):
        image = np.ascontiguousarray(image)
    channels = image.shape[2] if image.ndim == 3 else 1
    out_channels = out.shape[2] if out.ndim == 3 else 1
    if out_channels > channels:
        return False
    if min(out.shape[:2]) == 0:
        return True
    loaded = CPU_LIBRARY.try_load()
    if loaded is None:
        return False
    ffi, lib = loaded
    left = int(col_first.min())
    span = int(col_first.max()) + col_weights.shape[1] - left
    col_first = np.ascontiguousarray(col_first - left, dtype=np.int32)
    row_first = np.ascontiguousarray(row_first, dtype=np.int32)
    row_weights = np.ascontiguousarray(row_weights, dtype=np.float32)
    col_weights = np.ascontiguousarray(col_weights, dtype=np.float32)
    status = lib.fl_resample_u8(
        ffi.cast("const uint8_t *", _address(image) + left * channels),
        image.strides[0],
        channels,
        span,
        _pointer(ffi, "uint8_t", out),
        out.strides[0],
        out.shape[0],
        out.shape[1],
        out_channels,
        _pointer(ffi, "int32_t", row_first),
        row_weights.shape[1],
        _pointer(ffi, "float", row_weights),
        _pointer(ffi, "int32_t", col_first),
        col_weights.shape[1],
        _pointer(ffi, "float", col_weights),
    )
    if status != 0:
        raise MemoryError("resample: out of memory for a scratch row")
    return True


def normalize_u8(
    window: np.ndarray,
    out: np.ndarray,
    gain: np.ndarray,
    centre: np.ndarray,
    mirror: bool,
    planar: bool,
    fill: float,
) -> bool:
    """``out = (window - centre) * gain`` per channel, mirrored and/or made planar; False if it
    could not run here.

    Args:
        window: ``HWC`` uint8 window (rows may be strided).
        out: contiguous float32 ``(C', H, W)`` when ``planar`` else ``(H, W, C')``, ``C' >= C``;
            channels past ``C`` are set to ``fill``.
        gain: ``C`` float32 gains.
        centre: ``C`` float32 centres.
        mirror: flip the window horizontally.
        planar: write ``CHW`` instead of ``HWC``.
        fill: the value of padding channels.
    """
    if not (window.ndim == 3 and _interleaved(window)):
        return False
    if out.dtype != np.float32 or not out.flags.c_contiguous:
        return False
    loaded = CPU_LIBRARY.try_load()
    if loaded is None:
        return False
    ffi, lib = loaded
    height, width, channels = window.shape
    out_channels = out.shape[0] if planar else out.shape[2]
    if height and width:
        lib.fl_normalize_u8(
            _pointer(ffi, "uint8_t", window),
            window.strides[0],
            height,
            width,
            channels,
            int(bool(mirror)),
            _float_pointer(ffi, gain),
            _float_pointer(ffi, centre),
            _pointer(ffi, "float", out),
            int(bool(planar)),
            out_channels,
            float(fill),
        )
    return True


def decode_jpeg_region(
    data: Any, roi: tuple[int, int, int, int], colorspace: str, fast_idct: bool = False
) -> np.ndarray | None:
    """Decode only ``roi = (y0, x0, y1, x1)`` (raw orientation) of a JPEG; None without the
    library.

    Args:
        data: the encoded bytes (any buffer).
        roi: the region, inside the image.
        colorspace: ``"RGB"`` or ``"GRAY"``.
        fast_idct: use libjpeg's fast integer inverse DCT (the pixels of a full decode with it).

    Raises:
        ValueError: corrupt or truncated data, a CMYK file, or a region outside the image (the
            decoder's message).
    """
    loaded = JPEG_LIBRARY.try_load()
    if loaded is None:
        return None
    ffi, lib = loaded
    y0, x0, y1, x1 = roi
    fmt, channels = _JPEG_FORMATS[colorspace]
    if fast_idct:
        fmt |= _FAST_IDCT
    out = np.empty((y1 - y0, x1 - x0, channels), np.uint8)
    source = ffi.from_buffer(data)
    _call_decoder(
        ffi,
        lib.fl_jpeg_decode_region,
        source,
        len(source),
        y0,
        x0,
        y1 - y0,
        x1 - x0,
        fmt,
        _pointer(ffi, "uint8_t", out),
        out.strides[0],
    )
    return out


def decode_jpeg_resampled(
    data: Any,
    shape: tuple[int, int],
    out: np.ndarray,
    source: Source,
    filter_ids: tuple[int, int],
    antialias: bool,
    normalization: Normalization | None = None,
    origin: tuple[int, int] = (0, 0),
) -> bool:
    """Resample ``source`` of a JPEG (raw orientation) into the RGB uint8 ``out``, decoding
    only the pixels the filters read; False without the library.

    ``shape`` is the decoded size, or that of a window at ``origin``: then ``source`` is relative
    to the window and the filters clamp to its edges (as if only the window was decoded).

    ``filter_ids`` are ``fl_axis_weights``' filter numbers for the rows and the columns. The
    result equals decoding the whole image and resampling it with the compiled resampler. With
    a ``normalization``, ``out`` is the contiguous float32 ``(C', H, W)`` (planar) or
    ``(H, W, C')``, ``C' >= 3``, that :func:`normalize_u8` makes of the resampled image.

    Raises:
        ValueError: corrupt or truncated data, or a CMYK file (the decoder's message).
    """
    if normalization is None:
        if out.dtype != np.uint8 or out.ndim != 3 or out.shape[2] != 3 or not _interleaved(out):
            return False
        out_h, out_w = out.shape[:2]
    else:
        if out.dtype != np.float32 or out.ndim != 3 or not out.flags.c_contiguous:
            return False
        if normalization.planar:
            out_channels, out_h, out_w = out.shape
        else:
            out_h, out_w, out_channels = out.shape
        if out_channels < 3:
            return False
    loaded = JPEG_LIBRARY.try_load()
    if loaded is None:
        return False
    ffi, lib = loaded
    (y0, y1), (x0, x1) = source
    encoded = ffi.from_buffer(data)
    resample = (
        encoded,
        len(encoded),
        origin[0],
        origin[1],
        shape[0],
        shape[1],
        y0,
        y1,
        x0,
        x1,
        filter_ids[0],
        filter_ids[1],
        int(bool(antialias)),
    )
    if normalization is None:
        _call_decoder(
            ffi,
            lib.fl_jpeg_decode_resample,
            *resample,
            _pointer(ffi, "uint8_t", out),
            out.strides[0],
            out_h,
            out_w,
        )
        return True
    _call_decoder(
        ffi,
        lib.fl_jpeg_decode_resample_normalize,
        *resample,
        out_h,
        out_w,
        _float_pointer(ffi, normalization.gain),
        _float_pointer(ffi, normalization.centre),
        int(bool(normalization.mirror)),
        int(bool(normalization.planar)),
        out_channels,
        float(normalization.fill),
        _pointer(ffi, "float", out),
    )
    return True
