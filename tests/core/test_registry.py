"""Devices come from kernels: the registry holds one kernel per (operator, device) with the plugin
that registered it, and ``fn`` calls, placement and the generated docs ask it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from feedline import Pipeline, fn, pipeline_def
from feedline.core.execution.device import use_device
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.core.registry import (
    TRANSFER_TO_GPU,
    KernelEntry,
    Registry,
)
from feedline.core.schema import OpSchema

from .fake_device import FakeStream

FAKE_SITE = Path(__file__).parent / "fake_site"
PLUGIN = "fake-gpu-flip"


@pytest.fixture
def with_gpu_flip(monkeypatch: pytest.MonkeyPatch) -> PluginSystem:
    """Every installed plugin plus the fake one adding a ``gpu`` kernel to ``flip``."""
    monkeypatch.syspath_prepend(str(FAKE_SITE))
    monkeypatch.delenv("FEEDLINE_PLUGINS", raising=False)
    # The built-in gpu plugins own flip's real gpu kernel and the transfers' kernels: off, so
    # the fake one can add its own.
    monkeypatch.setenv(
        "FEEDLINE_DISABLED_PLUGINS", "fake-good,fake-broken,fake-conflict,gpu,gpu-transfer"
    )
    monkeypatch.delitem(sys.modules, "fake_gpu_flip_plugin", raising=False)
    with use_plugin_system(PluginSystem()) as system, use_device(FakeStream):
        system.ensure_loaded()
        yield system


def test_a_plugin_adds_a_device_to_an_operator_it_does_not_own(
    with_gpu_flip: PluginSystem,
) -> None:
    entry = with_gpu_flip.registry.operators["flip"]
    assert entry.owner != PLUGIN and entry.kernel_owners["cpu"] == entry.owner
    assert entry.devices == ("cpu", "gpu")
    gpu = KernelEntry("gpu", "fake_gpu_flip_plugin:FakeGpuFlipKernel", PLUGIN)
    assert entry.kernel_entries == (KernelEntry("cpu", entry.kernels["cpu"], entry.owner), gpu)
    assert f"Supported devices: ``cpu`` ({entry.owner}), ``gpu`` ({PLUGIN})." in fn.flip.__doc__
    assert "one of cpu, gpu." in fn.flip.__doc__
    info = next(p for p in with_gpu_flip.plugins if p.name == PLUGIN)
    assert info.kernels == ["flip:gpu", "_transfer_to_gpu:mixed", "_transfer_to_cpu:gpu"]
    assert info.operators == []


def test_the_added_kernel_runs_where_the_graph_places_it(with_gpu_flip: PluginSystem) -> None:
    images = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3) + i for i in range(2)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=0, prefetch_queue_depth=1)
    def flipped():
        data = fn.external_source(source=lambda: images, layout="HWC")
        on_gpu = fn.flip(data.gpu(), vertical=1, device="gpu")
        assert on_gpu.device == "gpu"
        return on_gpu.cpu(), fn.flip(data, vertical=1)

    pipe = flipped()
    try:
        from_gpu, from_cpu = pipe.run()
        placed = {(op.schema.name, op.device) for op in pipe._built_ops}
    finally:
        pipe.close()
    assert {("flip", "gpu"), ("flip", "cpu"), ("_transfer_to_gpu", "mixed")} <= placed
    for index, image in enumerate(images):
        np.testing.assert_array_equal(from_gpu.at(index), image[::-1, ::-1])
        np.testing.assert_array_equal(from_gpu.at(index), from_cpu.at(index))


def test_a_device_without_a_kernel_is_refused_naming_those_with_one(
    with_gpu_flip: PluginSystem,
) -> None:
    with (
        Pipeline(batch_size=1, num_threads=1, device_id=0),
        pytest.raises(ValueError, match=r"no 'mixed' kernel registered \(available: cpu, gpu\)"),
    ):
        fn.flip(fn.constant(idata=[1]), device="mixed")


def test_without_the_plugin_flip_has_only_its_cpu_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEEDLINE_DISABLED_PLUGINS", "gpu,gpu-transfer")  # built-in GPU kernels
    monkeypatch.delenv("FEEDLINE_PLUGINS", raising=False)
    with use_plugin_system(PluginSystem()) as plugin_system:
        assert plugin_system.ensure_loaded().operators["flip"].devices == ("cpu",)
        _refuses_missing_devices()


def _refuses_missing_devices() -> None:
    with (
        Pipeline(batch_size=1, num_threads=1, device_id=0),
        pytest.raises(ValueError, match=r"no 'gpu' kernel registered \(available: cpu\)"),
    ):
        fn.flip(fn.constant(idata=[1]), device="gpu")
    # a RuntimeError too, as DALI raises for an operator without the device's implementation
    with (
        Pipeline(batch_size=1, num_threads=1, device_id=0),
        pytest.raises(RuntimeError, match=r"no 'gpu' kernel registered"),
    ):
        fn.flip(fn.constant(idata=[1]), device="gpu")
    with (
        Pipeline(batch_size=1, num_threads=1, device_id=0),
        pytest.raises(ValueError, match=r"decoders.image.*no 'mixed' kernel"),
    ):
        fn.decoders.image(fn.constant(idata=[1]), device="mixed")


def test_kernels_only_for_known_operators_and_devices() -> None:
    registry = Registry()
    registry.add_operator(OpSchema("op", "An operator."), owner="a")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        registry.add_kernel("op", "tpu", "m:K")
    with pytest.raises(ValueError, match="unknown operator 'nope'"):
        registry.add_kernel("nope", "cpu", "m:K")
    registry.add_kernel("op", "gpu", "m:G", owner="b")
    with pytest.raises(ValueError, match="already has a gpu kernel from 'b'; 'c' passed another"):
        registry.add_kernel("op", "gpu", "m:G2", owner="c")
    assert registry.operators["op"].kernel_owners == {"gpu": "b"}


def test_core_operators_take_kernels_but_not_new_schemas() -> None:
    registry = Registry()
    assert registry.operators == {}
    assert registry.entry(TRANSFER_TO_GPU.name).devices == ()
    with pytest.raises(ValueError, match="defined by feedline.core; 'x' may only add kernels"):
        registry.add_operator(TRANSFER_TO_GPU, owner="x")
    registry.add_kernel(TRANSFER_TO_GPU.name, "mixed", "m:T", owner="x")
    assert registry.operators[TRANSFER_TO_GPU.name].kernel_owners == {"mixed": "x"}
    assert registry.entry("nope") is None


def test_an_alias_shares_the_kernels_added_to_its_operator_later() -> None:
    registry = Registry()
    registry.add_operator(OpSchema("op", "An operator."), {"cpu": "m:Cpu"}, owner="a")
    registry.add_alias("old_op", "op", "The older name of op.", owner="b")
    registry.add_kernel("op", "gpu", "m:Gpu", owner="c")
    alias = registry.entry("old_op")
    assert alias is not None and alias.schema.name == "old_op"
    assert alias.schema.doc == "The older name of op."
    assert alias.kernels == {"cpu": "m:Cpu", "gpu": "m:Gpu"}
    with pytest.raises(ValueError, match="unknown operator 'nope'"):
        registry.add_alias("other", "nope", "")
    with pytest.raises(ValueError, match="'old_op' is registered by 'b'"):
        registry.add_alias("old_op", "op", "", owner="d")
