"""``feedline.plugin.numba``: DALI's ``nvidia.dali.plugin.numba`` path.

``fn.numba_function`` (also ``fn.experimental.numba_function``) here is the registered
``experimental.numba_function`` operator, and ``NumbaFunction`` its ``ops`` class. Numba itself
(the ``numba`` extra) is imported only when a pipeline using the operator is built.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NumbaFunction"]


def __getattr__(name: str) -> Any:
    from feedline.plugin.numba._class import lookup

    return lookup(__name__, name)
