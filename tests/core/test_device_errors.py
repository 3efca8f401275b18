"""GPU operators where no GPU can run them fail as DALI's do: a RuntimeError at the same point
(definition or build), whose message holds DALI's wording."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from feedline import Pipeline, fn, pipeline_def
from feedline.core.plugins import PluginSystem


@pytest.fixture(autouse=True)
def _plugins(plugin_system: PluginSystem) -> None:
    """The installed plugins (the GPU kernels of flip and the transfers among them)."""


def images() -> list[np.ndarray]:
    return [np.zeros((4, 5, 3), np.uint8)] * 2


GRAPHS: dict[str, Callable[[], Any]] = {
    ".gpu() at the end": lambda: fn.external_source(source=images).gpu(),
    ".gpu() in the middle": lambda: fn.flip(fn.external_source(source=images).gpu()),
    "a gpu source": lambda: fn.external_source(source=images, device="gpu"),
}


@pytest.mark.parametrize("graph", GRAPHS.values(), ids=GRAPHS.keys())
def test_cpu_only_pipeline_with_gpu_work_fails_at_build(graph: Callable[[], Any]) -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe() -> Any:
        return graph()

    p = pipe()  # defining it is fine, as in DALI
    with pytest.raises(RuntimeError, match="The pipeline requires a CUDA-capable GPU but"):
        p.build()
    p.close()


@pytest.mark.parametrize("graph", GRAPHS.values(), ids=GRAPHS.keys())
def test_gpu_pipeline_without_cuda_fails_at_build(
    graph: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # as on a machine without CUDA

    @pipeline_def(batch_size=2, num_threads=1, device_id=0)
    def pipe() -> Any:
        return graph()

    p = pipe()
    with pytest.raises(RuntimeError, match="while CUDA is not available"):
        p.build()
    p.close()


def test_gpu_operator_given_a_cpu_batch_fails_when_called() -> None:

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe() -> Any:
        data = fn.external_source(source=images)
        with pytest.raises(RuntimeError, match='stored on incompatible device "cpu"') as error:
            fn.flip(data, device="gpu")
        assert isinstance(error.value, ValueError)  # what feedline raised before
        return data

    pipe().close()


def test_an_operator_without_a_gpu_kernel_in_a_cpu_only_pipeline_fails_at_build() -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe() -> Any:
        return fn.rotate(fn.external_source(source=images).gpu(), angle=25)  # no gpu kernel

    p = pipe()
    with pytest.raises(RuntimeError, match="The pipeline requires a CUDA-capable GPU but"):
        p.build()
    p.close()


def test_an_operator_without_a_gpu_kernel_defined_outside_a_pipeline_fails_at_build() -> None:
    data = fn.external_source(source=images)
    rotated = fn.rotate(data.gpu(), angle=25)  # classic style: no pipeline yet, no error yet
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    pipe.set_outputs(rotated)
    with pytest.raises(RuntimeError, match="The pipeline requires a CUDA-capable GPU but"):
        pipe.build()
    pipe.close()


def test_an_operator_without_a_gpu_kernel_is_refused_at_once_where_a_gpu_is_asked_for() -> None:
    with (
        Pipeline(batch_size=2, num_threads=1, device_id=0),
        pytest.raises(ValueError, match=r"'rotate' has no 'gpu' kernel registered"),
    ):
        fn.rotate(fn.external_source(source=images).gpu(), angle=25)
