"""``feedline.plugin.numba.fn``: DALI's ``nvidia.dali.plugin.numba.fn`` path."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["numba_function"]


def __getattr__(name: str) -> Any:
    """``fn.experimental`` as an attribute once this package is imported, as in DALI."""
    if name == "experimental":
        return importlib.import_module(f"{__name__}.experimental")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def numba_function(*inputs: Any, **kwargs: Any) -> Any:
    """``fn.experimental.numba_function`` (DALI's ``numba_function``): runs a Numba-compiled
    ``run_fn(*outputs, *inputs)`` per sample or per batch; see ``feedline ops
    experimental.numba_function``."""
    from feedline import fn

    return fn.experimental.numba_function(*inputs, **kwargs)
