"""Import a release script of the repository's ``tools/`` folder (scripts, not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def load_tool(name: str) -> ModuleType:
    """The module ``tools/<name>.py``, imported once per test session.

    The scripts put the checkout's ``src/`` first on ``sys.path`` so that they run from a bare
    clone; that is undone once the script is imported, because ``src/`` may hold the metadata
    of an older editable install (``feedline.egg-info``), which would then shadow the installed
    distribution's entry points for every later test.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    saved_path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved_path
    return module
