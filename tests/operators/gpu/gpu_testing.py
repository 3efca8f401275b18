"""Helpers for the GPU kernel tests: build a kernel for an operator, run its CPU twin and its
GPU kernel (on the host emulation, or on a device) on the same samples and arguments."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import (
    Batch,
    Kernel,
    KernelContext,
    SampleContext,
    SampleKernel,
    sample_rng,
)
from feedline.core.plugins import PluginSystem
from feedline.core.tensor import TensorListCPU
from feedline.operators.gpu.backend import Backend
from feedline.operators.gpu.base import GpuBatch

SEED = 1234


def cpu_plugins() -> PluginSystem:
    """A plugin system with the CPU operator plugins only (whose kernels are the reference)."""
    from tests.operators.cpu.families import FAMILIES

    system = PluginSystem(autoload=False)
    for name, module in FAMILIES.items():
        system.register(module, name)
    return system


def _load(reference: str | type) -> type:
    if isinstance(reference, type):
        return reference
    module, _, attr = reference.partition(":")
    return getattr(importlib.import_module(module), attr)


def kernels(
    system: PluginSystem, op: str, gpu: str | type, num_inputs: int = 1, **kwargs: Any
) -> tuple[Kernel, Kernel]:
    """``(cpu_kernel, gpu_kernel)`` of ``op`` built from the same validated arguments."""
    registry = system.ensure_loaded()
    entry = registry.operators[op]
    static, _ = entry.schema.validate(kwargs)
    built = []
    for device, reference in (("cpu", entry.kernels["cpu"]), ("gpu", gpu)):
        ctx = KernelContext(
            op, entry.schema, static, frozenset(), device, 8, 1, SEED, 0, num_inputs=num_inputs
        )
        kernel = _load(reference)(ctx)
        kernel.setup()
        built.append(kernel)
    return built[0], built[1]


def run_cpu(
    kernel: Kernel, inputs: Sequence[Sequence[np.ndarray]], layouts: Sequence[str]
) -> list[np.ndarray]:
    """The CPU kernel's first output for each sample."""
    n = len(inputs[0])
    if isinstance(kernel, SampleKernel):
        outs = []
        for i in range(n):
            context = SampleContext(i, 0, "", tuple(layouts), SEED)
            result = kernel.run_sample(tuple(x[i] for x in inputs), kernel.args, context)
            outs.append(result[0] if isinstance(result, tuple) else result)
        return outs
    tls = [
        TensorListCPU.from_samples(list(x), layout)
        for x, layout in zip(inputs, layouts, strict=True)
    ]
    batch = Batch(tls, {}, 0, n, SEED, lambda fn, count: [fn(i) for i in range(count)])
    return kernel.run(batch)[0].samples()


def run_gpu(
    kernel: Any, backend: Backend, inputs: Sequence[Sequence[Any]], layouts: Sequence[str]
) -> tuple[list[Any], str]:
    """The GPU kernel's first output (samples and layout) on ``backend``."""
    n = len(inputs[0])
    samples = [[backend.asarray(s) for s in x] for x in inputs]
    args = [dict(kernel.args) for _ in range(n)]
    batch = GpuBatch(backend, samples, list(layouts), args, lambda i: sample_rng(SEED, 0, i))
    results = kernel.compute(batch)
    return results[0]


def as_numpy(array: Any) -> np.ndarray:
    """A host copy of a NumPy or CuPy array."""
    return array.get() if hasattr(array, "get") else np.asarray(array)


def assert_same(cpu: Sequence[np.ndarray], gpu: Sequence[Any], tolerance: float = 0.0) -> None:
    """Equal shapes and dtypes; values equal (integers) or within ``tolerance`` (relative to
    the magnitude for floats, absolute for integers), NaN where the CPU has NaN."""
    assert len(cpu) == len(gpu)
    for i, (expected, got) in enumerate(zip(cpu, gpu, strict=True)):
        got = as_numpy(got)
        assert got.shape == expected.shape, (i, got.shape, expected.shape)
        assert got.dtype == expected.dtype, (i, got.dtype, expected.dtype)
        if tolerance == 0:
            np.testing.assert_array_equal(got, expected, err_msg=f"sample {i}")
        elif expected.dtype.kind == "f":
            # Relative to the sample's magnitude: a value near zero that comes out of a sum of
            # large terms (colour twist's matrix rows) carries those terms' rounding error.
            finite = np.abs(expected[np.isfinite(expected)])
            magnitude = max(1.0, float(finite.max(initial=0)))
            np.testing.assert_allclose(
                got, expected, rtol=tolerance, atol=tolerance * magnitude, err_msg=f"sample {i}"
            )
        else:
            diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
            assert diff.max(initial=0) <= tolerance, f"sample {i}: differs by {diff.max()}"
