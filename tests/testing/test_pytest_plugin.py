"""The pytest11 plugin: the gpu marker is skipped without a device; the fixtures isolate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from feedline.testing import has_gpu

TESTS = """
import pytest
from feedline.testing import requires_gpu

@requires_gpu
def test_needs_a_gpu():
    import cupy
    assert cupy.cuda.runtime.getDeviceCount() > 0

def test_isolated_registry_starts_empty(isolated_registry):
    assert dict(isolated_registry.operators) == {}

def test_installed_plugins_load_the_built_ins(installed_plugins):
    assert "resize" in installed_plugins.ensure_loaded().operators
"""


def test_plugin_in_a_downstream_test_run(tmp_path: Path) -> None:
    (tmp_path / "test_downstream.py").write_text(TESTS)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "--strict-markers",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    if has_gpu():
        assert "3 passed" in done.stdout
    else:
        assert "2 passed, 1 skipped" in done.stdout and "needs a CUDA device" in done.stdout
