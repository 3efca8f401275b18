"""The documentation: every Python block of the guides, the behaviour pages and the README runs,
in order, as one module per page; every page is in the site's navigation; and the operator
reference is generated from the registered schemas."""

from __future__ import annotations

import linecache
import re
import subprocess
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


def test_operator_reference_covers_every_public_operator() -> None:
    pytest.importorskip("mkdocs", reason="the docs extra (mkdocs) is not installed")
    sys.path.insert(0, str(DOCS / "_hooks"))
    try:
        from operator_reference import operator_reference
    finally:
        sys.path.remove(str(DOCS / "_hooks"))
    text = operator_reference()
    with use_plugin_system(PluginSystem()) as system:
        operators = system.ensure_loaded().operators
        for name, entry in operators.items():
            heading = f"\n## {name}\n"
            assert (heading in text) != entry.schema.hidden, name
            if not entry.schema.hidden:
                assert entry.schema.docstring() in text, name


def test_site_builds_in_strict_mode(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra (mkdocs) is not installed")
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "reference" / "operators" / "index.html").exists()


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^```bash\n(.*?)\n```$", readme, re.MULTILINE | re.DOTALL)
    test_command = next(c for c in commands if "pytest" in c)
    ci_lines = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci_lines, "the README's test command must be a line of .ci/run"


def test_repository_stands_alone() -> None:
    """Nothing a user reads sends them to files outside the repository."""
    outside = re.compile(r"\.\./shared|/work/shared|[Ss]pec §|dali-semantics\.md|shared/spec")
    files = [REPO_ROOT / "README.md", *DOCS.rglob("*.md"), *(REPO_ROOT / "src").rglob("*.py")]
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line)
    ]
    assert not found, "\n".join(found)
