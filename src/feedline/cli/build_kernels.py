"""``feedline build-kernels``: compile the native kernels now instead of on first use."""

from __future__ import annotations

import argparse
import sys

from feedline.cli.common import EXIT_FAILED, EXIT_OK, Command

__all__ = ["COMMAND"]


def _run(_: argparse.Namespace) -> int:
    from feedline.operators.cpu.native_kernels import JPEG_LIBRARY, LIBRARY
    from feedline.operators.native import NativeBuildError

    status = EXIT_OK
    for library in (LIBRARY, JPEG_LIBRARY):
        try:
            print(library.build())
        except NativeBuildError as error:
            if library.optional:
                print(f"note: optional library skipped: {error}", file=sys.stderr)
            else:
                print(f"error: {error}", file=sys.stderr)
                status = EXIT_FAILED
    return status


COMMAND = Command(
    "build-kernels",
    "compile the native kernels for this machine now (else on first use)",
    "Compile the C kernels for this CPU into the cache folder ($FEEDLINE_CACHE_DIR,\n"
    "default ~/.cache/feedline) and print the path of each library. Exits with\n"
    "status 1 when a required library cannot be built.",
    lambda parser: None,
    _run,
)
