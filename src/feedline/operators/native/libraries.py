"""The compiled CPU libraries, built from the C sources beside this module.

``feedline_cpu`` holds the resampler and the normaliser (``feedline_cpu.c``),
``ssd_random_crop``'s and ``multi_paste``'s kernels (``feedline_crops.c``),
``coord_transform``'s point map (``feedline_points.c``), the speech front end's spectrogram,
pre-emphasis, mel filter bank and decibels (``feedline_audio.c``), ``equalize``'s histogram
equalization (``feedline_histogram.c``), ``filter``'s 8-bit correlation (``feedline_filter.c``),
``clahe``'s tiled equalization (``feedline_clahe.c``) and colour conversions
(``feedline_lab.c``) and ``experimental.warp_perspective``'s bilinear warp of 8-bit images
(``feedline_warp.c``);
``feedline_jpeg`` (``feedline_jpeg.c`` with ``feedline_cpu.c``) decodes JPEG regions with
libjpeg(-turbo) and resamples/normalises them on the fly. Their Python bindings are the image
family's :mod:`feedline.operators.cpu.image.bindings`, the crops family's
:mod:`feedline.operators.cpu.crops.bindings`, the geometry family's
:mod:`feedline.operators.cpu.geometry.bindings`, the audio family's
:mod:`feedline.operators.cpu.audio.bindings`, the histogram family's
:mod:`feedline.operators.cpu.histogram.bindings`, the filters family's
:mod:`feedline.operators.cpu.filters.bindings` and the warps family's
:mod:`feedline.operators.cpu.warps.bindings`.
"""

from __future__ import annotations

from pathlib import Path

from feedline.core.native.library import NativeLibrary

__all__ = ["CPU_LIBRARY", "JPEG_LIBRARY"]

_HERE = Path(__file__).resolve().parent
# Measured with benchmarks/imagenet.py: the ResNet-50 train pipeline at 2.37x DALI CPU compiled,
# 1.08x with FEEDLINE_NATIVE=0.
_SLOWER = "about 2.2x slower (ResNet-50 train pipeline)"

#: Resampling and normalisation of 8-bit images; the SSD window search, region pasting and
#: the affine map of points; the spectrogram, pre-emphasis, mel filter bank and decibels; histogram
#: equalization; 8-bit 2-D filters; CLAHE; the perspective warp of 8-bit images.
CPU_LIBRARY = NativeLibrary(
    "feedline_cpu",
    [
        _HERE / "feedline_cpu.c",
        _HERE / "feedline_crops.c",
        _HERE / "feedline_points.c",
        _HERE / "feedline_audio.c",
        _HERE / "feedline_histogram.c",
        _HERE / "feedline_filter.c",
        _HERE / "feedline_clahe.c",
        _HERE / "feedline_lab.c",
        _HERE / "feedline_warp.c",
    ],
    _HERE / "feedline_cpu.h",
    fallback=_SLOWER,
)
#: Region-of-interest JPEG decoding; needs libjpeg(-turbo)'s headers (e.g. Debian's libjpeg-dev).
JPEG_LIBRARY = NativeLibrary(
    "feedline_jpeg",
    [_HERE / "feedline_jpeg.c", _HERE / "feedline_cpu.c"],
    _HERE / "feedline_jpeg.h",
    libraries=("jpeg", "pthread"),
    optional=True,
    includes=[_HERE / "feedline_cpu.h"],
    fallback=_SLOWER,
)
