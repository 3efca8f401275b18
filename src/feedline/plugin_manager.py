"""``feedline.plugin_manager``: the path of DALI's ``nvidia.dali.plugin_manager``.

DALI loads compiled operator libraries with it. feedline's operators come from Python packages
instead, found through the ``feedline.plugins`` entry-point group (see the plugins guide), so
``load_library`` and ``load_directory`` raise a RuntimeError (DALI's type for a library that
cannot be loaded) saying so; importing the module works, as ported code does at its top.
"""

from __future__ import annotations

import os

__all__ = ["load_directory", "load_library"]

_WHY = (
    "feedline does not load DALI's compiled operator libraries; its operators come from Python "
    "packages registered under the 'feedline.plugins' entry-point group (a schema and a NumPy "
    "or CUDA kernel per operator; see docs/plugins.md)"
)


def load_library(library_path: str | os.PathLike[str], global_symbols: bool = False) -> None:
    """Refused (see the module docstring).

    Raises:
        RuntimeError: always, naming the library.
    """
    raise RuntimeError(f"cannot load {os.fspath(library_path)!r}: {_WHY}")


def load_directory(plugin_dir_path: str | os.PathLike[str], global_symbols: bool = False) -> None:
    """Refused (see the module docstring).

    Raises:
        RuntimeError: always, naming the directory.
    """
    raise RuntimeError(f"cannot load the libraries in {os.fspath(plugin_dir_path)!r}: {_WHY}")
