"""DALI's ``nvidia.dali._utils.external_source_impl`` path: what a source given to
``external_source`` is, as DALI's worker pool is told, and the CPU checks and conversions of
callback results (``accepted_arg_count``, ``batch_to_numpy``…)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from feedline._utils.callback_data import (
    accepted_arg_count,
    assert_cpu_batch_data_type,
    assert_cpu_sample_data_type,
    batch_to_numpy,
    sample_to_numpy,
)

__all__ = [
    "SourceDescription",
    "SourceKind",
    "accepted_arg_count",
    "assert_cpu_batch_data_type",
    "assert_cpu_sample_data_type",
    "batch_to_numpy",
    "get_callback_from_source",
    "sample_to_numpy",
]


class SourceKind(enum.Enum):
    """The three kinds of ``external_source`` sources."""

    CALLABLE = 0
    ITERABLE = 1
    GENERATOR_FUNC = 2


@dataclass(frozen=True)
class SourceDescription:
    """A source and its kind.

    Attributes:
        source: the callable, iterable or generator function as given.
        kind: its :class:`SourceKind`.
        has_inputs: a callable that takes an argument (``SampleInfo``, ``BatchInfo`` or the
            iteration number).
        cycle: what an iterable does at its end (``None``, ``"quiet"`` or ``"raise"``).
    """

    source: Any
    kind: SourceKind
    has_inputs: bool
    cycle: str | None


_KINDS = {
    "callable": SourceKind.CALLABLE,
    "iterable": SourceKind.ITERABLE,
    "generator_function": SourceKind.GENERATOR_FUNC,
}


def get_callback_from_source(
    source: Any, cycle: str | bool | None, batch_info: bool = False
) -> tuple[Any, SourceDescription]:
    """The callback ``external_source`` would call for ``source``, and its description.

    Args:
        source: a callable, an iterable or a generator function.
        cycle: ``None``/``False``, ``True``/``"quiet"`` or ``"raise"`` (iterables only).
        batch_info: accepted as DALI's is; a batch callback's argument is chosen by the pool.

    Returns:
        ``(callback, description)``: for a callable, the callable itself; for an iterable or a
        generator function, a zero-argument callable returning its next batch (the iterator
        is made at the first call). ``(None, None)`` when ``source`` is None (fed with
        ``feed_input``).

    Raises:
        TypeError: ``source`` is none of the three kinds.
        ValueError: ``cycle`` given for a callable, or not one of the values above.
    """
    # The classification is the operator's own: the same errors for the same sources.
    from feedline.operators.cpu.python.schemas import CYCLE_MODES, classify_source

    del batch_info
    kind, arity = classify_source(source, cycle, "external_source")
    if kind == "push":
        return None, None  # type: ignore[return-value]
    mode = CYCLE_MODES[cycle]
    description = SourceDescription(
        source, _KINDS[kind], bool(arity), None if mode == "no" else mode
    )
    if kind == "callable":
        return source, description
    iterators: list[Any] = []

    def next_batch() -> Any:
        if not iterators:
            iterators.append(iter(source() if kind == "generator_function" else source))
        return next(iterators[0])

    return next_batch, description
