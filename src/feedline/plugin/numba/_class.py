"""The ``NumbaFunction`` class of DALI's numba plugin paths, with DALI's version checks."""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["numba_function_class"]


def _refuse(throw: bool, message: str) -> bool:
    if throw:
        raise RuntimeError(message)
    return False


@functools.cache
def numba_function_class() -> type:
    """``ops.experimental.NumbaFunction`` plus DALI's static checks of what Numba supports
    here (programs call them to pick the devices to run on)."""
    from feedline import ops

    class NumbaFunction(ops.experimental.NumbaFunction):  # type: ignore[misc,name-defined]
        """DALI's ``NumbaFunction``: the ``experimental.numba_function`` operator's class."""

        @staticmethod
        def _check_minimal_numba_version(throw: bool = True) -> bool:
            """Whether Numba is installed (False, or RuntimeError with ``throw``)."""
            try:
                import numba  # noqa: F401
            except ImportError:
                return _refuse(throw, "Numba is not installed: pip install 'feedline[numba]'")
            return True

        @staticmethod
        def _check_cuda_compatibility(throw: bool = True) -> bool:
            """Always False (RuntimeError with ``throw``): the operator runs on the CPU only."""
            return _refuse(throw, "numba_function runs on the CPU only in feedline")

    return NumbaFunction


def lookup(module: str, name: str) -> Any:
    """The module ``__getattr__`` of the numba plugin paths."""
    if name == "NumbaFunction":
        return numba_function_class()
    raise AttributeError(f"module {module!r} has no attribute {name!r}")
