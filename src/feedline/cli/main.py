"""Argument parsing, dispatch and exit codes of the ``feedline`` command.

Commands print their results to stdout and problems to stderr, one line each, never a
traceback: a :class:`CommandError` carries the message and the exit status, and a closed output
pipe (``feedline ops decoders.image | head -3``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from feedline import __version__
from feedline.cli import bench, build_kernels, demo, plugins
from feedline.cli.common import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, CommandError

__all__ = ["build_parser", "main"]

DESCRIPTION = """\
feedline: data loading and preprocessing pipelines for deep learning.

Inspect the installed plugins and operators, try a detection pipeline on sample
images, measure throughput, or compile the native kernels ahead of time."""

EPILOG = """\
exit status:
  0    success
  1    the command ran and found a problem (a plugin failed to load, a kernel
       library failed to build, the pipeline raised an error)
  2    usage error: bad arguments, an unknown operator, a missing file or folder
  3    something the request needs is not available here (a GPU, an optional
       dependency such as torch)
  130  interrupted (Ctrl-C)
  141  the output was closed early (for example piped into head)

Run 'feedline COMMAND --help' for the options of one command."""

_COMMANDS = (plugins.PLUGINS, plugins.OPS, demo.COMMAND, bench.COMMAND, build_kernels.COMMAND)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = argparse.ArgumentParser(
        prog="feedline",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"feedline {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in _COMMANDS:
        sub = commands.add_parser(
            command.name,
            help=command.summary,
            description=command.description,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.configure(sub)
        sub.set_defaults(handler=command.run)
    return parser


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status (see ``feedline --help``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.handler(args)
        sys.stdout.flush()
    except CommandError as error:
        print(f"feedline {args.command}: error: {error}", file=sys.stderr)
        return error.status
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return status


if __name__ == "__main__":
    sys.exit(main())
