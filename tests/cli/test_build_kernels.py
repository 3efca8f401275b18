"""``feedline build-kernels``: prints the cached libraries, reports a missing compiler."""

from __future__ import annotations

import pytest

from feedline.cli import main


def test_build_kernels_prints_the_cached_library(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FEEDLINE_NVCC", str(tmp_path / "no-nvcc"))  # GPU build: tests/operators/gpu
    status = main(["build-kernels"])
    out, err = capsys.readouterr()
    if status != 0:
        assert "error:" in err
        pytest.skip(f"no working C compiler here: {err.strip()}")
    paths = out.split()
    # The CPU kernels, the region JPEG decoder unless libjpeg's headers are missing, the COCO
    # reader's segmentation parser.
    assert len(paths) == 3 or (len(paths) == 2 and "optional library skipped" in err)
    assert "feedline_cpu-" in paths[0] and "feedline_coco-" in paths[-1]
    for path in paths:
        assert path.startswith(str(tmp_path)) and path.endswith(".so")
        assert (tmp_path / path.rsplit("/", 1)[1]).is_file()


def test_build_kernels_reports_a_missing_compiler(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("FEEDLINE_NVCC", str(tmp_path / "no-nvcc"))
    assert main(["build-kernels"]) == 1
    err = capsys.readouterr().err
    assert "no-such-cc" in err
    assert "note: GPU kernels skipped: FEEDLINE_NVCC=" in err


def test_status_names_the_path_of_every_library(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from feedline.core.native import native_enabled

    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FEEDLINE_NVCC", str(tmp_path / "no-nvcc"))
    monkeypatch.setenv("FEEDLINE_NATIVE", "0")
    monkeypatch.setenv("FEEDLINE_PREBUILT", "0")
    native_enabled.cache_clear()
    try:
        assert main(["build-kernels", "--status"]) == 0
    finally:
        native_enabled.cache_clear()
    lines = capsys.readouterr().out.splitlines()
    names = [line.split(":", 1)[0] for line in lines]
    assert names == ["feedline_cpu", "feedline_jpeg", "feedline_coco", "feedline_gpu"]
    for line in lines[:3]:
        assert "unavailable — using the NumPy/Pillow path, about " in line
        assert "FEEDLINE_NATIVE=0" in line
    assert lines[3].startswith("feedline_gpu: unavailable — ") and "feedline-cuda13" in lines[3]
    assert not list(tmp_path.glob("*.so"))  # --status never compiles the CUDA kernels
