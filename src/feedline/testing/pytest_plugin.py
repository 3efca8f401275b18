"""The pytest plugin (entry point ``pytest11``, loaded wherever feedline is installed).

It registers the ``gpu`` marker and skips tests carrying it where no CUDA device is usable,
and provides fixtures that give a test a plugin system of its own:

* ``isolated_plugins``: a :class:`~feedline.core.plugins.PluginSystem` that loads no entry
  point; register what the test needs with ``isolated_plugins.register(module)``.
* ``isolated_registry``: the registry of such a system (for ``add_operator`` and the like).
* ``installed_plugins``: a fresh system that loads every installed ``feedline.plugins`` entry
  point, so that what one test registers never leaks into another.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from feedline.core.plugins import PluginSystem
from feedline.core.registry import Registry
from feedline.testing.gpu import has_gpu
from feedline.testing.runner import isolated_plugins as _isolated

__all__ = ["installed_plugins", "isolated_plugins", "isolated_registry"]

_SKIP_GPU = "needs a CUDA device and CuPy"


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``gpu`` marker (so ``--strict-markers`` accepts it)."""
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``gpu``-marked tests where no CUDA device is usable."""
    marked = [item for item in items if item.get_closest_marker("gpu") is not None]
    if marked and not has_gpu():
        for item in marked:
            item.add_marker(pytest.mark.skip(reason=_SKIP_GPU))


@pytest.fixture
def isolated_plugins() -> Iterator[PluginSystem]:
    """A plugin system that loads no entry point, active for one test."""
    with _isolated() as system:
        yield system


@pytest.fixture
def isolated_registry(isolated_plugins: PluginSystem) -> Registry:
    """The registry of :func:`isolated_plugins` (empty until the test registers something)."""
    return isolated_plugins.ensure_loaded()


@pytest.fixture
def installed_plugins() -> Iterator[PluginSystem]:
    """A fresh system loading every installed plugin, active for one test."""
    with _isolated(autoload=True) as system:
        yield system
