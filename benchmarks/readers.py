"""Throughput of ``readers.file`` alone (samples/s), beside DALI's ``readers.file`` when importable.

Reads the JPEGs of ``$FEEDLINE_SHARED_DATA/photos`` (or generated files when absent) in
the ``files`` mode, through a full pipeline, and prints one row per configuration. The 100
photos come round within every batch, so with mmap both libraries mostly reuse a mapping that
is still alive (feedline's ``FileBytes``, DALI's ``mapped_files``); the last row reads 2000
distinct paths (hard links to the photos) so that every sample maps its file anew.

Last measured (5 runs, batch 128, 2 threads, on the shared 2-core machine; feedline / DALI):

=============================  ===================  ==================  ============
configuration                  feedline samples/s   DALI samples/s      ratio
=============================  ===================  ==================  ============
mmap                           291,000-550,000      35,000-73,000       5.0-15.6x
plain reads (dont_use_mmap)    28,000-38,000        20,000-26,000       1.23-1.90x
random_shuffle                 156,000-328,000      58,000-78,000       2.1-5.1x
mmap, 2000 distinct paths      49,000-64,000        26,000-34,000       1.78-2.26x
=============================  ===================  ==================  ============

CPU per sample: feedline 1.8-3.6 / 27-35 / 3.0-6.1 / 17-21 us, DALI 24-31 / 51-62 / 22-27 /
44-56 us. feedline hands each file on as a view of its mapping; DALI copies every file into its
output batch. This benchmark never touches the bytes, so the page faults a decoder would take on
a fresh mapping are not counted.

Usage: ``python benchmarks/readers.py [--batch-size 128] [--threads 2] [--seconds 6] [--rounds 3]
[--distinct 2000]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

_DATA = os.environ.get("FEEDLINE_SHARED_DATA")
PHOTOS = Path(_DATA or Path(__file__).resolve().parents[2] / "shared" / "data") / "photos"


def dataset(tmp: str) -> tuple[list[str], str]:
    """The files to read and a description of them."""
    if PHOTOS.is_dir():
        files = sorted(str(p) for p in PHOTOS.iterdir() if p.suffix.lower() in (".jpeg", ".jpg"))
        return files, f"{len(files)} photos from {PHOTOS.resolve()}"
    rng = np.random.default_rng(0)
    files = []
    for i in range(100):
        path = os.path.join(tmp, f"{i:03d}.jpg")
        with open(path, "wb") as f:
            f.write(rng.integers(0, 256, 97_000, dtype=np.uint8).tobytes())
        files.append(path)
    return files, "100 generated files of 97 kB"


def distinct_paths(files: list[str], tmp: str, count: int) -> list[str]:
    """``count`` distinct paths cycling over ``files`` (hard links, else copies): with more
    paths than samples alive at once, no file is read while an earlier mapping of it lives."""
    paths = []
    for i in range(count):
        source = files[i % len(files)]
        path = os.path.join(tmp, f"distinct-{i:05d}{Path(source).suffix}")
        try:
            os.link(source, path)
        except OSError:
            shutil.copyfile(source, path)
        paths.append(path)
    return paths


def measure(run: Callable[[], int], seconds: float) -> tuple[float, float]:
    """Samples per second and process CPU microseconds per sample of ``run`` (which returns the
    samples it produced) over one window."""
    count, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        count += run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return count / wall, cpu / count * 1e6


def feedline_pipe(files: list[str], bs: int, threads: int, **kw: Any) -> tuple[Any, Any]:
    """A built feedline pipeline reading ``files`` and its ``close``."""
    import feedline.readers.file as file_plugin
    from feedline import fn, pipeline_def
    from feedline.core.plugins import PluginSystem, use_plugin_system

    system = PluginSystem(autoload=False)
    system.register(file_plugin, "file-reader")
    with use_plugin_system(system):

        @pipeline_def(batch_size=bs, num_threads=threads, device_id=None, seed=1)
        def pipe() -> Any:
            data, label = fn.readers.file(files=files, name="Reader", **kw)
            return data, label

        p = pipe()
        p.build()
    return p, p.close


def dali_pipe(files: list[str], bs: int, threads: int, **kw: Any) -> tuple[Any, Any]:
    """A built DALI pipeline reading ``files`` (nothing to close)."""
    from nvidia.dali import fn, pipeline_def

    @pipeline_def(batch_size=bs, num_threads=threads, device_id=None, seed=1)
    def pipe() -> Any:
        data, label = fn.readers.file(files=files, name="Reader", **kw)
        return data, label

    p = pipe()
    p.build()
    return p, lambda: None


def compare(makers: list[Callable[[], tuple[Any, Any]]], seconds: float, rounds: int
            ) -> list[tuple[float, float]]:  # fmt: skip
    """Best samples/s and CPU us/sample of each pipeline over ``rounds`` interleaved windows
    (the machine may be shared: interleaving and best-of keep the comparison fair)."""
    pipes = [make() for make in makers]
    best = [(0.0, float("inf"))] * len(pipes)
    for p, _ in pipes:
        for _ in range(5):
            p.run()
    for _ in range(rounds):
        for i, (p, _) in enumerate(pipes):
            rate, cpu = measure(lambda p=p: len(p.run()[0]), seconds / rounds)
            best[i] = (max(best[i][0], rate), min(best[i][1], cpu))
    for _, close in pipes:
        close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=6.0, help="per pipeline and config")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved windows (best kept)")
    parser.add_argument("--distinct", type=int, default=2000,
                        help="paths of the distinct-paths row (0: no such row)")  # fmt: skip
    opts = parser.parse_args()
    try:
        import nvidia.dali  # noqa: F401

        has_dali = True
    except ImportError:
        has_dali = False
    configs: list[tuple[str, bool, dict[str, Any]]] = [
        ("mmap", False, {}),
        ("plain reads (dont_use_mmap)", False, {"dont_use_mmap": True}),
        ("random_shuffle", False, {"random_shuffle": True}),
    ]
    if opts.distinct:
        configs.append((f"mmap, {opts.distinct} distinct paths", True, {}))
    with tempfile.TemporaryDirectory() as tmp:
        files, what = dataset(tmp)
        print(f"readers.file alone: {what}, batch {opts.batch_size}, {opts.threads} threads")
        print(f"{'configuration':<28} {'feedline/s':>11} {'DALI/s':>9} {'ratio':>6} "
              f"{'feedline CPU us':>16} {'DALI CPU us':>12}")  # fmt: skip
        for label, distinct, kw in configs:
            paths = distinct_paths(files, tmp, opts.distinct) if distinct else files
            makers = [lambda p=paths, kw=kw: feedline_pipe(p, opts.batch_size, opts.threads, **kw)]
            if has_dali:
                makers.append(
                    lambda p=paths, kw=kw: dali_pipe(p, opts.batch_size, opts.threads, **kw)
                )
            rates = compare(makers, opts.seconds, opts.rounds)
            (ours, our_cpu), (theirs, their_cpu) = rates if has_dali else (rates[0], (0.0, 0.0))
            ratio = f"{ours / theirs:6.2f}" if has_dali else f"{'':>6}"
            dali = f"{theirs:>9,.0f}" if has_dali else f"{'n/a':>9}"
            dali_cpu = f"{their_cpu:>12.1f}" if has_dali else f"{'n/a':>12}"
            print(f"{label:<28} {ours:>11,.0f} {dali} {ratio} {our_cpu:>16.1f} {dali_cpu}")
        if not has_dali:
            print("DALI (nvidia.dali) is not importable: no baseline in this run")


if __name__ == "__main__":
    main()
