"""The C sources of the CPU kernels and the libraries built from them.

- ``feedline_cpu.c``: the resampler and the normaliser;
- ``feedline_crops.c``: ``ssd_random_crop``'s window search and box cropping, ``multi_paste``'s
  region copies;
- ``feedline_points.c``: ``coord_transform``'s affine map of float32 points;
- ``feedline_histogram.c``: ``equalize``'s per-channel histogram equalization;
- ``feedline_filter.c``: ``filter``'s correlation of 8-bit images (AVX2 and FMA builds);
- ``feedline_jpeg.c``: region-of-interest JPEG decoding with libjpeg(-turbo), resampled and
  normalised on the fly;
- :mod:`~feedline.operators.native.libraries`: :data:`CPU_LIBRARY` and :data:`JPEG_LIBRARY`,
  built on first use by the core's build module (:mod:`feedline.core.native`), which the GPU
  plugin's nvcc build uses too.

Importing this package loads only the standard library (cffi is imported when a library opens).
"""

from feedline.operators.native.libraries import CPU_LIBRARY, JPEG_LIBRARY

__all__ = ["CPU_LIBRARY", "JPEG_LIBRARY"]
