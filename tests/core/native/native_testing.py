"""Test helper: skip a whole test module when a compiled library cannot be used here."""

from __future__ import annotations

import pytest

from feedline.core.native import NativeBuildError, NativeLibrary, native_enabled


def require_library(library: NativeLibrary, what: str) -> None:
    """Skip the calling module unless ``library`` (described as ``what``) builds and opens."""
    if not native_enabled():
        pytest.skip("compiled kernels are disabled (FEEDLINE_NATIVE=0)", allow_module_level=True)
    try:
        library.load()
    except NativeBuildError as error:
        pytest.skip(f"{what} cannot be built here: {error}", allow_module_level=True)
