"""Running a reader for one batch in a pipeline, for the tests of the readers."""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline import fn, pipeline_def


def read(op: str, batch: int, num_threads: int = 1, **args: Any) -> list[list[np.ndarray]]:
    """One batch of ``fn.<op>(**args)``: per output, its samples (copies)."""

    @pipeline_def(batch_size=batch, num_threads=num_threads, device_id=None, seed=3)
    def pipe():  # type: ignore[no-untyped-def]
        target: Any = fn
        for part in op.split("."):
            target = getattr(target, part)
        outputs = target(**args)
        return tuple(outputs) if isinstance(outputs, list) else outputs

    p = pipe()
    p.build()
    try:
        return [[np.array(tl.at(i)) for i in range(batch)] for tl in p.run()]
    finally:
        p.close()


def assert_thread_independent(op: str, batch: int, **args: Any) -> None:
    """The same batch with 1 and 3 threads (shuffled, so that order matters)."""
    one = read(op, batch, 1, random_shuffle=True, **args)
    three = read(op, batch, 3, random_shuffle=True, **args)
    for a, b in zip(one, three, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
