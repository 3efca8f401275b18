"""Overhead of the PyTorch iterator over reading the pipeline directly.

A pipeline whose ``external_source`` hands out a ``(64, 3, 224, 224)`` float32 batch (copied into a
fresh buffer every iteration, as a real pipeline produces fresh data) is read

* directly: ``share_outputs()`` → ``as_array()`` → ``release_outputs()`` → ``schedule_run()``;
* through ``feedline.plugins.pytorch.GenericIterator`` (zero-copy DLPack hand-over);
* through the iterator plus a ``clone()`` of every batch: what a copying hand-over would cost;
* through DALI's ``DALIGenericIterator`` on the same data, when ``nvidia.dali`` is installed.

The runs are interleaved and repeated; the table shows the median batches/s and the overhead
against the direct read. The iterator's overhead must stay under 5 %.

Usage: ``python benchmarks/iterators.py [--batches 150] [--repeats 5]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from feedline import fn, pipeline_def
from feedline.plugins.pytorch import GenericIterator

SHAPE = (64, 3, 224, 224)
LIMIT = 0.05


def make_source(batches: int) -> Callable[[int], np.ndarray]:
    data = np.random.default_rng(0).random(SHAPE, dtype=np.float32)

    def source(iteration: int) -> np.ndarray:
        if iteration >= batches:
            raise StopIteration
        return data

    return source


def feedline_pipeline(batches: int, threads: int) -> Any:
    @pipeline_def(batch_size=SHAPE[0], num_threads=threads, device_id=None, seed=0)
    def graph() -> Any:
        return fn.external_source(source=make_source(batches), batch=True)

    pipe = graph()
    pipe.build()
    return pipe


def run_direct(batches: int, threads: int) -> float:
    pipe = feedline_pipeline(batches, threads)
    start = time.perf_counter()
    pipe.schedule_run()
    for _ in range(batches):
        (images,) = pipe.share_outputs()
        images.as_array()
        pipe.release_outputs()
        pipe.schedule_run()
    elapsed = time.perf_counter() - start
    pipe.close()
    return batches / elapsed


def run_iterator(batches: int, threads: int, copy: bool = False) -> float:
    pipe = feedline_pipeline(batches, threads)
    start = time.perf_counter()
    it = GenericIterator(pipe, ["images"])
    count = 0
    for (batch,) in it:
        images = batch["images"].clone() if copy else batch["images"]
        assert images.shape == SHAPE
        count += 1
    elapsed = time.perf_counter() - start
    pipe.close()
    assert count == batches, count
    return batches / elapsed


def run_dali(batches: int, threads: int) -> float:
    from nvidia.dali import fn as dali_fn
    from nvidia.dali import pipeline_def as dali_pipeline_def
    from nvidia.dali.plugin.pytorch import DALIGenericIterator

    @dali_pipeline_def(batch_size=SHAPE[0], num_threads=threads, device_id=None, seed=0)
    def graph() -> Any:
        return dali_fn.external_source(source=make_source(batches), batch=True)

    pipe = graph()
    pipe.build()
    start = time.perf_counter()
    count = sum(1 for _ in DALIGenericIterator(pipe, ["images"]))
    elapsed = time.perf_counter() - start
    assert count == batches, count
    return batches / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=150, help="batches per run")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved runs per mode")
    parser.add_argument("--threads", type=int, default=2, help="pipeline num_threads")
    args = parser.parse_args()

    modes: dict[str, Callable[[], float]] = {
        "pipeline directly": lambda: run_direct(args.batches, args.threads),
        "feedline PyTorch iterator": lambda: run_iterator(args.batches, args.threads),
        "iterator + clone() (a copy)": lambda: run_iterator(args.batches, args.threads, True),
    }
    try:
        import nvidia.dali  # noqa: F401

        modes["DALI DALIGenericIterator"] = lambda: run_dali(args.batches, args.threads)
    except ImportError:
        pass
    results: dict[str, list[float]] = {name: [] for name in modes}
    for run in modes.values():  # warm-up
        run()
    for _ in range(args.repeats):
        for name, run in modes.items():
            results[name].append(run())

    mb = np.prod(SHAPE) * 4 / 2**20
    print(f"batch {SHAPE} float32 ({mb:.0f} MiB), {args.batches} batches x {args.repeats} runs")
    print(f"{'mode':<30} {'batches/s':>10} {'ms/batch':>9} {'overhead':>9}")
    base = statistics.median(results["pipeline directly"])
    for name, rates in results.items():
        rate = statistics.median(rates)
        print(f"{name:<30} {rate:>10.1f} {1000 / rate:>9.2f} {base / rate - 1:>+9.1%}")
    overhead = base / statistics.median(results["feedline PyTorch iterator"]) - 1
    verdict = "OK" if overhead < LIMIT else "TOO SLOW"
    print(f"iterator overhead {overhead:+.1%} (limit {LIMIT:.0%}): {verdict}")


if __name__ == "__main__":
    main()
