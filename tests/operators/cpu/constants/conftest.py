"""Fixtures of the constants tests: only the python and constants families are registered."""

from __future__ import annotations

import pytest

from feedline.core.plugins import PluginSystem
from tests.operators.cpu.families import use_families


@pytest.fixture(autouse=True)
def _constant_plugins(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "python", "tensor", "constants")
