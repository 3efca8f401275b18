"""Building and opening the GPU kernels (runs on every machine with nvcc; no GPU needed).

The CUDA library is built for one architecture here (``FEEDLINE_CUDA_ARCHS=75``, cached in the
user cache like any build) to keep the test to a few minutes; the fat-binary command line for
every architecture is checked without compiling it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from feedline.core.native import open_library
from feedline.operators.gpu import build
from feedline.operators.gpu.build import (
    HEADER,
    SOURCES,
    GpuUnavailableError,
    cuda_archs,
    find_nvcc,
    host_library,
    nvcc_command,
)

LAUNCHERS = re.findall(r"^int (flg_\w+)\(", HEADER.read_text(), flags=re.MULTILINE)
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


def test_the_header_declares_the_launchers_of_every_kernel_family() -> None:
    assert set(LAUNCHERS) == {
        "flg_window",
        "flg_resample",
        "flg_color_twist",
        "flg_bb_flip",
        "flg_coord_transform",
        "flg_draw_gaussians",
        "flg_math",
        "flg_use_device",
    }
    defined = set()
    for source in SOURCES:
        defined |= set(re.findall(r'extern "C" int (flg_\w+)\(', source.read_text()))
    assert defined == set(LAUNCHERS)


def test_the_host_emulation_library_exports_every_launcher() -> None:
    ffi, lib = host_library()
    for name in LAUNCHERS:
        assert ffi.typeof(getattr(lib, name)).kind == "function"


@pytest.fixture
def one_arch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEEDLINE_CUDA_ARCHS", "75")
    monkeypatch.delenv("FEEDLINE_CUDA_LIB", raising=False)


@needs_nvcc
@pytest.mark.slow
@pytest.mark.usefixtures("one_arch")
def test_nvcc_builds_a_library_that_cffi_opens_with_every_launcher(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FEEDLINE_PREBUILT", "0")  # build even beside an installed feedline-cuda
    path = build.cuda_library_path()
    assert path.is_file() and path.name.startswith("feedline_gpu-")
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True
    ).stdout
    exported = set(re.findall(r" T (flg_\w+)$", symbols, flags=re.MULTILINE))
    assert set(LAUNCHERS) <= exported
    # The CUDA runtime is linked statically: opening needs no GPU, no driver, no libcudart.
    ffi, lib = open_library("feedline_gpu", HEADER, lambda: path)
    for name in LAUNCHERS:
        assert ffi.typeof(getattr(lib, name)).kind == "function"
    dynamic = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout
    assert "libcudart" not in dynamic
    assert build.cuda_library_path() == path  # cached: the second call builds nothing


@needs_nvcc
def test_the_fat_binary_covers_every_architecture_from_sm75_and_ptx_of_the_newest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FEEDLINE_CUDA_ARCHS", raising=False)
    nvcc = find_nvcc()
    listed = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True).stdout
    expected = sorted({int(a) for a in re.findall(r"compute_(\d+)", listed) if int(a) >= 75})
    archs = cuda_archs(nvcc)
    assert list(archs) == expected
    command = nvcc_command(nvcc, archs, "out.so")
    for arch in archs:
        assert f"-gencode=arch=compute_{arch},code=sm_{arch}" in command
    newest = archs[-1]
    assert f"-gencode=arch=compute_{newest},code=compute_{newest}" in command
    assert "--fmad=false" in command  # float32 results must match the CPU kernels bit for bit
    assert all(str(source) in command for source in SOURCES)


def test_architectures_can_be_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEEDLINE_CUDA_ARCHS", "90, 61,75")
    assert cuda_archs("nvcc") == (75, 90)
    monkeypatch.setenv("FEEDLINE_CUDA_ARCHS", "sm_90")
    with pytest.raises(GpuUnavailableError, match="FEEDLINE_CUDA_ARCHS"):
        cuda_archs("nvcc")


def test_a_missing_nvcc_gives_one_error_listing_what_was_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FEEDLINE_NVCC", raising=False)
    monkeypatch.delenv("FEEDLINE_CUDA_LIB", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(build, "DEFAULT_NVCC", tmp_path / "none" / "nvcc")
    with pytest.raises(GpuUnavailableError) as caught:
        build.cuda_library_path()
    message = str(caught.value)
    for tried in (
        "FEEDLINE_NVCC (unset)",
        "nvcc on PATH",
        "$CUDA_HOME/bin/nvcc",
        "$CUDA_PATH/bin/nvcc (unset)",
        str(tmp_path / "none" / "nvcc"),
        "FEEDLINE_CUDA_LIB",
    ):
        assert tried in message


def test_a_configured_nvcc_that_does_not_exist_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FEEDLINE_NVCC", str(tmp_path / "nvcc"))
    with pytest.raises(GpuUnavailableError, match="FEEDLINE_NVCC="):
        find_nvcc()


def test_feedline_cuda_lib_overrides_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FEEDLINE_CUDA_LIB", str(tmp_path / "missing.so"))
    with pytest.raises(GpuUnavailableError, match="is not a file"):
        build.cuda_library_path()
    prebuilt = tmp_path / "prebuilt.so"
    prebuilt.write_bytes(b"")
    monkeypatch.setenv("FEEDLINE_CUDA_LIB", str(prebuilt))
    monkeypatch.setenv("FEEDLINE_NVCC", str(tmp_path / "no-nvcc"))  # not consulted
    assert build.cuda_library_path() == prebuilt


def test_without_cupy_the_cuda_backend_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from feedline.operators.gpu import backend

    monkeypatch.setitem(sys.modules, "cupy", None)  # as if CuPy were not installed
    monkeypatch.setattr(backend, "_BACKENDS", {})
    with pytest.raises(GpuUnavailableError, match=r"feedline\[gpu\]"):
        backend.cuda_backend()
