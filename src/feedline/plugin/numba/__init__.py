"""``feedline.plugin.numba``: DALI's ``nvidia.dali.plugin.numba`` path.

``fn.numba_function`` (also ``fn.experimental.numba_function``) here is the registered
``experimental.numba_function`` operator, and ``NumbaFunction`` its ``ops`` class. Numba itself
(the ``numba`` extra) is imported only when a pipeline using the operator is built.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["NumbaFunction"]

#: Submodules reachable as attributes once this package is imported, as in DALI's package.
_SUBMODULES = frozenset({"fn", "experimental"})


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    from feedline.plugin.numba._class import lookup

    return lookup(__name__, name)
