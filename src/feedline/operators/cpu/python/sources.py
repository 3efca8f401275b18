"""What an ``external_source`` source is, and DALI's rules for it, checked when the operator is
created (before any pipeline is built), as DALI checks them.

Kinds: ``callable`` (called once per batch, or once per sample with ``batch=False``),
``generator_function`` (called for a fresh iterator at each epoch), ``iterable`` (``iter()`` is
called again when it cycles, so an object whose ``__iter__`` restarts it cycles) and ``push``
(no source: ``feed_input``). A callable accepts 0 or 1 parameter, counting those with defaults,
and none keyword-only, ``*args`` or ``**kwargs``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import Any

__all__ = ["CYCLE_MODES", "accepted_arg_count", "check_external_source", "classify_source"]

CYCLE_MODES = {
    None: "no",
    False: "no",
    "no": "no",
    True: "quiet",
    "quiet": "quiet",
    "raise": "raise",
}
"""``cycle`` values → the mode: ``no`` (stop at the end), ``quiet`` (restart), ``raise`` (raise
StopIteration at the end, then restart)."""

_REFUSED_KINDS = {
    inspect.Parameter.VAR_POSITIONAL: "var-positional argument `*{}`",
    inspect.Parameter.VAR_KEYWORD: "var-keyword argument `**{}`",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only argument `{}`",
}

_ARITY_MESSAGE = (
    "The `source` callable must accept either 0 or 1 positional arguments to indicate whether it "
    "accepts the batch or sample indexing information."
)


def accepted_arg_count(source: Any) -> int:
    """How many arguments ``source`` takes (0 or 1), with DALI's rules.

    Raises:
        TypeError: it takes ``*args``, ``**kwargs``, a keyword-only parameter, or more than one
            parameter.
    """
    function = source
    if not (inspect.isfunction(source) or inspect.ismethod(source)) and callable(source):
        function = source.__call__
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return 1
    for p in parameters:
        refused = _REFUSED_KINDS.get(p.kind)
        if refused is not None:
            found = refused.format(p.name)
            raise TypeError(f"{_ARITY_MESSAGE} Found {found} which is not allowed.")
    if len(parameters) > 1:
        raise TypeError(
            f"{_ARITY_MESSAGE} Found more than one positional argument, which is not allowed."
        )
    return len(parameters)


def _is_generator_function(source: Any) -> bool:
    """A generator function, a partial of one, or an object whose ``__call__`` is one."""
    if inspect.isgeneratorfunction(source):
        return True
    if isinstance(source, functools.partial):
        return _is_generator_function(source.func)
    if source is None or inspect.isfunction(source) or inspect.ismethod(source):
        return False
    return callable(source) and inspect.isgeneratorfunction(source.__call__)


def classify_source(source: Any, cycle: Any, what: str) -> tuple[str, int]:
    """The kind of a source (see the module docstring) and, for a callable, its arity.

    Raises:
        TypeError: a bad callable signature, a generator object to cycle, or a source that is
            neither callable nor iterable.
        ValueError: an unknown ``cycle`` value, or ``cycle`` given for a callable.
    """
    if cycle not in CYCLE_MODES:
        raise ValueError(
            f"{what}: Invalid value {cycle!r} for the argument `cycle`: use 'no', False or None "
            "(no cycling), 'quiet' or True (rewind quietly), 'raise' (StopIteration at each "
            "rewind)"
        )
    if source is None:
        return "push", 0
    if _is_generator_function(source):
        return "generator_function", 0
    if inspect.isgenerator(source) and CYCLE_MODES[cycle] != "no":
        raise TypeError(
            f"{what}: Cannot cycle through a generator - if the generator is a result of calling "
            "a generator function, pass that function instead as `source`."
        )
    if hasattr(source, "__iter__"):
        return "iterable", 0
    if not callable(source):
        raise TypeError(
            f"{what}: The `source` must be callable, iterable or a parameterless generator "
            f"function, got {type(source).__name__}"
        )
    if cycle is not None:
        raise ValueError(
            f"{what}: The argument `cycle` can only be specified if `source` is iterable."
        )
    return "callable", accepted_arg_count(source)


def check_external_source(args: Mapping[str, Any]) -> None:
    """DALI's checks of an ``external_source`` call's arguments, made when it is called.

    Raises:
        TypeError: a bad source for its mode (see :func:`classify_source`; a parallel source
            that takes no argument, or a parallel iterable or generator function without
            ``batch=True``).
        ValueError: ``prefetch_queue_depth`` without ``parallel``, or below 1.
    """
    what = "external_source"
    kind, arity = classify_source(args["source"], args["cycle"], what)
    depth = args["prefetch_queue_depth"]
    if not args["parallel"]:
        if depth is not None:
            raise ValueError(
                f"{what}: The argument `prefetch_queue_depth` is valid only for parallel "
                "external sources (when ``parallel`` is True)."
            )
        return
    if depth is not None and depth < 1:
        raise ValueError(
            f"{what}: ``prefetch_queue_depth`` must be a positive integer, got {depth}."
        )
    if kind == "callable" and arity == 0:
        raise TypeError(
            f"{what}: Callable passed to External Source in parallel mode (when `parallel=True`) "
            "must accept exactly one argument: `feedline.types.SampleInfo` if run with "
            "`batch=False` or either `feedline.types.BatchInfo` or integer that represents the "
            "index of the batch within the epoch if `batch=True`. Got a callable that does not "
            "accept arguments instead."
        )
    if kind in ("iterable", "generator_function") and not args["batch"]:
        source = "an iterable" if kind == "iterable" else "a generator function"
        raise TypeError(
            f"{what}: Parallel external source with {source} must be run in a batch mode "
            "(specify `batch=True` in the external source definition and make sure your source "
            "returns batches)"
        )
