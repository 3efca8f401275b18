"""Fixtures of the effect-operator tests: only the basic and effects plugins are registered."""

from __future__ import annotations

import pytest

from feedline.core.plugins import PluginSystem


@pytest.fixture(autouse=True)
def _effect_plugins(empty_plugin_system: PluginSystem) -> None:
    from feedline.operators.cpu import basic
    from feedline.operators.cpu.effects import plugin

    empty_plugin_system.register(basic, "basic")
    empty_plugin_system.register(plugin, "effects")
