"""Test helpers of the catalogue families: one-iteration pipelines around a graph function."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from feedline import fn, pipeline_def


def feed(samples: Sequence[Any], layout: str | None = None) -> Any:
    """An external source producing ``samples`` (as arrays) in every iteration."""
    arrays = [np.asarray(s) for s in samples]
    return fn.external_source(source=lambda: arrays, batch=True, layout=layout)


def build(
    graph: Callable[[], Any], batch_size: int = 2, num_threads: int = 2, seed: int = 11
) -> list[tuple[list[np.ndarray], str]]:
    """Run ``graph`` once in a pipeline; each output as (sample copies, layout)."""

    @pipeline_def(batch_size=batch_size, num_threads=num_threads, device_id=None, seed=seed)
    def pipe() -> Any:
        return graph()

    built = pipe()
    built.build()
    outputs = built.run()
    return [([np.array(o.at(i)) for i in range(len(o))], o.layout()) for o in outputs]
