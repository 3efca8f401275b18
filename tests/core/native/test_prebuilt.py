"""Prebuilt libraries (a binary wheel's ``_prebuilt`` folder): chosen by CPU feature and source
digest, opened without a compiler, and reported by ``NativeLibrary.status``."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from feedline.core.native import FAST_PATH_HINT, NativeLibrary, native_enabled, open_library
from feedline.core.native import prebuilt as prebuilt_module
from feedline.core.native.prebuilt import cpu_features, find_prebuilt
from tests.tools.loading import load_tool

HEADER = "int add_two(int value);\n"
SOURCE = '#include "probe2.h"\nint add_two(int value) { return value + 2; }\n'
COMPILER = shutil.which("cc") or shutil.which("gcc")  # found before the tests empty PATH
COMPILER_ENV = {"PATH": os.environ.get("PATH", "")}


def make_library(root: Path) -> NativeLibrary:
    (root / "probe2.h").write_text(HEADER)
    (root / "probe2.c").write_text(SOURCE)
    return NativeLibrary(
        "probe2", [root / "probe2.c"], root / "probe2.h", fallback="about 3x slower"
    )


def write_manifest(folder: Path, name: str, digest: str, variants: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"format": 1, "libraries": {name: {"digest": digest, "variants": variants}}}
    (folder / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, no compiler on PATH, native kernels on, a fresh prebuilt folder."""
    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.delenv("FEEDLINE_NATIVE", raising=False)
    monkeypatch.delenv("FEEDLINE_PREBUILT", raising=False)
    native_enabled.cache_clear()
    folder = tmp_path / "_prebuilt"
    monkeypatch.setattr(prebuilt_module, "PREBUILT_DIR", folder)
    return folder


def test_the_first_variant_whose_features_the_cpu_has_is_chosen(
    environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    variants = [
        {"file": "x-fast.so", "target": "fast", "requires": ["avx2", "fma"]},
        {"file": "x-base.so", "target": "base", "requires": []},
    ]
    write_manifest(environment, "x", "d1", variants)
    for variant in variants:
        (environment / variant["file"]).write_bytes(b"")
    monkeypatch.setattr(prebuilt_module, "cpu_features", lambda: frozenset({"sse2"}))
    assert find_prebuilt("x", "d1").target == "base"
    monkeypatch.setattr(prebuilt_module, "cpu_features", lambda: frozenset({"avx2", "fma"}))
    assert find_prebuilt("x", "d1").target == "fast"
    assert find_prebuilt("x", "other sources") is None  # built from other sources: not used
    assert find_prebuilt("y", "d1") is None
    monkeypatch.setenv("FEEDLINE_PREBUILT", "0")
    assert find_prebuilt("x", "d1") is None


def test_no_manifest_means_no_prebuilt_library(tmp_path: Path) -> None:
    assert find_prebuilt("feedline_cpu", "any", tmp_path / "nothing-here") is None


def test_cpu_features_are_read_on_linux() -> None:
    if not Path("/proc/cpuinfo").is_file():
        pytest.skip("no /proc/cpuinfo")
    features = cpu_features()
    assert features, "a Linux CPU lists some features"
    assert all(" " not in flag for flag in features)


def test_a_prebuilt_library_opens_without_a_compiler(environment: Path, tmp_path: Path) -> None:
    if COMPILER is None:
        pytest.skip("needs a C compiler to make the prebuilt library")
    library = make_library(tmp_path)
    environment.mkdir()
    subprocess.run(
        [COMPILER, "-shared", "-fPIC", "-o", str(environment / "probe2-base.so"),
         str(tmp_path / "probe2.c"), f"-I{tmp_path}"],
        check=True,
        env=COMPILER_ENV,
    )  # fmt: skip
    write_manifest(
        environment, "probe2", library.digest(), [{"file": "probe2-base.so", "target": "base"}]
    )
    _, lib = library.try_load()
    assert lib.add_two(40) == 42
    assert library.origin == "prebuilt"
    assert library.status() == "prebuilt (base)"


def test_without_prebuilt_or_compiler_the_status_and_warning_say_how_to_get_the_fast_path(
    environment: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    library = make_library(tmp_path)
    with caplog.at_level(logging.WARNING, logger="feedline"):
        assert library.try_load() is None
        assert library.try_load() is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert FAST_PATH_HINT in warnings[0] and "about 3x slower" in warnings[0]
    status = library.status()
    assert status.startswith("unavailable — using the NumPy/Pillow path, about 3x slower")
    assert "C compiler" in status


@pytest.mark.slow
def test_the_wheel_script_prebuilds_every_library_for_this_machine(
    environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools/build_wheels.py's compile step: every variant of every library, a manifest whose
    digests match the sources here, and the libraries open from it with no compiler on PATH."""
    import platform

    build_wheels = load_tool("build_wheels")
    machine = platform.machine().lower()
    if COMPILER is None or machine not in build_wheels.VARIANTS:
        pytest.skip(f"needs a C compiler and one of {sorted(build_wheels.VARIANTS)}")
    monkeypatch.setenv("PATH", COMPILER_ENV["PATH"])
    try:
        manifest = build_wheels.compile_prebuilt(environment, machine, [COMPILER])
    except subprocess.CalledProcessError as error:
        pytest.skip(f"the kernels do not compile here (libjpeg's headers?): {error}")
    monkeypatch.setenv("PATH", str(environment / "no-bin"))
    for library in build_wheels._libraries():
        entry = manifest["libraries"][library.name]
        assert [v["target"] for v in entry["variants"]] == [
            target for target, _ in build_wheels.VARIANTS[machine]
        ]
        found = find_prebuilt(library.name, library.digest())
        assert found is not None and found.path.parent == environment
        assert found.target in [target for target, _ in build_wheels.VARIANTS[machine]]
        open_library(library.name, library.header, lambda path=found.path: path)
