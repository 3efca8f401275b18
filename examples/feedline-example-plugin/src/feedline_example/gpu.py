"""``example.posterize``'s GPU kernel: ``kernels/posterize.cu`` built with feedline's helpers.

feedline's GPU plugin provides what a third-party kernel needs: :func:`find_nvcc` and
:func:`cuda_archs` (which compiler, which GPU architectures), :func:`cached_build` (one build per
source hash, compiler and flags, in feedline's cache folder, safe between processes),
:func:`open_library` (cffi in ABI mode over the plain-C header) and :class:`Backend` (launches
with CuPy device pointers on the pipeline's CUDA stream). The same ``.cu`` also builds with a C++
compiler into a host library, so the tests compare the kernel with the NumPy one anywhere.

Environment: ``EXAMPLE_CUDA_LIB`` names a prebuilt CUDA library to open instead of building.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from feedline.core.native import cached_build, open_library
from feedline.operators.gpu.backend import Backend
from feedline.operators.gpu.base import GpuBatch, GpuKernel, Outputs
from feedline.operators.gpu.build import GpuUnavailableError, cuda_archs, find_nvcc

from feedline_example.posterize import check_bits, check_input

KERNELS = Path(__file__).resolve().parent / "kernels"
SOURCE = KERNELS / "posterize.cu"
HEADER = KERNELS / "posterize.h"
_NVCC_FLAGS = ("-std=c++17", "-O3", "--cudart=static", "-shared", "-Xcompiler", "-fPIC")
_HOST_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-x", "c++")


def _version(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def cuda_library_path() -> Path:
    """The CUDA library: ``EXAMPLE_CUDA_LIB``, else built with nvcc into feedline's cache.

    Raises:
        GpuUnavailableError: no nvcc (the message lists where it looked).
        NativeBuildError: nvcc failed (its output is in the message).
    """
    configured = os.environ.get("EXAMPLE_CUDA_LIB")
    if configured:
        return Path(configured)
    nvcc = find_nvcc()
    archs = cuda_archs(nvcc)
    gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    gencode.append(f"-gencode=arch=compute_{archs[-1]},code=compute_{archs[-1]}")
    key = [_version([nvcc, "--version"]), " ".join(_NVCC_FLAGS), " ".join(gencode)]

    def command(out: str) -> list[str]:
        return [nvcc, *_NVCC_FLAGS, *gencode, f"-I{KERNELS}", "-o", out, str(SOURCE)]

    return cached_build("feedline_example_gpu", (SOURCE, HEADER), key, command, timeout=1800)


def host_library_path() -> Path:
    """The host build of the same source (a C++ compiler instead of nvcc)."""
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        raise GpuUnavailableError("no C++ compiler for the host build: install g++ or set CXX")
    key = [_version([cxx, "--version"]), " ".join(_HOST_FLAGS)]

    def command(out: str) -> list[str]:
        return [cxx, *_HOST_FLAGS, f"-I{KERNELS}", "-o", out, str(SOURCE)]

    return cached_build("feedline_example_host", (SOURCE, HEADER), key, command)


@functools.cache
def _library(emulated: bool) -> tuple[Any, Any]:
    build = host_library_path if emulated else cuda_library_path
    return open_library("feedline_example_gpu", HEADER, build)


def backend_like(backend: Backend) -> Backend:
    """A backend running this package's library where ``backend`` runs feedline's."""
    ffi, lib = _library(backend.emulated)
    return Backend(backend.xp, ffi, lib, backend.emulated)


def posterize_batch(backend: Backend, samples: Sequence[Any], bits: Sequence[int]) -> list[Any]:
    """Posterize a batch of ``uint8`` device (or, emulated, host) arrays with one launch."""
    for sample in samples:
        check_input(sample.dtype)
    masks = [check_bits(b) for b in bits]
    samples = [backend.xp.ascontiguousarray(s) for s in samples]
    outputs = backend.output([tuple(s.shape) for s in samples], np.uint8)
    sizes = [int(s.size) for s in samples]
    backend.call(
        "example_posterize",
        len(samples),
        max(sizes, default=0),
        backend.asarray(sizes, np.int64),
        backend.pointers(samples),
        backend.pointers(outputs),
        backend.asarray(masks, np.uint8),
    )
    return outputs


class PosterizeGpuKernel(GpuKernel):
    """The ``gpu`` kernel: one launch per batch on the pipeline's stream."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Posterize the batch (``bits`` per sample)."""
        bits = [int(a["bits"]) for a in batch.args]
        outputs = posterize_batch(backend_like(batch.backend), batch.contiguous(0), bits)
        return [(outputs, batch.layouts[0])]
