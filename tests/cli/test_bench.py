"""``feedline bench`` on a few generated JPEGs: the table, and the baseline when torch exists."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from feedline.cli import main
from feedline.cli.bench import generate_jpegs


@pytest.fixture(scope="module")
def jpegs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_jpegs(tmp_path_factory.mktemp("jpegs"), 12)


def test_generated_images_are_reused(jpegs: Path) -> None:
    files = sorted(jpegs.rglob("*.jpg"))
    assert len(files) == 12 and len({p.parent for p in files}) == 10
    stamp = files[0].stat().st_mtime_ns
    generate_jpegs(jpegs, 12)
    assert files[0].stat().st_mtime_ns == stamp


def test_bench_prints_a_table(jpegs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "bench",
        "--data",
        str(jpegs),
        "--seconds",
        "0.3",
        "--batch-size",
        "4",
        "--threads",
        "1",
    ]
    if importlib.util.find_spec("torch") is None:
        argv.append("--no-baseline")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "images/s" in out and "CPU-ms/img" in out and "peak MB" in out
    assert "feedline (1 thread)" in out
    if "--no-baseline" not in argv:
        assert "PyTorch DataLoader (1 worker)" in out and "feedline / DataLoader" in out


def test_bad_values_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--seconds", "0"]) == 2
    assert main(["bench", "--data", "/no/such/folder"]) == 2
