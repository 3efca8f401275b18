"""The ``all`` extra installs every optional feature the project declares."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
#: extras that are not CPU features: the GPU stacks (one per CUDA major), the developers' tools
NOT_IN_ALL = {"gpu", "gpu-cuda12", "gpu-cuda13", "test", "docs", "all"}


def test_all_names_every_feature_extra() -> None:
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    (requirement,) = extras["all"]
    named = set(requirement.split("[", 1)[1].rstrip("]").split(","))
    assert named == set(extras) - NOT_IN_ALL
