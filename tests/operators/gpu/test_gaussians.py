"""``draw_gaussians``'s GPU kernel (``kernels/gaussians.cu``) against its CPU kernel: on the host
emulation of the CUDA source (every machine with a C++ compiler) and on a CUDA device (``gpu``
marker). Tolerance: 2 ulp-ish (1e-6 relative), for the float32 ``exp`` of CUDA and glibc against
NumPy's SIMD one; everything else (windows, slices, the max rule) must agree exactly."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feedline.core.plugins import PluginSystem
from feedline.operators.gpu.backend import Backend, cuda_backend, host_backend
from tests.operators.cpu.heatmaps.test_gaussians import scenes
from tests.operators.gpu.gpu_testing import assert_same, cpu_plugins, kernels, run_cpu, run_gpu

KERNEL = "feedline.operators.gpu.gaussians_ops:DrawGaussiansGpu"
EXAMPLES = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def system() -> PluginSystem:
    return cpu_plugins()


@pytest.fixture(scope="module", params=["host", pytest.param("cuda", marks=pytest.mark.gpu)])
def backend(request: pytest.FixtureRequest) -> Backend:
    """The host emulation, or the CUDA device."""
    return host_backend() if request.param == "host" else cuda_backend()


def _batch(scene_list: list[dict[str, Any]]) -> list[list[np.ndarray]]:
    keys = ("heat_map", "active", "class_ids", "centers", "radii")
    return [[scene[key] for scene in scene_list] for key in keys]


@EXAMPLES
@given(st.lists(scenes(), min_size=1, max_size=3), st.sampled_from([1 / 3, 0.75]))
def test_gpu_kernel_matches_the_cpu_kernel(
    backend: Backend, system: PluginSystem, scene_list: list, factor: float
) -> None:
    slices = max(s["heat_map"].shape[0] if s["heat_map"].ndim == 3 else 1 for s in scene_list)
    k = [0.5 + 0.25 * i for i in range(slices)]
    cpu, gpu = kernels(
        system, "draw_gaussians", KERNEL, 5, k_for_classes=k, radius_to_sigma_factor=factor
    )
    inputs = _batch(scene_list)
    expected = run_cpu(cpu, inputs, [""] * 5)
    got, _ = run_gpu(gpu, backend, inputs, [""] * 5)
    assert_same(expected, got, 1e-6)


def test_special_radii_agree(backend: Backend, system: PluginSystem) -> None:
    radii = np.array([0.0, np.nan, np.inf, 1e30, 2.5], np.float32)
    scene = {
        "heat_map": np.zeros((2, 7, 9), np.float32),
        "active": np.ones(5, bool),
        "class_ids": np.array([0, 0, 1, 0, 0], np.int32),
        "centers": np.array([[1, 1], [3, 3], [4, 2], [-50, 90], [8, 6]], np.int32),
        "radii": radii,
    }
    cpu, gpu = kernels(
        system, "draw_gaussians", KERNEL, 5, k_for_classes=[1, 2], radius_to_sigma_factor=0.3
    )
    inputs = _batch([scene])
    expected = run_cpu(cpu, inputs, [""] * 5)
    got, _ = run_gpu(gpu, backend, inputs, [""] * 5)
    assert_same(expected, got, 1e-6)
    assert np.all(expected[0][1] == 2.0)


def test_bad_class_ids_raise_before_the_launch(backend: Backend, system: PluginSystem) -> None:
    scene = {
        "heat_map": np.zeros((1, 4, 4), np.float32),
        "active": np.ones(1, bool),
        "class_ids": np.array([3], np.int32),
        "centers": np.array([[1, 1]], np.int32),
        "radii": np.array([1.0], np.float32),
    }
    _, gpu = kernels(
        system, "draw_gaussians", KERNEL, 5, k_for_classes=[1.0], radius_to_sigma_factor=0.3
    )
    with pytest.raises(ValueError, match=r"class_id for active sample \(3\) exceeds"):
        run_gpu(gpu, backend, _batch([scene]), [""] * 5)
