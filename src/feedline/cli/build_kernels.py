"""``feedline build-kernels``: compile the native kernels now instead of on first use."""

from __future__ import annotations

import argparse
import sys

from feedline.cli.common import EXIT_FAILED, EXIT_OK, Command

__all__ = ["COMMAND"]


def _run(_: argparse.Namespace) -> int:
    from feedline.core.native import NativeBuildError
    from feedline.operators.native import CPU_LIBRARY, JPEG_LIBRARY
    from feedline.readers.coco.segmentations import LIBRARY as COCO_LIBRARY

    status = EXIT_OK
    for library in (CPU_LIBRARY, JPEG_LIBRARY, COCO_LIBRARY):
        try:
            print(library.build())
        except NativeBuildError as error:
            if library.optional:
                print(f"note: optional library skipped: {error}", file=sys.stderr)
            else:
                print(f"error: {error}", file=sys.stderr)
                status = EXIT_FAILED
    return status | _build_gpu_kernels()


def _build_gpu_kernels() -> int:
    """Build the GPU plugin's CUDA library (a note, not a failure, where there is no nvcc)."""
    from feedline.core.native import NativeBuildError
    from feedline.operators.gpu.build import GpuUnavailableError, cuda_library_path

    try:
        print(cuda_library_path())
    except GpuUnavailableError as error:
        print(f"note: GPU kernels skipped: {error}", file=sys.stderr)
    except NativeBuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


COMMAND = Command(
    "build-kernels",
    "compile the C (and, with nvcc, the CUDA) kernels now (else on first use)",
    "Compile the C kernels for this CPU, and the CUDA kernels where nvcc is\n"
    "installed, into the cache folder ($FEEDLINE_CACHE_DIR, default\n"
    "~/.cache/feedline) and print the path of each library. Exits with status 1\n"
    "when a required library cannot be built (no nvcc is a note, not a failure).",
    lambda parser: None,
    _run,
)
