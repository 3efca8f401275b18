"""Errors shared by the operator families: invalid arguments, windows out of bounds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["ArgumentError", "out_of_bounds"]


class ArgumentError(ValueError, RuntimeError):
    """An argument value an operator cannot use.

    A ``ValueError``, and also a ``RuntimeError`` as DALI raises for the same mistakes (so code
    catching DALI's errors catches it too).
    """


def out_of_bounds(
    op: str, shape: Sequence[int], window: Mapping[int, tuple[int, int]]
) -> ValueError:
    """The error for a window (axis → ``(start, size)``) that leaves a sample of ``shape``
    under ``out_of_bounds_policy="error"``, in DALI's words (with the whole sample's anchor and
    shape, unsliced axes taken whole)."""
    anchor = [window[a][0] if a in window else 0 for a in range(len(shape))]
    size = [window[a][1] if a in window else extent for a, extent in enumerate(shape)]

    def dims(values: Sequence[int]) -> str:
        return "{" + " x ".join(str(int(v)) for v in values) + "}"

    return ValueError(
        f"{op}: Slice can't be placed out of bounds with current policy. Got: "
        f"input_shape={dims(shape)}, slice_anchor={dims(anchor)}, slice_shape={dims(size)} "
        "(use out_of_bounds_policy='pad' or 'trim_to_shape')"
    )
