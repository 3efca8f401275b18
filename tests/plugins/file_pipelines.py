"""Real feedline pipelines for the iterator tests: ``readers.file`` over N tiny generated files
(labels ``1..N``, like DALI's ``1..7`` data set) and an ``external_source`` that stops.

Use as a context manager around a test's plugin system (it registers the plugins it needs and
closes every pipeline it made)::

    with RealPipelines(empty_plugin_system, tmp_path) as make:
        pipes = make.readers(7, 2, shards=2, pipes=2)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import feedline.operators.cpu.python.schemas
import feedline.readers.file
from feedline import Pipeline, fn, pipeline_def
from feedline.core.plugins import PluginSystem


class RealPipelines:
    """Makes pipelines and closes them on exit."""

    def __init__(self, plugin_system: PluginSystem, tmp_path: Path) -> None:
        plugin_system.register(feedline.readers.file, "file-reader")
        plugin_system.register(feedline.operators.cpu.python.schemas, "python")
        self._root = tmp_path
        self._made: list[Pipeline] = []

    def __enter__(self) -> RealPipelines:
        return self

    def __exit__(self, *exc: Any) -> None:
        for pipe in self._made:
            pipe.close()

    def readers(
        self,
        n: int,
        bs: int,
        shards: int = 1,
        pipes: int = 1,
        pad: bool = False,
        stick: bool = False,
        **reader_kwargs: Any,
    ) -> list[Pipeline]:
        """One ``readers.file`` pipeline per shard ``0..pipes-1``; output: the labels ``1..n``."""
        # Written once per data set: rewriting a file that a live reader maps is a bus error.
        folder = self._root / f"files_{n}"
        files = [str(folder / f"{i:02d}.bin") for i in range(1, n + 1)]
        if not folder.exists():
            folder.mkdir()
            for i, path in enumerate(files, start=1):
                Path(path).write_bytes(bytes([i]))

        @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=7)
        def graph(shard_id: int) -> Any:
            _, label = fn.readers.file(
                files=files,
                labels=list(range(1, n + 1)),
                num_shards=shards,
                shard_id=shard_id,
                pad_last_batch=pad,
                stick_to_shard=stick,
                name="Reader",
                **reader_kwargs,
            )
            return label

        made = [graph(shard_id=k) for k in range(pipes)]
        self._made.extend(made)
        return made

    def source(self, batches: int, bs: int = 2, shape: tuple[int, ...] = (1,)) -> Pipeline:
        """An ``external_source`` pipeline: ``batches`` batches of float32 samples (sample ``j``
        of batch ``i`` filled with ``10*i + j``), then StopIteration (again after a reset)."""

        def source(iteration: int) -> np.ndarray:
            if iteration >= batches:
                raise StopIteration
            values = 10 * iteration + np.arange(bs, dtype=np.float32)
            return np.broadcast_to(values.reshape(bs, *[1] * len(shape)), (bs, *shape)).copy()

        @pipeline_def(batch_size=bs, num_threads=1, device_id=None)
        def graph() -> Any:
            return fn.external_source(source=source, batch=True)

        pipe = graph()
        self._made.append(pipe)
        return pipe
