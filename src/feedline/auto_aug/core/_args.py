"""Signature inspection for augmentations: which extra keyword arguments each one takes."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_POSITIONAL = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY)


class MissingArgException(Exception):
    """An augmentation was called without a keyword argument it requires."""

    def __init__(self, message: str, augmentation: Any, missing_args: list[str]) -> None:
        super().__init__(message)
        self.augmentation = augmentation
        self.missing_args = missing_args


class UnusedArgException(Exception):
    """A keyword argument was given that no augmentation of the suite accepts."""

    def __init__(self, message: str, unused_args: list[str]) -> None:
        super().__init__(message)
        self.unused_args = unused_args


def _extra_params(function: Callable[..., Any], skip_positional: int) -> list[inspect.Parameter]:
    """The parameters of ``function`` after its first ``skip_positional`` positional ones."""
    params = list(inspect.signature(function).parameters.values())
    return [p for i, p in enumerate(params) if i >= skip_positional or p.kind not in _POSITIONAL]


def num_positional_args(function: Callable[..., Any]) -> int:
    """How many arguments ``function`` accepts positionally."""
    params = inspect.signature(function).parameters.values()
    return sum(1 for p in params if p.kind in _POSITIONAL)


def accepted_kwargs(
    function: Callable[..., Any], kwargs: Mapping[str, Any], skip_positional: int = 0
) -> dict[str, Any]:
    """The entries of ``kwargs`` whose names ``function`` takes as named arguments."""
    names = {p.name for p in _extra_params(function, skip_positional) if p.kind in _NAMED}
    return {name: value for name, value in kwargs.items() if name in names}


def missing_kwargs(
    function: Callable[..., Any], kwargs: Mapping[str, Any], skip_positional: int = 0
) -> list[str]:
    """The required named arguments of ``function`` that ``kwargs`` lacks."""
    return [
        p.name
        for p in _extra_params(function, skip_positional)
        if p.kind in _NAMED and p.default is inspect.Parameter.empty and p.name not in kwargs
    ]


def forbid_unused_kwargs(
    augmentations: Iterable[Any], kwargs: Mapping[str, Any], call: str
) -> None:
    """Raise :class:`UnusedArgException` for keyword arguments no augmentation accepts."""
    used = {name for aug in augmentations for name in accepted_kwargs(aug.op, kwargs, 2)}
    unused = [name for name in kwargs if name not in used]
    if unused:
        subject, verb = ("kwarg", "is") if len(unused) == 1 else ("kwargs", "are")
        raise UnusedArgException(
            f"The {call} got unexpected {subject}. "
            f"The {subject} `{', '.join(unused)}` {verb} not used by any of the augmentations.",
            unused_args=unused,
        )
