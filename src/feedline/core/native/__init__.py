"""Compiled code for any plugin: build C or CUDA sources into a cached ``.so``, open it with cffi.

The built-in CPU kernels, the COCO reader's polygon parser, the GPU plugin's CUDA kernels and
third-party plugins all build through this one module, so they share one cache, one set of
environment variables and one error type.

- :mod:`~feedline.core.native.build`: compile sources with a :class:`Compiler` (cc, nvcc…) into
  a ``.so`` cached by source hash, compiler version and flags (:func:`build_library`), or any
  command line through the same cache (:func:`cached_build`).
- :mod:`~feedline.core.native.library`: :class:`NativeLibrary`, a library built on first use and
  opened with cffi (:func:`open_library`), with a fallback when it cannot be.
- :mod:`~feedline.core.native.prebuilt`: the libraries a binary wheel carries prebuilt, chosen
  for this CPU's features.

Importing this package loads only the standard library (cffi is imported when a library opens).
It sits in the core's bottom layer: it imports nothing else from feedline.
"""

from feedline.core.native.build import (
    C_COMPILER,
    Compiler,
    NativeBuildError,
    build_library,
    cache_dir,
    cached_build,
    cached_path,
)
from feedline.core.native.library import (
    COMPILED,
    FAST_PATH_HINT,
    PREBUILT,
    UNAVAILABLE,
    NativeLibrary,
    native_enabled,
    open_library,
)

__all__ = [
    "COMPILED",
    "C_COMPILER",
    "FAST_PATH_HINT",
    "PREBUILT",
    "UNAVAILABLE",
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
