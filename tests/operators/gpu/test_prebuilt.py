"""Prebuilt CUDA kernels from a ``feedline-cuda*`` distribution: found through the
``feedline.plugins`` entry points, used only when built from the same kernel sources, preferred
to nvcc, and reported by ``cuda_library_status``."""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

import pytest

from feedline.operators.gpu import build


def install_fake_kernels(root: Path, name: str, digest: str, major: int) -> metadata.EntryPoint:
    """A module like feedline_cuda13's (an empty file as the library) and its entry point."""
    package = root / name
    package.mkdir()
    (package / "feedline_gpu.so").write_bytes(b"")
    info = {"digest": digest, "cuda_major": major, "archs": [75, 90], "ptx": 90, "nvcc": "x"}
    (package / "build.json").write_text(json.dumps(info))
    (package / "__init__.py").write_text(
        "import json, pathlib\n"
        "LIBRARY = pathlib.Path(__file__).parent / 'feedline_gpu.so'\n"
        "BUILD = json.loads((LIBRARY.parent / 'build.json').read_text())\n"
    )
    return metadata.EntryPoint(f"gpu-kernels-{name}", name, "feedline.plugins")


@pytest.fixture
def entry_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[metadata.EntryPoint]:
    """Entry points the GPU plugin sees instead of the installed ones; nvcc unavailable."""
    found: list[metadata.EntryPoint] = []
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(build.metadata, "entry_points", lambda group: list(found))
    monkeypatch.setenv("FEEDLINE_NVCC", str(tmp_path / "no-nvcc"))
    monkeypatch.delenv("FEEDLINE_CUDA_LIB", raising=False)
    monkeypatch.delenv("FEEDLINE_PREBUILT", raising=False)
    yield found
    for name in [m for m in sys.modules if m.startswith("fake_cuda")]:
        del sys.modules[name]


def test_a_matching_prebuilt_library_is_used_without_nvcc(
    entry_points: list, tmp_path: Path
) -> None:
    entry_points.append(install_fake_kernels(tmp_path, "fake_cuda13", build.kernel_digest(), 13))
    path = build.cuda_library_path()
    assert path == tmp_path / "fake_cuda13" / "feedline_gpu.so"
    status = build.cuda_library_status()
    assert status.startswith("prebuilt (") and "sm_75, sm_90 + PTX compute_90" in status


def test_kernels_built_from_other_sources_are_not_used(entry_points: list, tmp_path: Path) -> None:
    entry_points.append(install_fake_kernels(tmp_path, "fake_cuda_old", "another digest", 13))
    assert build.prebuilt_cuda_library() is None
    with pytest.raises(build.GpuUnavailableError, match="FEEDLINE_NVCC"):
        build.cuda_library_path()
    assert build.cuda_library_status().startswith("unavailable — ")


def test_the_newest_cuda_major_wins_and_feedline_prebuilt_0_turns_them_off(
    entry_points: list, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    digest = build.kernel_digest()
    entry_points.append(install_fake_kernels(tmp_path, "fake_cuda12", digest, 12))
    entry_points.append(install_fake_kernels(tmp_path, "fake_cuda13", digest, 13))
    monkeypatch.setattr(build, "_driver_major", lambda: None)
    assert build.prebuilt_cuda_library().build["cuda_major"] == 13
    monkeypatch.setattr(build, "_driver_major", lambda: 12)  # a CUDA 12 driver
    assert build.prebuilt_cuda_library().build["cuda_major"] == 12
    monkeypatch.setenv("FEEDLINE_PREBUILT", "0")
    assert build.prebuilt_cuda_library() is None


def test_entry_points_of_other_plugins_are_not_loaded(entry_points: list) -> None:
    entry_points.append(metadata.EntryPoint("numpy", "no_such_module_here", "feedline.plugins"))
    assert build.prebuilt_cuda_library() is None  # not imported: the name has no gpu-kernels
