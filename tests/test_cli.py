"""The command line: plugins, ops and build-kernels."""

from __future__ import annotations

import pytest

from feedline.cli import main
from feedline.core.plugins import PluginSystem


def test_ops_lists_and_documents(
    plugin_system: PluginSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ops"]) == 0
    listing = capsys.readouterr().out
    assert "external_source" in listing and "arithmetic." not in listing
    assert main(["ops", "cast"]) == 0
    text = capsys.readouterr().out
    assert "fn.cast(input, /, *, dtype" in text and "dtype (feedline.types.DataType" in text
    assert main(["ops", "no_such_op"]) == 2


def test_plugins_command(plugin_system: PluginSystem, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["plugins"])
    out = capsys.readouterr().out
    assert "python" in out and "external_source" in out
    assert status == (1 if plugin_system.failures else 0)


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
    # The CPU kernels, then the region JPEG decoder unless libjpeg's headers are missing.
    assert len(paths) == 2 or (len(paths) == 1 and "optional library skipped" in err)
    assert "feedline_cpu-" in paths[0]
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
