"""The generic build function (``feedline.core.native.build``): any compiler, cache key,
override variable, and one error listing what was tried."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from feedline.core.native.build import (
    C_COMPILER,
    Compiler,
    NativeBuildError,
    build_library,
    cached_build,
    cached_path,
    cpu_c_flags,
    library_path,
)
from feedline.core.native.library import open_library

needs_cc = pytest.mark.skipif(
    not any(shutil.which(name) for name in C_COMPILER.candidates),
    reason="needs a C compiler (cc, gcc or clang)",
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache"
    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(folder))
    monkeypatch.delenv("CC", raising=False)
    yield folder


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "probe.c"
    path.write_text("int probe(void) { return 7; }\n")
    return path


def plain_cc(*flags: str) -> Compiler:
    """The system C compiler without ``-march=native`` (flags as given)."""
    return Compiler(
        "C compiler", C_COMPILER.candidates, env="CC", flags=("-shared", "-fPIC", *flags)
    )


@needs_cc
def test_builds_into_the_cache_and_reuses_it(cache: Path, source: Path) -> None:
    path = build_library("probe", [source], plain_cc("-O1"))
    assert path.parent == cache and path.name.startswith("probe-") and path.suffix == ".so"
    assert path == library_path("probe", [source], plain_cc("-O1"))
    stamp = path.stat().st_mtime_ns
    assert build_library("probe", [source], plain_cc("-O1")) == path
    assert path.stat().st_mtime_ns == stamp


@needs_cc
def test_key_covers_flags_sources_and_headers(cache: Path, source: Path, tmp_path: Path) -> None:
    header = tmp_path / "probe.h"
    header.write_text("int probe(void);\n")
    base = library_path("probe", [source], plain_cc("-O1"), headers=[header])
    assert library_path("probe", [source], plain_cc("-O2"), headers=[header]) != base
    header.write_text("int probe(void); /* changed */\n")
    assert library_path("probe", [source], plain_cc("-O1"), headers=[header]) != base
    source.write_text("int probe(void) { return 8; }\n")
    assert library_path("probe", [source], plain_cc("-O1")) != library_path(
        "probe", [source], plain_cc("-O1"), libraries=["m"]
    )


def test_override_variable_names_a_prebuilt_library(
    cache: Path, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prebuilt = tmp_path / "prebuilt.so"
    prebuilt.write_bytes(b"")
    nothing = Compiler("CUDA compiler", (str(tmp_path / "no-nvcc"),), env="FEEDLINE_TEST_NVCC")
    monkeypatch.setenv("FEEDLINE_TEST_LIB", str(prebuilt))
    assert build_library("probe", [source], nothing, override_env="FEEDLINE_TEST_LIB") == prebuilt
    monkeypatch.setenv("FEEDLINE_TEST_LIB", str(tmp_path / "missing.so"))
    with pytest.raises(
        NativeBuildError, match=r"\$FEEDLINE_TEST_LIB='.*missing\.so': no such file"
    ):
        build_library("probe", [source], nothing, override_env="FEEDLINE_TEST_LIB")
    assert not cache.exists()


def test_error_lists_everything_tried(
    cache: Path, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FEEDLINE_TEST_LIB", raising=False)
    monkeypatch.delenv("FEEDLINE_TEST_NVCC", raising=False)
    nvcc = Compiler(
        "CUDA compiler", ("no-such-nvcc", str(tmp_path / "cuda/bin/nvcc")), env="FEEDLINE_TEST_NVCC"
    )
    with pytest.raises(NativeBuildError) as info:
        build_library("feedline_cuda", [source], nvcc, override_env="FEEDLINE_TEST_LIB")
    message = str(info.value)
    assert message.startswith("building feedline_cuda failed; tried:")
    for attempt in (
        "$FEEDLINE_TEST_LIB: not set",
        "$FEEDLINE_TEST_NVCC: not set",
        "CUDA compiler no-such-nvcc: not found",
        f"CUDA compiler {tmp_path / 'cuda/bin/nvcc'}: not found",
    ):
        assert attempt in message


def test_compiler_that_does_not_run_is_reported(
    cache: Path, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken-cc"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setenv("CC", f"{broken} -v")
    with pytest.raises(NativeBuildError, match=r"C compiler \$CC='.*broken-cc -v': does not run"):
        build_library("probe", [source], plain_cc())


@needs_cc
def test_compiler_output_is_in_the_error(cache: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.c"
    bad.write_text("int probe(void) { oops }\n")
    with pytest.raises(NativeBuildError, match=r"(?s)building bad failed; tried:.*-O1.*oops"):
        build_library("bad", [bad], plain_cc("-O1"))
    assert not list(cache.glob("*bad*")) and not list(cache.glob(".bad*"))


@needs_cc
def test_cached_build_takes_any_command_line(cache: Path, source: Path) -> None:
    """The primitive a build with a computed command line (nvcc and its architectures) uses."""
    cc = next(shutil.which(name) for name in C_COMPILER.candidates if shutil.which(name))
    calls: list[str] = []

    def command(output: str) -> list[str]:
        calls.append(output)
        return [cc, "-shared", "-fPIC", "-o", output, str(source)]

    path = cached_build("probe", [source], ["arch 75"], command)
    assert path == cached_path("probe", [source], ["arch 75"]) and path.is_file()
    assert cached_build("probe", [source], ["arch 75"], command) == path and len(calls) == 1
    assert cached_path("probe", [source], ["arch 90"]) != path
    _, lib = open_library("probe", _header(source), lambda: path)
    assert lib.probe() == 7
    with pytest.raises(NativeBuildError, match=r"(?s)tried:\n  - earlier: no\n  - .*false"):
        cached_build("bad", [source], [], lambda out: ["false", out], tried=["earlier: no"])


def _header(source: Path) -> Path:
    header = source.with_suffix(".h")
    header.write_text("int probe(void);\n")
    return header


@needs_cc
def test_key_covers_the_compiler_command(
    cache: Path, source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cc = next(name for name in C_COMPILER.candidates if shutil.which(name))
    monkeypatch.setenv("CC", cc)
    plain = library_path("probe", [source], plain_cc("-O1"))
    monkeypatch.setenv("CC", f"{cc} -DPROBE=1")
    assert library_path("probe", [source], plain_cc("-O1")) != plain


@needs_cc
def test_an_unwritable_cache_is_named(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(blocker / "cache"))  # under a file
    with pytest.raises(NativeBuildError, match=r"cache folder .*file/cache is not writable"):
        build_library("probe", [source], plain_cc())


@pytest.mark.parametrize(("target", "per_cpu"), [("x86-64", False), ("", True)])
def test_the_cpu_target_comes_from_the_environment(target: str, per_cpu: bool) -> None:
    script = (
        "from feedline.core.native.build import C_COMPILER\n"
        "print(' '.join(C_COMPILER.flags), C_COMPILER.fingerprint is not None)\n"
    )
    env = {**os.environ, "FEEDLINE_CPU_TARGET": target}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    )
    flags = done.stdout.split()
    assert f"-march={target or 'native'}" in flags
    assert flags[-1] == str(per_cpu)  # only -march=native depends on this CPU's features


@pytest.mark.parametrize("machine", ["aarch64", "ppc64le", "riscv64"])
def test_flags_for_another_machine_carry_no_x86_only_option(machine: str) -> None:
    flags = cpu_c_flags("armv8-a", machine)
    assert "-march=armv8-a" in flags
    assert not any(flag.startswith("-mprefer-vector-width") for flag in flags)


@pytest.mark.parametrize("machine", ["x86_64", "AMD64"])
def test_flags_for_x86_64_prefer_full_width_vectors(machine: str) -> None:
    assert "-mprefer-vector-width=512" in cpu_c_flags("x86-64-v3", machine)
