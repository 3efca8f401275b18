"""The gpu plugin: which operators get a gpu kernel, and that every kernel named resolves."""

from __future__ import annotations

import importlib

import feedline.operators.gpu as gpu_plugin
from feedline.operators.gpu import GPU_KERNELS
from feedline.operators.gpu.base import GpuKernel
from tests.operators.gpu.gpu_testing import cpu_plugins


def test_the_gpu_plugin_adds_gpu_kernels_to_operators_the_cpu_plugins_own() -> None:
    system = cpu_plugins()
    system.register(gpu_plugin, "gpu")
    registry = system.ensure_loaded()
    assert not system.failures
    for name, reference in GPU_KERNELS.items():
        entry = registry.operators[name]
        assert entry.kernels["gpu"] == reference
        assert "cpu" in entry.kernels  # the CPU plugin's kernel stays
    arithmetic = [n for n in registry.operators if n.startswith("arithmetic.")]
    assert arithmetic
    for name in arithmetic:
        assert registry.operators[name].kernels["gpu"].endswith("math_ops:ArithmeticGpu")


def test_every_gpu_kernel_named_is_a_gpu_kernel_class() -> None:
    for reference in {*GPU_KERNELS.values(), "feedline.operators.gpu.math_ops:ArithmeticGpu"}:
        module, _, attr = reference.partition(":")
        kernel = getattr(importlib.import_module(module), attr)
        assert issubclass(kernel, GpuKernel)


def test_gpu_kernels_refuse_to_run_sample_by_sample() -> None:
    import pytest

    from feedline.operators.gpu.window_ops import FlipGpu

    kernel = FlipGpu.__new__(FlipGpu)
    with pytest.raises(TypeError, match="runs whole batches"):
        kernel.run_sample((), {}, None)
