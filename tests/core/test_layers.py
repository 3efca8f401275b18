"""The core's layering, including the imports inside functions that import-linter does not see.

The layers are read from the ``core-layers`` contract in ``pyproject.toml`` (one source of truth
for import-linter and this test); the forbidden packages from the ``core-alone`` contract. Every
import statement of every core module counts: at module level, inside functions, under
``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
CORE = SRC / "feedline" / "core"


def _contract(contract_id: str) -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["id"] == contract_id)


@dataclass(frozen=True)
class Layers:
    """The layers of one container, top first: each a list of sibling modules."""

    container: str
    layers: list[tuple[list[str], bool]]  # (sibling modules, whether they are independent)

    @staticmethod
    def from_contract(contract: dict) -> Layers:
        (container,) = contract["containers"]
        layers = []
        for line in contract["layers"]:
            independent = ":" not in line
            names = line.replace(":", "|").split("|")
            siblings = [f"{container}.{n.strip().strip('()')}" for n in names]
            layers.append((siblings, independent))
        return Layers(container, layers)

    def place(self, module: str) -> tuple[int, str] | None:
        """``(layer index, sibling)`` of ``module`` (index 0 is the top), or None outside."""
        for index, (siblings, _) in enumerate(self.layers):
            for sibling in siblings:
                if module == sibling or module.startswith(sibling + "."):
                    return index, sibling
        return None

    def violation(self, importer: str, imported: str) -> str | None:
        """Why ``importer`` may not import ``imported`` (None if it may)."""
        source, target = self.place(importer), self.place(imported)
        if source is None or target is None:
            return None
        if target[0] < source[0]:
            return "imports a higher layer"
        independent = self.layers[source[0]][1]
        if target[0] == source[0] and target[1] != source[1] and independent:
            return "imports an independent sibling"
        return None


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """``(line, module)`` of every import in ``source``, function bodies included; ``from a
    import b`` yields ``a.b`` (b may be a submodule), relative imports are resolved."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def core_violations(layers: Layers, forbidden: list[str]) -> list[str]:
    """Every import of a core module that goes up a layer, across independent siblings, or into
    a forbidden package."""
    found = []
    for path in sorted(CORE.rglob("*.py")):
        module = _module_name(path)
        source = path.read_text(encoding="utf-8")
        for line, target in imported_modules(source, module, path.name == "__init__.py"):
            where = f"{path.relative_to(ROOT)}:{line}: {module} -> {target}"
            if any(target == f or target.startswith(f + ".") for f in forbidden):
                found.append(f"{where} (forbidden package)")
            elif (why := layers.violation(module, target)) is not None:
                found.append(f"{where} ({why})")
    return found


LAYERS = Layers.from_contract(_contract("core-layers"))
FORBIDDEN = _contract("core-alone")["forbidden_modules"]


def test_no_core_module_imports_up_even_inside_functions() -> None:
    assert core_violations(LAYERS, FORBIDDEN) == []


def test_every_core_module_has_a_layer() -> None:
    unplaced = [
        _module_name(p)
        for p in CORE.rglob("*.py")
        if _module_name(p) != LAYERS.container and LAYERS.place(_module_name(p)) is None
    ]
    assert unplaced == []


HIGHER, SIBLING = "imports a higher layer", "imports an independent sibling"


@pytest.mark.parametrize(
    ("importer", "statement", "expected"),
    [
        ("feedline.core.types", "def f():\n    from feedline.core.graph import Constant\n", HIGHER),
        ("feedline.core.graph.nodes", "from ..pipeline import Pipeline\n", HIGHER),
        ("feedline.core.registry", "from feedline.core import plugins\n", HIGHER),
        ("feedline.core.execution.executor", "import feedline.core.workers.pool\n", SIBLING),
        ("feedline.core.pipeline.serialize", "from feedline.core.graph import OpNode\n", None),
        ("feedline.core.graph.passes", "from .nodes import OpNode\n", None),
    ],
)
def test_the_check_sees_function_level_relative_and_sibling_imports(
    importer: str, statement: str, expected: str | None
) -> None:
    targets = [target for _, target in imported_modules(statement, importer, is_package=False)]
    assert [LAYERS.violation(importer, target) for target in targets] == [expected]
