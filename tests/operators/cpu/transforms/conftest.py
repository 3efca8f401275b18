"""Fixtures of the affine transform tests: only the python, tensor, geometry
(``coord_transform``), manipulation (``per_frame``) and transforms families are registered."""

from __future__ import annotations

import pytest

from feedline.core.plugins import PluginSystem
from tests.operators.cpu.families import use_families


@pytest.fixture(autouse=True)
def _transform_plugins(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "python", "tensor", "geometry", "manipulation", "transforms")
