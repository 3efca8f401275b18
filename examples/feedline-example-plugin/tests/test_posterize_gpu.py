"""The GPU kernel of ``example.posterize``: its host build agrees with the NumPy kernel on any
machine, nvcc builds it where nvcc exists, and on a GPU check_operator compares both kernels."""

from __future__ import annotations

import numpy as np
import pytest
from feedline.operators.gpu.backend import Backend
from feedline.operators.gpu.build import GpuUnavailableError, cuda_archs, find_nvcc
from feedline.testing import OperatorExample, check_operator, requires_gpu

from feedline_example import gpu
from feedline_example.posterize import posterize

RNG = np.random.default_rng(3)
IMAGES = [RNG.integers(0, 256, (6 + i, 9, 3), dtype=np.uint8) for i in range(4)]


def _host() -> Backend:
    ffi, lib = gpu._library(True)
    return Backend(np, ffi, lib, emulated=True)


def test_host_build_matches_the_numpy_kernel() -> None:
    bits = [1, 3, 5, 8]
    for got, image, b in zip(gpu.posterize_batch(_host(), IMAGES, bits), IMAGES, bits, strict=True):
        np.testing.assert_array_equal(got, posterize(image, b))


def test_bad_input_is_named_before_any_launch() -> None:
    with pytest.raises(ValueError, match=r"bits must be in 1\.\.8, got 0"):
        gpu.posterize_batch(_host(), IMAGES[:1], [0])
    with pytest.raises(TypeError, match="expected uint8 data, got float32"):
        gpu.posterize_batch(_host(), [np.zeros(3, np.float32)], [2])


def test_nvcc_builds_the_cuda_library(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        find_nvcc()
    except GpuUnavailableError as error:
        pytest.skip(str(error))
    monkeypatch.setenv("FEEDLINE_CUDA_ARCHS", "75")  # one architecture keeps the build short
    assert cuda_archs(find_nvcc()) == (75,)
    path = gpu.cuda_library_path()
    assert path.is_file() and path.name.startswith("feedline_example_gpu-")


@requires_gpu
def test_check_operator_compares_the_gpu_and_cpu_kernels() -> None:
    done = check_operator("example.posterize", OperatorExample([IMAGES], ["HWC"], {"bits": 3}))
    assert "gpu" in done
