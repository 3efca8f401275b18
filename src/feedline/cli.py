"""The ``feedline`` command line: ``plugins``, ``ops`` and ``build-kernels``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from feedline.core.plugins import get_plugin_system

__all__ = ["main"]


def _cmd_plugins(_: argparse.Namespace) -> int:
    system = get_plugin_system()
    registry = system.ensure_loaded()
    for info in system.plugins:
        print(f"{info.name}  ({info.distribution} {info.version}, {info.entry_point})")
        for label, names in (
            ("operators", info.operators),
            ("kernels", info.kernels),
            ("codecs", info.codecs),
            ("iterators", info.iterators),
        ):
            if names:
                print(f"    {label}: {', '.join(names)}")
    for failure in system.failures:
        print(f"FAILED {failure.describe()}")
    print(f"{len(registry.operators)} operators, {len(system.failures)} failed plugins")
    return 1 if system.failures else 0


def _cmd_ops(args: argparse.Namespace) -> int:
    registry = get_plugin_system().ensure_loaded()
    if args.name is None:
        for name, entry in sorted(registry.operators.items()):
            if entry.schema.hidden:
                continue
            summary = entry.schema.doc.strip().splitlines()[0] if entry.schema.doc else ""
            print(f"{name:32s} {summary}")
        return 0
    entry = registry.operators.get(args.name)
    if entry is None:
        print(f"no operator named {args.name!r}", file=sys.stderr)
        return 2
    print(f"fn.{args.name}{entry.schema.signature()}\n")
    print(entry.schema.docstring())
    return 0


def _cmd_build_kernels(_: argparse.Namespace) -> int:
    from feedline.operators.native import CPU_LIBRARY, JPEG_LIBRARY, NativeBuildError

    status = 0
    for library in (CPU_LIBRARY, JPEG_LIBRARY):
        try:
            print(library.build())
        except NativeBuildError as error:
            if library.optional:
                print(f"note: optional library skipped: {error}", file=sys.stderr)
            else:
                print(f"error: {error}", file=sys.stderr)
                status = 1
    return status | _build_gpu_kernels()


def _build_gpu_kernels() -> int:
    """Build the GPU plugin's CUDA library (a note, not a failure, where there is no nvcc)."""
    from feedline.operators.gpu.build import GpuUnavailableError, cuda_library_path
    from feedline.operators.native import NativeBuildError

    try:
        print(cuda_library_path())
    except GpuUnavailableError as error:
        print(f"note: GPU kernels skipped: {error}", file=sys.stderr)
    except NativeBuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="feedline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("plugins", help="installed plugins, what they provide, what failed")
    ops = commands.add_parser("ops", help="list operators, or show one operator's docs")
    ops.add_argument("name", nargs="?", help="operator name, e.g. readers.file")
    commands.add_parser(
        "build-kernels",
        help="compile the C kernels (and, with nvcc, the CUDA kernels) now (else on first use)",
    )
    args = parser.parse_args(argv)
    handlers = {"plugins": _cmd_plugins, "ops": _cmd_ops, "build-kernels": _cmd_build_kernels}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
