"""Every test runs with a fresh plugin system that loads the installed plugins (feedline's
built-ins and this one, through its entry point): the ``installed_plugins`` fixture of
feedline's pytest plugin."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _plugins(installed_plugins):
    return installed_plugins
