"""Native code: the C sources of the CPU kernels and the one build module every native build
uses (the C kernels here and the GPU plugin's CUDA kernels).

- :mod:`~feedline.operators.native.build`: compile sources with a :class:`Compiler` (cc, nvcc…)
  into a ``.so`` cached by source hash, compiler version and flags (:func:`build_library`), or
  any command line through the same cache (:func:`cached_build`).
- :mod:`~feedline.operators.native.library`: :class:`NativeLibrary`, a library built on first use
  and opened with cffi (:func:`open_library`).
- :mod:`~feedline.operators.native.libraries`: the CPU libraries (``feedline_cpu.c``,
  ``feedline_jpeg.c``).

Importing this package loads only the standard library (cffi is imported when a library opens).
"""

from feedline.operators.native.build import (
    C_COMPILER,
    Compiler,
    NativeBuildError,
    build_library,
    cache_dir,
    cached_build,
    cached_path,
)
from feedline.operators.native.libraries import CPU_LIBRARY, JPEG_LIBRARY
from feedline.operators.native.library import NativeLibrary, native_enabled, open_library

__all__ = [
    "CPU_LIBRARY",
    "C_COMPILER",
    "JPEG_LIBRARY",
    "Compiler",
    "NativeBuildError",
    "NativeLibrary",
    "build_library",
    "cache_dir",
    "cached_build",
    "cached_path",
    "native_enabled",
    "open_library",
]
