"""The error of an invalid operator argument found while a pipeline is built."""

from __future__ import annotations

__all__ = ["ArgumentError"]


class ArgumentError(ValueError, RuntimeError):
    """An argument value an operator cannot use.

    A ``ValueError``, and also a ``RuntimeError`` as DALI raises for the same mistakes (so code
    catching DALI's errors catches it too).
    """
