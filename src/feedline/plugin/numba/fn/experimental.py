"""``feedline.plugin.numba.fn.experimental``: DALI's older path of ``numba_function``."""

from __future__ import annotations

from feedline.plugin.numba.fn import numba_function

__all__ = ["numba_function"]
