"""Building and opening the GPU plugin's kernels: nvcc into one cached ``.so``, opened with cffi.

The ``.cu`` files in ``kernels/`` and the header ``kernels/feedline_gpu.h`` (plain ``extern "C"``
declarations, which cffi reads in ABI mode) are compiled in two ways, both through the cache of
:mod:`feedline.core.native` (keyed by the sources' hash, the compiler's version and flags):

* :func:`cuda_library`: nvcc, one fat binary with SASS for every architecture the installed nvcc
  supports from ``sm_75`` up, plus PTX of the newest (so newer GPUs JIT it); the CUDA runtime is
  linked statically, so opening the library needs no GPU and no ``libcudart``.
* :func:`host_library`: the same sources compiled as C++ with ``FLG_HOST_EMULATION``: each
  kernel runs on the CPU over the whole grid. Tests use it to compare every GPU kernel's
  arithmetic with the CPU kernels on machines without a GPU.

Environment:
    ``FEEDLINE_CUDA_LIB``: a prebuilt CUDA library to open instead of building one.
    ``FEEDLINE_NVCC``: the nvcc to use (default: ``nvcc`` on ``PATH``, then
    ``$CUDA_HOME/bin/nvcc``, ``$CUDA_PATH/bin/nvcc``, ``/usr/local/cuda/bin/nvcc``).
    ``FEEDLINE_CUDA_ARCHS``: compute capabilities to build, e.g. ``75,90`` (default: all the
    installed nvcc supports from 75 up).
    ``CXX``: the C++ compiler of the host-emulation library (default ``c++``, ``g++``,
    ``clang++``).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from feedline.core.native import NativeBuildError, cached_build, open_library

__all__ = [
    "HEADER",
    "SOURCES",
    "GpuUnavailableError",
    "cuda_archs",
    "cuda_library",
    "cuda_library_path",
    "find_nvcc",
    "host_library",
    "host_library_path",
    "nvcc_command",
]

KERNELS = Path(__file__).resolve().parent / "kernels"
HEADER = KERNELS / "feedline_gpu.h"
SOURCES = tuple(sorted(KERNELS.glob("*.cu")))
_INPUTS = (*SOURCES, HEADER, *sorted(KERNELS.glob("*.cuh")))
_NVCC_FLAGS = (
    "-std=c++17",
    "-O3",
    "--fmad=false",
    "--cudart=static",
    "-shared",
    "-Xcompiler",
    "-fPIC",
    "-diag-suppress",
    "186",
)
_HOST_FLAGS = (
    "-std=c++17",
    "-O2",
    "-ffp-contract=off",
    "-fno-math-errno",
    "-fPIC",
    "-shared",
    "-DFLG_HOST_EMULATION",
)
_MIN_ARCH = 75
DEFAULT_NVCC = Path("/usr/local/cuda/bin/nvcc")


class GpuUnavailableError(NativeBuildError):
    """The GPU kernels cannot be built or opened here; the message lists what was tried."""


def find_nvcc() -> str:
    """The nvcc executable.

    Raises:
        GpuUnavailableError: none found (the message lists every place looked at).
    """
    configured = os.environ.get("FEEDLINE_NVCC")
    if configured:
        found = shutil.which(configured)
        if found:
            return found
        raise GpuUnavailableError(
            f"FEEDLINE_NVCC={configured} is not an executable nvcc; fix or unset it"
        )
    tried = ["FEEDLINE_NVCC (unset)"]
    found = shutil.which("nvcc")
    if found:
        return found
    tried.append("nvcc on PATH")
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(variable)
        candidate = Path(root) / "bin" / "nvcc" if root else None
        tried.append(f"${variable}/bin/nvcc" + ("" if root else " (unset)"))
        if candidate is not None and os.access(candidate, os.X_OK):
            return str(candidate)
    tried.append(str(DEFAULT_NVCC))
    if os.access(DEFAULT_NVCC, os.X_OK):
        return str(DEFAULT_NVCC)
    raise GpuUnavailableError(
        "no CUDA compiler (nvcc) to build feedline's GPU kernels; tried "
        + ", ".join(tried)
        + ". Install the CUDA toolkit, or set FEEDLINE_CUDA_LIB to a prebuilt library "
        "(`feedline build-kernels` on a machine with nvcc prints its path)"
    )


def _run(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    except (OSError, subprocess.SubprocessError) as error:
        raise GpuUnavailableError(f"{shlex.join(argv)} failed: {error}") from None
    return done.stdout


@functools.cache
def _nvcc_version(nvcc: str) -> str:
    return _run([nvcc, "--version"])


@functools.cache
def _listed_archs(nvcc: str) -> tuple[int, ...]:
    return tuple(
        sorted({int(a) for a in re.findall(r"compute_(\d+)", _run([nvcc, "--list-gpu-arch"]))})
    )


def cuda_archs(nvcc: str) -> tuple[int, ...]:
    """The compute capabilities to build (``FEEDLINE_CUDA_ARCHS``, else every one the nvcc
    supports from 7.5 up, read from ``nvcc --list-gpu-arch``).

    Raises:
        GpuUnavailableError: a malformed ``FEEDLINE_CUDA_ARCHS``, or no architecture left.
    """
    configured = os.environ.get("FEEDLINE_CUDA_ARCHS", "").strip()
    if configured:
        try:
            archs = sorted({int(a) for a in re.split(r"[,\s]+", configured) if a})
        except ValueError:
            raise GpuUnavailableError(
                f"FEEDLINE_CUDA_ARCHS={configured!r}: expected numbers such as '75,90'"
            ) from None
    else:
        archs = list(_listed_archs(nvcc))
    archs = [a for a in archs if a >= _MIN_ARCH]
    if not archs:
        raise GpuUnavailableError(f"{nvcc} supports no GPU architecture from sm_{_MIN_ARCH} up")
    return tuple(archs)


def nvcc_command(nvcc: str, archs: tuple[int, ...], output: str) -> list[str]:
    """The nvcc command line that builds the CUDA library into ``output``."""
    gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    gencode.append(f"-gencode=arch=compute_{archs[-1]},code=compute_{archs[-1]}")
    return [
        nvcc,
        *_NVCC_FLAGS,
        *gencode,
        f"-I{KERNELS}",
        "-o",
        output,
        *map(str, SOURCES),
    ]


def cuda_library_path() -> Path:
    """The CUDA library: ``FEEDLINE_CUDA_LIB``, else built with nvcc into the cache (minutes
    the first time: one compilation per architecture).

    Raises:
        GpuUnavailableError: ``FEEDLINE_CUDA_LIB`` names no file, or there is no nvcc.
        NativeBuildError: nvcc failed (its output is in the message).
    """
    configured = os.environ.get("FEEDLINE_CUDA_LIB")
    if configured:
        path = Path(configured).expanduser()
        if not path.is_file():
            raise GpuUnavailableError(f"FEEDLINE_CUDA_LIB={configured} is not a file")
        return path
    nvcc = find_nvcc()
    archs = cuda_archs(nvcc)
    key = [_nvcc_version(nvcc), " ".join(_NVCC_FLAGS), " ".join(map(str, archs))]
    return cached_build(
        "feedline_gpu", _INPUTS, key, lambda out: nvcc_command(nvcc, archs, out), timeout=3600
    )


def _cxx() -> list[str]:
    configured = os.environ.get("CXX")
    if configured:
        return shlex.split(configured)
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return [path]
    raise GpuUnavailableError("no C++ compiler for the host emulation: install g++ or set CXX")


def host_library_path() -> Path:
    """The host-emulation library, built with the C++ compiler into the cache."""
    cxx = _cxx()
    key = [_run([*cxx, "--version"]), " ".join(_HOST_FLAGS)]

    def command(out: str) -> list[str]:
        return [*cxx, *_HOST_FLAGS, f"-I{KERNELS}", "-o", out, "-x", "c++", *map(str, SOURCES)]

    return cached_build("feedline_gpu_host", _INPUTS, key, command, timeout=1800)


class _Loaded:
    """One library opened on first use; a failure is remembered and raised again."""

    def __init__(self, name: str, path: Callable[[], Path]) -> None:
        self._name, self._path = name, path
        self._lock = threading.Lock()
        self._value: tuple[Any, Any] | None = None
        self._error: NativeBuildError | None = None

    def __call__(self) -> tuple[Any, Any]:
        with self._lock:
            if self._value is None:
                if self._error is not None:
                    raise self._error
                try:
                    self._value = open_library(self._name, HEADER, self._path)
                except NativeBuildError as error:
                    self._error = error
                    raise
            return self._value


cuda_library = _Loaded("feedline_gpu", cuda_library_path)
"""``(ffi, lib)`` of the CUDA library (built on first use)."""

host_library = _Loaded("feedline_gpu_host", host_library_path)
"""``(ffi, lib)`` of the host-emulation library (built on first use)."""
