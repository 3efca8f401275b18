"""Shared fixtures: isolated plugin systems, paths to the test data, GPU skipping, and the
hypothesis profile.

Test data comes from the samples bundled with feedline (:mod:`feedline.data`) or is generated.
The few tests that need the real 128-image COCO 2017 set read it from the folder named by the
``FEEDLINE_SHARED_DATA`` environment variable (default: ``shared/data`` beside the checkout) and
skip, saying so, when it is absent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

import feedline.data
from feedline.core.plugins import PluginSystem, use_plugin_system

# Property tests check results, not speed: hypothesis's default 200 ms deadline per example only
# makes them fail on a loaded machine (CI saw it on test_coords).
settings.register_profile("feedline", deadline=None)
settings.load_profile("feedline")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("FEEDLINE_SHARED_DATA") or REPO_ROOT.parent / "shared" / "data")


def shared_reason(path: Path) -> str:
    """Why a test that needs ``path`` (under :data:`SHARED_DATA`) is skipped."""
    return f"needs the data set {path}; set FEEDLINE_SHARED_DATA to the folder that holds it"


def shared_data(*parts: str) -> Path:
    """Path under :data:`SHARED_DATA`; skips the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(shared_reason(path))
    return path


def sample_data(name: str, *parts: str) -> Path:
    """A bundled sample data set (or a file of it): see :func:`feedline.data.path`."""
    return feedline.data.path(name, *parts)


def sample_jpegs(count: int | None = None) -> list[Path]:
    """Real photos as JPEG files: the bundled ``coco_dali_dummy`` images, then ``file_tree``'s.

    75 photos, 306 to 960 pixels a side; ``count`` keeps the first ``count``.
    """
    images = sorted(sample_data("coco_dali_dummy", "images").iterdir())
    images += sorted(sample_data("file_tree").glob("*/*.jpg"))
    return images[:count]


def _has_gpu() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``gpu``-marked tests on machines without a CUDA device (``FEEDLINE_REQUIRE_GPU=1``
    makes them fail there instead).

    Reads the marker, not ``item.keywords``: keywords also hold the names of the folders above
    the test, and a checkout in a folder named ``gpu`` would skip every test.
    """
    marked = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not marked or _has_gpu():
        return
    if os.environ.get("FEEDLINE_REQUIRE_GPU", "").strip() in ("1", "true", "yes"):
        fail = pytest.mark.usefixtures("_gpu_required")
        for item in marked:
            item.add_marker(fail)
        return
    skip = pytest.mark.skip(reason="needs a CUDA device and CuPy")
    for item in marked:
        item.add_marker(skip)


@pytest.fixture
def _gpu_required() -> None:
    pytest.fail("FEEDLINE_REQUIRE_GPU=1 but no CUDA device (or CuPy) is available")


@pytest.fixture
def plugin_system() -> Iterator[PluginSystem]:
    """A fresh auto-loading plugin system (and registry) active for one test."""
    with use_plugin_system(PluginSystem()) as system:
        yield system


@pytest.fixture
def empty_plugin_system() -> Iterator[PluginSystem]:
    """A plugin system that loads no entry point: only what the test registers in code."""
    with use_plugin_system(PluginSystem(autoload=False)) as system:
        yield system
