"""``feedline.plugin.numba.experimental``: DALI's older path of ``NumbaFunction``."""

from __future__ import annotations

from typing import Any

__all__ = ["NumbaFunction"]  # noqa: F822 (provided lazily by __getattr__)


def __getattr__(name: str) -> Any:
    from feedline.plugin.numba._class import lookup

    return lookup(__name__, name)
