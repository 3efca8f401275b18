"""Names and paths in a structured sample: validation, normalisation and flat (dotted) names.

A field name is a ``str`` or an ``int``; a path is one name or a sequence of names from the root.
Flat names join a path with ``.`` and write integer names as ``[i]`` (``cams.[0].image``), so a
``str`` name may contain neither ``.`` nor brackets: it could collide with a generated flat name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

__all__ = ["Name", "Path", "as_path", "check_name", "flat_name", "format_path", "is_single_name"]

Name = Union[str, int]  # noqa: UP007 (the alias is also used at run time in isinstance checks)
Path = Union[Name, Sequence[Name]]  # noqa: UP007

_FORBIDDEN = frozenset(".[]")


def check_name(name: object) -> Name:
    """Validate one field name.

    Raises:
        TypeError: the name is neither a ``str`` nor an ``int`` (``bool`` is refused too).
        ValueError: a ``str`` name that is empty or contains ``.``, ``[`` or ``]``.
    """
    if isinstance(name, bool) or not isinstance(name, str | int):
        raise TypeError(f"a field name must be a str or an int, got {name!r}")
    if isinstance(name, str) and (not name or _FORBIDDEN.intersection(name)):
        raise ValueError(
            f"field name {name!r} is not allowed: a str name must be non-empty and may not "
            "contain '.', '[' or ']' (they would collide with flat names such as 'a.[0]')"
        )
    return name


def is_single_name(path: object) -> bool:
    """True for a single name (``str``, ``int`` or anything that is not a sequence)."""
    return isinstance(path, str) or not isinstance(path, Sequence)


def as_path(path: Path) -> tuple[Name, ...]:
    """The path as a tuple of names (a single name becomes a 1-tuple).

    Raises:
        TypeError: an element is not a valid name type.
    """
    names = (path,) if is_single_name(path) else tuple(path)  # type: ignore[arg-type]
    for name in names:
        if isinstance(name, bool) or not isinstance(name, str | int):
            raise TypeError(f"path {names!r}: element {name!r} is not a str or int name")
    return names


def flat_name(name: Name) -> str:
    """One path element as written in flat names: ``[i]`` for an int, the name otherwise."""
    return f"[{name}]" if isinstance(name, int) else name


def format_path(path: Sequence[Name]) -> str:
    """A path written as its flat name (``cams.[0].image``); ``<root>`` for the empty path."""
    return ".".join(flat_name(n) for n in path) if path else "<root>"
