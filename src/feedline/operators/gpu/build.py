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

The CUDA library is looked for in this order (:func:`cuda_library_path`): ``FEEDLINE_CUDA_LIB``;
a prebuilt one from an installed ``feedline-cuda12`` / ``feedline-cuda13`` distribution
(:func:`prebuilt_cuda_library`: a ``feedline.plugins`` entry point named ``gpu-kernels…``,
built from the same kernel sources); else nvcc builds it into the cache.

Environment:
    ``FEEDLINE_CUDA_LIB``: a prebuilt CUDA library to open instead of building one.
    ``FEEDLINE_PREBUILT=0``: ignore installed ``feedline-cuda*`` distributions.
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
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from feedline.core.native import NativeBuildError, cached_build, cached_path, open_library
from feedline.core.native.prebuilt import prebuilt_enabled, source_digest
from feedline.core.plugins import ENTRY_POINT_GROUP

__all__ = [
    "HEADER",
    "KERNELS_ENTRY_POINT_PREFIX",
    "SOURCES",
    "GpuUnavailableError",
    "PrebuiltCuda",
    "cuda_archs",
    "cuda_library",
    "cuda_library_path",
    "cuda_library_status",
    "find_nvcc",
    "host_library",
    "host_library_path",
    "kernel_digest",
    "nvcc_command",
    "prebuilt_cuda_library",
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
#: ``feedline.plugins`` entry points whose name starts with this hold prebuilt CUDA kernels.
KERNELS_ENTRY_POINT_PREFIX = "gpu-kernels"


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


def kernel_digest() -> str:
    """The sha256 of the kernel sources and headers: what a prebuilt library must match."""
    return source_digest(_INPUTS)


@dataclass(frozen=True)
class PrebuiltCuda:
    """A prebuilt CUDA library from an installed ``feedline-cuda*`` distribution.

    Attributes:
        path: the library.
        distribution: the distribution's name (``feedline-cuda13``).
        build: its ``build.json`` (``cuda_major``, ``archs``, ``ptx``, ``nvcc``, ``digest``).
    """

    path: Path
    distribution: str
    build: dict


def _driver_major() -> int | None:
    """The CUDA major version the driver supports (through CuPy), None where unknown."""
    try:
        import cupy

        return int(cupy.cuda.runtime.driverGetVersion()) // 1000
    except Exception:  # no CuPy, no driver: any prebuilt library may be chosen
        return None


def prebuilt_cuda_library() -> PrebuiltCuda | None:
    """The installed prebuilt CUDA library built from these kernel sources, if any.

    Among several (``feedline-cuda12`` and ``-cuda13``), the newest CUDA major the driver
    supports (every one where the driver cannot be asked). None with ``FEEDLINE_PREBUILT=0``.
    """
    if not prebuilt_enabled():
        return None
    digest, found = kernel_digest(), []
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if not entry.name.startswith(KERNELS_ENTRY_POINT_PREFIX):
            continue
        try:
            module = entry.load()
            build, path = dict(module.BUILD), Path(module.LIBRARY)
        except Exception:  # a broken distribution: the plugin system reports it too
            continue
        if build.get("digest") == digest and path.is_file():
            dist = entry.dist.metadata["Name"] if entry.dist is not None else entry.value
            found.append(PrebuiltCuda(path, dist, build))
    driver = _driver_major() if len(found) > 1 else None
    usable = [p for p in found if driver is None or int(p.build.get("cuda_major", 0)) <= driver]
    return max(usable, key=lambda p: int(p.build.get("cuda_major", 0)), default=None)


def cuda_library_status() -> str:
    """Which CUDA library the GPU operators would open, in words, without building it."""
    configured = os.environ.get("FEEDLINE_CUDA_LIB")
    if configured:
        return f"FEEDLINE_CUDA_LIB ({configured})"
    prebuilt = prebuilt_cuda_library()
    if prebuilt is not None:
        archs = ", ".join(f"sm_{a}" for a in prebuilt.build.get("archs", []))
        return f"prebuilt ({prebuilt.distribution}: {archs} + PTX compute_{prebuilt.build['ptx']})"
    try:
        nvcc = find_nvcc()
        path = cached_path("feedline_gpu", _INPUTS, _cuda_key(nvcc, cuda_archs(nvcc)))
    except NativeBuildError as error:
        return (
            "unavailable — GPU operators cannot run; install the prebuilt kernels "
            f"(pip install feedline-cuda13, or feedline-cuda12 for CUDA 12 drivers): {error}"
        )
    if path.is_file():
        return f"compiled here ({path})"
    return f"not built yet — nvcc ({nvcc}) compiles it on first use (minutes)"


def _cuda_key(nvcc: str, archs: tuple[int, ...]) -> list[str]:
    return [_nvcc_version(nvcc), " ".join(_NVCC_FLAGS), " ".join(map(str, archs))]


def cuda_library_path() -> Path:
    """The CUDA library: ``FEEDLINE_CUDA_LIB``, else an installed prebuilt one
    (:func:`prebuilt_cuda_library`), else built with nvcc into the cache (minutes the first
    time: one compilation per architecture).

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
    prebuilt = prebuilt_cuda_library()
    if prebuilt is not None:
        return prebuilt.path
    nvcc = find_nvcc()
    archs = cuda_archs(nvcc)
    return cached_build(
        "feedline_gpu",
        _INPUTS,
        _cuda_key(nvcc, archs),
        lambda out: nvcc_command(nvcc, archs, out),
        timeout=3600,
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
