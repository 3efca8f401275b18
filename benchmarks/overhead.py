"""Per-iteration overhead of a small arithmetic pipeline: feedline vs NVIDIA DALI (CPU only).

Graph (the same for both frameworks, ``device_id=None``, batch 256):

    x = external_source()          # 256 small float32 arrays of shape (16,), one list per batch
    out = abs(((x + 1) * 2 - x) / 3)   # five arithmetic operators

The work per iteration is tiny (4096 floats), so iterations per second measure what a framework
spends around its operators: scheduling, the external-source copy, output hand-over. Each
configuration runs with the executors' defaults (pipelined, asynchronous, queue depth 2) and
synchronously (``exec_pipelined=False, exec_async=False``); runs of the two frameworks are
interleaved and repeated, the median counts. The first outputs of both are compared so the graphs
are known to agree. DALI rows need ``nvidia.dali`` (``nvidia-dali-cuda120``, CPU mode).

Target: feedline's time per iteration at most 1.5× DALI's.

Measured on the development machine (2 CPU cores shared with other jobs, load average ≈ 7;
Python 3.11, NumPy 2.4, DALI 2.4.0; ``--threads 2 --iterations 300 --repeats 7``)::

    mode     framework   it/s (median)      min–max  µs/iteration  time vs DALI  CPU µs/it
    default  feedline              388     249–1174          2576         0.55×        969
    default  DALI                  215       99–341          4643         1.00×       4107
    sync     feedline              383      301–533          2612         0.56×        926
    sync     DALI                  216       96–262          4625         1.00×       3856

Wall-clock figures swing widely on a loaded machine: over seven runs feedline took 0.06–0.55×
DALI's time per iteration in the default mode (plus one 2.0× outlier) and 0.20–1.16× in the sync
mode. CPU time per iteration is steadier: feedline spends a quarter of DALI's or less. Target
met: at most 1.5× DALI's time per iteration.

Usage: ``python benchmarks/overhead.py [--iterations 300] [--repeats 5] [--threads 2]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

BATCH = 256
SAMPLE_SHAPE = (16,)
MODES = {
    "default": {},
    "sync": {"exec_pipelined": False, "exec_async": False},
}


def make_batch() -> list[np.ndarray]:
    """The batch handed out by the external source in every iteration."""
    rng = np.random.default_rng(0)
    return [rng.standard_normal(SAMPLE_SHAPE).astype(np.float32) for _ in range(BATCH)]


def graph(x: Any) -> Any:
    """The five arithmetic operators, written once for both frameworks."""
    return abs(((x + 1) * 2 - x) / 3)


def feedline_pipeline(batch: list[np.ndarray], threads: int, mode: str) -> Any:
    """The graph as a built feedline pipeline."""
    from feedline import fn, pipeline_def

    @pipeline_def(batch_size=BATCH, num_threads=threads, device_id=None, **MODES[mode])
    def pipe() -> Any:
        return graph(fn.external_source(source=lambda: batch))

    p = pipe()
    p.build()
    return p


def dali_pipeline(batch: list[np.ndarray], threads: int, mode: str) -> Any | None:
    """The graph as a built DALI pipeline, or None when DALI is not installed."""
    try:
        from nvidia.dali import fn, pipeline_def
    except ImportError:
        return None

    @pipeline_def(batch_size=BATCH, num_threads=threads, device_id=None, **MODES[mode])
    def pipe() -> Any:
        return graph(fn.external_source(source=lambda: batch))

    p = pipe()
    p.build()
    return p


def first_output(pipe: Any) -> np.ndarray:
    """The first output of one iteration as a ``(batch, ...)`` array."""
    (out,) = pipe.run()
    return np.stack([np.asarray(out[i]) for i in range(len(out))])


def measure(run: Callable[[], Any], iterations: int) -> tuple[float, float]:
    """Run ``iterations`` iterations after a short warm-up.

    Returns:
        Iterations per second (wall clock) and CPU seconds per iteration (all threads).
    """
    for _ in range(10):
        run()
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(iterations):
        run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return iterations / wall, cpu / iterations


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=300, help="timed iterations per run")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved runs per framework")
    parser.add_argument("--threads", type=int, default=2, help="num_threads of both pipelines")
    args = parser.parse_args()

    batch = make_batch()
    print(f"batch {BATCH} × {SAMPLE_SHAPE} float32, 5 arithmetic ops, threads {args.threads}")
    print(
        f"{'mode':8} {'framework':10} {'it/s (median)':>14} {'min–max':>12} "
        f"{'µs/iteration':>13} {'time vs DALI':>13} {'CPU µs/it':>10}"
    )
    for mode in MODES:
        pipes = {"feedline": feedline_pipeline(batch, args.threads, mode)}
        dali = dali_pipeline(batch, args.threads, mode)
        if dali is not None:
            pipes["DALI"] = dali
            np.testing.assert_allclose(
                first_output(pipes["feedline"]), first_output(dali), rtol=1e-6, atol=1e-6
            )
        rates: dict[str, list[float]] = {name: [] for name in pipes}
        cpu: dict[str, list[float]] = {name: [] for name in pipes}
        for _ in range(args.repeats):
            for name, pipe in pipes.items():
                rate, cpu_per_iteration = measure(pipe.run, args.iterations)
                rates[name].append(rate)
                cpu[name].append(cpu_per_iteration)
        medians = {name: statistics.median(values) for name, values in rates.items()}
        for name, rate in medians.items():
            ratio = f"{medians['DALI'] / rate:.2f}×" if "DALI" in medians else "n/a"
            spread = f"{min(rates[name]):.0f}–{max(rates[name]):.0f}"
            cpu_us = 1e6 * statistics.median(cpu[name])
            print(
                f"{mode:8} {name:10} {rate:14.0f} {spread:>12} {1e6 / rate:13.0f} "
                f"{ratio:>13} {cpu_us:10.0f}"
            )
        for pipe in pipes.values():
            close = getattr(pipe, "close", None)
            if close is not None:
                close()
    if "DALI" not in pipes:
        print("nvidia.dali is not installed: no DALI figures (pip install nvidia-dali-cuda120)")


if __name__ == "__main__":
    main()
