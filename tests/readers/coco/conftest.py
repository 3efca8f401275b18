"""Fixtures shared by the ``readers.coco`` tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import feedline.readers.coco as coco_plugin
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.readers.coco.store import CACHE_ENV


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only the COCO plugin, and no annotation cache from the environment."""
    monkeypatch.delenv(CACHE_ENV, raising=False)
    system = PluginSystem(autoload=False)
    system.register(coco_plugin, "coco-reader")
    with use_plugin_system(system):
        yield
