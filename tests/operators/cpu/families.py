"""Test helper: the CPU operator families' plugin modules, registered by their entry-point names."""

from __future__ import annotations

from types import ModuleType

from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.arrays import schemas as arrays
from feedline.operators.cpu.color import schemas as color
from feedline.operators.cpu.conditional import schemas as conditional
from feedline.operators.cpu.constants import schemas as constants
from feedline.operators.cpu.crops import schemas as crops
from feedline.operators.cpu.distortions import schemas as distortions
from feedline.operators.cpu.effects import schemas as effects
from feedline.operators.cpu.files import schemas as files
from feedline.operators.cpu.filters import schemas as filters
from feedline.operators.cpu.geometry import schemas as geometry
from feedline.operators.cpu.heatmaps import schemas as heatmaps
from feedline.operators.cpu.histogram import schemas as histogram
from feedline.operators.cpu.image import schemas as image
from feedline.operators.cpu.manipulation import schemas as manipulation
from feedline.operators.cpu.math import schemas as math
from feedline.operators.cpu.python import schemas as python
from feedline.operators.cpu.random import schemas as random
from feedline.operators.cpu.reductions import schemas as reductions
from feedline.operators.cpu.segmentation import schemas as segmentation
from feedline.operators.cpu.tensor import schemas as tensor
from feedline.operators.cpu.transforms import schemas as transforms
from feedline.operators.cpu.video import schemas as video
from feedline.operators.cpu.warps import schemas as warps

#: Entry-point name → plugin module, as ``pyproject.toml`` lists them.
FAMILIES: dict[str, ModuleType] = {
    "tensor": tensor,
    "image": image,
    "color": color,
    "geometry": geometry,
    "random": random,
    "math": math,
    "python": python,
    "arrays": arrays,
    "effects": effects,
    "video": video,
    "conditional": conditional,
    "reductions": reductions,
    "transforms": transforms,
    "constants": constants,
    "manipulation": manipulation,
    "filters": filters,
    "histogram": histogram,
    "heatmaps": heatmaps,
    "warps": warps,
    "distortions": distortions,
    "crops": crops,
    "segmentation": segmentation,
    "files": files,
}


def use_families(system: PluginSystem, *names: str) -> None:
    """Register only the named families' plugins on ``system``."""
    for name in names:
        system.register(FAMILIES[name], name)
