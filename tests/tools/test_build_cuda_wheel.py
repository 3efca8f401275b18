"""tools/build_cuda_wheel.py: only a toolkit's nvcc is taken, missing tools stop it early."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.loading import load_tool

build_cuda_wheel = load_tool("build_cuda_wheel")


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_a_toolkits_nvcc_is_taken_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nvcc = executable(tmp_path / "cuda-12.9" / "bin" / "nvcc")
    monkeypatch.chdir(tmp_path)
    assert build_cuda_wheel.checked_nvcc(Path("cuda-12.9/bin/nvcc")) == str(nvcc)


@pytest.mark.parametrize("name", ["ptxas", "nvcc-missing"])
def test_what_is_not_an_nvcc_is_refused_naming_the_toolkit(tmp_path: Path, name: str) -> None:
    given = executable(tmp_path / "ptxas") if name == "ptxas" else tmp_path / "bin" / "nvcc"
    with pytest.raises(SystemExit, match="not an executable nvcc.*CUDA 12 toolkit"):
        build_cuda_wheel.checked_nvcc(given)


def test_a_missing_packaging_tool_stops_before_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "auditwheel" else real(name)
    )
    with pytest.raises(SystemExit, match="auditwheel not installed"):
        build_cuda_wheel.check_packaging_tools()


def test_cuobjdump_of_a_package_on_any_sys_path_folder_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nvcc = executable(tmp_path / "toolkit" / "bin" / "nvcc")
    base = tmp_path / "base-site-packages"
    packaged = executable(base / "nvidia" / "cu13" / "bin" / "cuobjdump")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr("sys.path", [str(tmp_path / "venv-site-packages"), str(base)])
    assert build_cuda_wheel.find_cuobjdump(str(nvcc)) == str(packaged)
    monkeypatch.setattr("sys.path", [str(tmp_path / "venv-site-packages")])
    with pytest.raises(SystemExit, match="pip install nvidia-cuda-cuobjdump"):
        build_cuda_wheel.find_cuobjdump(str(nvcc))
