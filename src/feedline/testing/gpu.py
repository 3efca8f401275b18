"""Whether a CUDA device is usable here, and the ``gpu`` marker for tests that need one."""

from __future__ import annotations

import functools

import pytest

__all__ = ["has_gpu", "requires_gpu"]

requires_gpu = pytest.mark.gpu
"""Marks a test that needs a CUDA device; the pytest plugin skips it where there is none."""


@functools.cache
def has_gpu() -> bool:
    """True when CuPy is installed and sees at least one CUDA device (checked once)."""
    try:
        import cupy

        return bool(cupy.cuda.runtime.getDeviceCount() > 0)
    except Exception:
        return False
