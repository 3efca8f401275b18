"""Shared setup of the structured-plugin tests."""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Most tests here leave the pass-through copy option at its default, which warns."""
    quiet = pytest.mark.filterwarnings("ignore:PipelineDefinition. Copying all final")
    for item in items:
        if _HERE in Path(item.path).parents:
            item.add_marker(quiet)
