"""``feedline.plugin.numba.experimental``: DALI's older path of ``NumbaFunction``."""

from __future__ import annotations

from typing import Any

__all__ = ["NumbaFunction"]  # noqa: F822 (provided lazily by __getattr__)


def __getattr__(name: str) -> Any:
    if name == "NumbaFunction":
        from feedline import ops

        return ops.experimental.NumbaFunction
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
