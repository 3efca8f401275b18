"""``feedline build-kernels``: compile the native kernels now instead of on first use, or
(``--status``) say per library which path runs: prebuilt, compiled here, or the fallback."""

from __future__ import annotations

import argparse
import sys

from feedline.cli.common import EXIT_FAILED, EXIT_OK, Command

__all__ = ["COMMAND"]


def _libraries() -> tuple:
    from feedline.operators.native import CPU_LIBRARY, JPEG_LIBRARY
    from feedline.readers.coco.segmentations import LIBRARY as COCO_LIBRARY

    return CPU_LIBRARY, JPEG_LIBRARY, COCO_LIBRARY


def _run(args: argparse.Namespace) -> int:
    if args.status:
        return _print_status()
    from feedline.core.native import NativeBuildError

    status = EXIT_OK
    for library in _libraries():
        try:
            print(library.locate()[0])
        except NativeBuildError as error:
            if library.optional:
                print(f"note: optional library skipped: {error}", file=sys.stderr)
            else:
                print(f"error: {error}", file=sys.stderr)
                status = EXIT_FAILED
    return status | _build_gpu_kernels()


def _print_status() -> int:
    """One line per library: its name and :meth:`~feedline.core.native.NativeLibrary.status`
    (the first line of it; the reasons follow, indented)."""
    from feedline.core.native import FAST_PATH_HINT, UNAVAILABLE, native_enabled

    missing = False
    for library in _libraries():
        first, *rest = library.status().splitlines()
        missing |= first.startswith(UNAVAILABLE)
        print(f"{library.name}: {first}")
        for line in rest:
            print(f"    {line.strip()}")
    if missing and native_enabled():
        print(f"hint: {FAST_PATH_HINT}")
    from feedline.operators.gpu.build import cuda_library_status

    print(f"feedline_gpu: {cuda_library_status()}")
    return EXIT_OK


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


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--status",
        action="store_true",
        help="print, per library, whether it runs prebuilt, compiled here, or is unavailable "
        "(the NumPy/Pillow fallback runs); compiles the C kernels a first use would, never "
        "the CUDA ones",
    )


COMMAND = Command(
    "build-kernels",
    "compile the C (and, with nvcc, the CUDA) kernels now (else on first use)",
    "Compile the C kernels for this CPU, and the CUDA kernels where nvcc is\n"
    "installed, into the cache folder ($FEEDLINE_CACHE_DIR, default\n"
    "~/.cache/feedline) and print the path of each library; a binary wheel's\n"
    "prebuilt libraries are printed instead of compiled. Exits with status 1\n"
    "when a required library cannot be built (no nvcc is a note, not a failure).\n"
    "--status says per library which path runs.",
    _configure,
    _run,
)
