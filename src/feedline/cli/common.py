"""What the command modules share: exit codes, :class:`CommandError`, the command record,
plain-text rendering of docstrings and a progress bar that falls back to nothing."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "EXIT_USAGE",
    "Command",
    "CommandError",
    "plain_text",
    "progress",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

T = TypeVar("T")


class CommandError(Exception):
    """A failure reported as one line on stderr with exit status ``status``."""

    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Command:
    """One sub-command: its name, help texts, argument set-up and handler."""

    name: str
    summary: str
    description: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(text: str) -> str:
    """reST inline markup as plain text: ``code`` → `code`, :class:`~a.B` → `B`."""
    text = _ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", text)
    return _LITERAL.sub(r"`\1`", text)


def progress(items: Iterable[T], total: int, description: str, unit: str) -> Iterator[T]:
    """``items`` with a tqdm progress bar on stderr (none when stderr is not a terminal)."""
    from tqdm import tqdm

    bar: Any = tqdm(
        items,
        total=total,
        desc=description,
        unit=unit,
        file=sys.stderr,
        dynamic_ncols=True,
        disable=None,
    )
    yield from bar
