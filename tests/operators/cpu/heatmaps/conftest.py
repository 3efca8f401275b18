"""Fixtures of the heatmap tests: only the families they use are registered."""

from __future__ import annotations

import pytest

from feedline.core.plugins import PluginSystem
from tests.operators.cpu.families import use_families


@pytest.fixture(autouse=True)
def _heatmap_plugins(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "python", "tensor", "heatmaps")
