"""tools/check_wheel_emulated.py: which dependency wheels a foreign wheel's check installs, and
which interpreter of the target's sysroot runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.loading import load_tool

emulated = load_tool("check_wheel_emulated")


def test_dependencies_may_be_as_old_as_manylinux2014() -> None:
    machine, tags = emulated.wheel_platforms(
        Path("feedline-0.1.0-py3-none-manylinux_2_34_aarch64.whl")
    )
    assert machine == "aarch64"
    assert tags[0] == "manylinux_2_34_aarch64"
    assert tags[-2:] == ["manylinux_2_17_aarch64", "manylinux2014_aarch64"]
    assert len(tags) == 34 - 17 + 2


def test_an_unrepaired_wheel_is_refused() -> None:
    with pytest.raises(SystemExit, match="not a manylinux_2_NN wheel"):
        emulated.wheel_platforms(Path("feedline-0.1.0-py3-none-linux_aarch64.whl"))


def test_the_newest_python_of_the_sysroot_runs_the_check(tmp_path: Path) -> None:
    bin_dir = tmp_path / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python3.9", "python3.11", "python3.11-config", "python3"):
        (bin_dir / name).write_text("")
    assert emulated.sysroot_python(tmp_path) == bin_dir / "python3.11"


def test_a_sysroot_without_python_is_named(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=f"no usr/bin/python3.X in {tmp_path}"):
        emulated.sysroot_python(tmp_path)
