"""Shared helpers: run one augmentation on a fixed batch of images."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from feedline import fn, pipeline_def, types
from feedline.core.pipeline.conditionals import do_not_convert


def photo_like(seed: int, height: int = 24, width: int = 20) -> np.ndarray:
    """A smooth uint8 HWC image with noise: every value range is represented."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([x * 255 / width, y * 255 / height, (x + y) * 127 / (height + width)], -1)
    return np.clip(base + rng.normal(0, 30, base.shape), 0, 255).astype(np.uint8)


def run_on(
    images: Sequence[np.ndarray],
    graph: Callable,
    num_threads: int = 2,
    seed: int = 11,
    extra: Sequence[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """``graph(images_node[, extra_node])`` in a conditional pipeline; its first output.

    ``graph`` (often a lambda) is kept as written: the conditionals come from auto_aug.
    """
    graph = do_not_convert(graph)

    @pipeline_def(
        batch_size=len(images),
        num_threads=num_threads,
        device_id=None,
        seed=seed,
        enable_conditionals=True,
    )
    def pipe():
        data = fn.external_source(source=lambda: list(images), layout="HWC", batch=True)
        if extra is None:
            return graph(data)
        more = fn.external_source(source=lambda: list(extra), batch=True, dtype=types.INT32)
        return graph(data, more)

    pipeline = pipe()
    pipeline.build()
    (out,) = pipeline.run()[:1]
    return [np.asarray(sample) for sample in out]


@pytest.fixture
def images() -> list[np.ndarray]:
    return [photo_like(seed) for seed in range(4)]
