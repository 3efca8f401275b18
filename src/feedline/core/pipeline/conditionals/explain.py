"""Errors raised while a conditional pipeline function runs, explained in terms of the user's
code (as DALI does): the message lists the user's frames (not the transformation's or
feedline's), then the original error."""

from __future__ import annotations

import linecache
import traceback
from pathlib import Path

__all__ = ["explained"]

_FEEDLINE = str(Path(__file__).resolve().parents[3])


def _user_frames(error: BaseException) -> list[str]:
    lines: list[str] = []
    for frame in traceback.extract_tb(error.__traceback__):
        # Frames of feedline and of the branch functions that the transformation adds (the
        # frame of the user's function shows the same line) are left out.
        if frame.name.startswith("__fl_") or str(Path(frame.filename).resolve()).startswith(
            _FEEDLINE
        ):
            continue
        lines.append(f'    File "{frame.filename}", line {frame.lineno}, in {frame.name}')
        code = (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).strip()
        lines.append(f"        {code or '<source unavailable>'}")
    return lines


def explained(error: Exception) -> Exception:
    """An exception of ``error``'s type whose message starts with the user's frames (``in user
    code: …``), or ``error`` itself when its type cannot be rebuilt from a message."""
    frames = _user_frames(error)
    if not frames or len(error.args) > 1:
        return error
    cause = "\n".join(f"    {line}" for line in f"{type(error).__name__}: {error}".split("\n"))
    message = "in user code:\n\n" + "\n".join(frames) + "\n\n" + cause + "\n"
    try:
        rebuilt = type(error)(message)
    except Exception:  # a type that takes other arguments keeps its own message
        return error
    if type(rebuilt) is not type(error) or str(rebuilt) != message:
        return error
    return rebuilt.with_traceback(error.__traceback__)
