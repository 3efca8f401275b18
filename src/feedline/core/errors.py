"""Exceptions raised by pipelines."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "CorruptDataWarning",
    "DevicePlacementError",
    "OperatorError",
    "OperatorValueError",
    "PipelineError",
    "PluginError",
    "SkippedSample",
    "UnsupportedDeviceError",
    "callback_error",
]


class PipelineError(RuntimeError):
    """A pipeline could not be built or run."""


class DevicePlacementError(PipelineError, ValueError):
    """An operator was given an input on a device it cannot read (a GPU operator a CPU batch,
    a CPU operator a GPU batch). A RuntimeError, as DALI raises, and a ValueError, as feedline
    raised before."""


class UnsupportedDeviceError(PipelineError, ValueError):
    """An operator was asked for a device it has no kernel for (``device="mixed"`` or
    ``"gpu"`` where no plugin provides one). A RuntimeError, as DALI raises, and a ValueError,
    as feedline raised before."""


class PluginError(RuntimeError):
    """A plugin failed to load or registered something invalid."""


class CorruptDataWarning(UserWarning):
    """A sample was decoded despite recoverable damage (e.g. libjpeg's "Corrupt JPEG data");
    the message names the sample's source. Turn it into an error with
    ``warnings.simplefilter("error", CorruptDataWarning)``."""


class OperatorError(PipelineError):
    """An operator failed while running; the message names where.

    Attributes:
        operator: the operator's node name.
        iteration: the pipeline iteration.
        sample_index: index of the failing sample in its batch (None for a batch-level failure).
        source_info: where the failing sample came from (a file path), if known.
    """

    def __init__(
        self,
        message: str,
        *,
        operator: str,
        iteration: int,
        sample_index: int | None = None,
        source_info: str = "",
    ) -> None:
        where = f"operator {operator!r}, iteration {iteration}"
        if sample_index is not None:
            where += f", sample {sample_index}"
        if source_info:
            where += f" ({source_info})"
        super().__init__(f"{where}: {message}")
        self.operator = operator
        self.iteration = iteration
        self.sample_index = sample_index
        self.source_info = source_info


class OperatorValueError(OperatorError, ValueError):
    """An :class:`OperatorError` caused by a ``ValueError`` (a value the operator cannot use,
    such as a layout it does not accept): also a ``ValueError``, as DALI raises its
    invalid-argument errors."""


@functools.cache
def _callback_error_class(kind: type[Exception]) -> type[OperatorError]:
    """An :class:`OperatorError` that is also a ``kind`` (OperatorError itself when the two
    cannot be combined, e.g. exceptions with their own C layout such as OSError)."""
    if issubclass(kind, OperatorError) or not issubclass(kind, Exception):
        return OperatorError
    try:
        return type(f"OperatorError[{kind.__name__}]", (OperatorError, kind), {})
    except TypeError:
        return OperatorError


def callback_error(cause: Exception, *, operator: str, iteration: int) -> OperatorError:
    """The error of a Python callback (an ``external_source`` source) that raised ``cause``.

    An :class:`OperatorError` naming the operator and iteration, and also an instance of
    ``cause``'s type where Python allows it: DALI lets a callback's exception through
    unchanged, so DALI programs catch it by its own type (``except KeyError``).
    """
    message = f"{type(cause).__name__}: {cause}"
    try:
        error = _callback_error_class(type(cause))(message, operator=operator, iteration=iteration)
    except TypeError:  # the cause's type has a constructor of its own
        error = None
    if error is None or message not in str(error):  # or a text of its own (UnicodeError)
        error = OperatorError(message, operator=operator, iteration=iteration)
    return error


@dataclass(frozen=True)
class SkippedSample:
    """A sample dropped under ``on_error="skip"`` (replaced by the next one from its reader).

    Attributes:
        operator: the operator that failed on it.
        iteration: the pipeline iteration.
        sample_index: its index in the batch (for a reader's own failure: in the batch the
            reader was preparing).
        source_info: where it came from (a file path), if known.
        error: the cause, ``"<ExceptionType>: <message>"``.
    """

    operator: str
    iteration: int
    sample_index: int | None
    source_info: str
    error: str

    @classmethod
    def from_error(cls, error: OperatorError) -> SkippedSample:
        """The record of a sample whose failure is ``error``."""
        cause = error.__cause__
        text = f"{type(cause).__name__}: {cause}" if cause is not None else str(error)
        return cls(error.operator, error.iteration, error.sample_index, error.source_info, text)

    def as_dict(self) -> dict[str, Any]:
        """The record as a plain dict."""
        return asdict(self)
