"""``experimental.numba_function`` without Numba: the build stops with the extra to install."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from feedline import fn, types
from feedline.operators.cpu.python.numba_function import import_numba
from tests.operators.cpu.catalogue_testing import build, feed


def _copy(out0: np.ndarray, in0: np.ndarray) -> None:
    out0[:] = in0[:]


def test_missing_numba_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numba", None)  # makes ``import numba`` fail
    with pytest.raises(ImportError, match=r"pip install 'feedline\[numba\]'"):
        import_numba()
    with pytest.raises(ImportError, match="numba_function needs Numba"):
        build(
            lambda: fn.experimental.numba_function(
                feed([np.zeros(3, np.uint8)]),
                run_fn=_copy,
                in_types=[types.UINT8],
                out_types=[types.UINT8],
                ins_ndim=[1],
                outs_ndim=[1],
            ),
            batch_size=1,
        )
