"""``feedline.plugin.numba.fn.experimental``: DALI's path of ``numba_function``."""

from __future__ import annotations

from typing import Any

__all__ = ["numba_function"]


def numba_function(*inputs: Any, **kwargs: Any) -> Any:
    """DALI's Numba operator, which feedline does not have yet.

    Raises:
        NotImplementedError: always; ``fn.python_function`` runs any Python (and so any
            Numba-compiled) function per sample or per batch.
    """
    raise NotImplementedError(
        "numba_function (nvidia.dali.plugin.numba.fn.experimental) is not implemented in "
        "feedline yet; call your Numba-compiled function from fn.python_function instead"
    )
