"""Fixtures of the array-operator tests: only the basic and arrays plugins are registered."""

from __future__ import annotations

import pytest

from feedline.core.plugins import PluginSystem


@pytest.fixture(autouse=True)
def _array_plugins(empty_plugin_system: PluginSystem) -> None:
    from feedline.operators.cpu import basic
    from feedline.operators.cpu.arrays import plugin

    empty_plugin_system.register(basic, "basic")
    empty_plugin_system.register(plugin, "arrays")
