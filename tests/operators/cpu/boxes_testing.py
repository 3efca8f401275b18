"""Test helpers for the box, coordinate, random and Python operators."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from feedline.core.pipeline import Pipeline
from feedline.core.plugins import PluginSystem
from feedline.core.tensor import TensorListCPU
from tests.operators.cpu.families import use_families


def use_boxes(system: PluginSystem) -> None:
    """Register only the families these tests need (python, tensor, geometry, random)."""
    use_families(system, "python", "tensor", "geometry", "random")


def run_pipeline(
    define: Callable[[], Any],
    batch_size: int = 4,
    num_threads: int = 2,
    seed: int = 7,
    iterations: int = 1,
) -> list[tuple[TensorListCPU, ...]]:
    """Build a pipeline whose graph ``define()`` returns (one node or a tuple/list of nodes) and
    return the outputs of ``iterations`` runs."""
    pipe = Pipeline(
        batch_size, num_threads, None, seed=seed, exec_async=False, exec_pipelined=False
    )
    with pipe:
        outputs = define()
        pipe.set_outputs(*(outputs if isinstance(outputs, tuple | list) else (outputs,)))
    pipe.build()
    try:
        return [pipe.run() for _ in range(iterations)]
    finally:
        pipe.close()
