"""Soak test: the ResNet-50 train pipeline for many iterations, resident memory over time.

Runs ``imagenet.py``'s train pipeline (readers.file with shuffling → decoders.image →
random_resized_crop → crop_mirror_normalize, batch 64) for ``--iterations`` iterations (10,000
by default, about 15 minutes on 2 cores) and prints, every ``--every`` iterations, the resident
set size, the open file descriptors and the live threads. Memory that grows after the warm-up
(the first ``--warmup`` iterations: buffers, kernel caches and allocator arenas reach their steady
size there) is a leak; the last line compares the final RSS with the one at the end of the
warm-up against the 5 % budget and exits non-zero past it.

Data: ``--data DIR`` of JPEGs, or 64 photo-like JPEGs generated into a temporary folder.

Usage: ``python benchmarks/soak.py [--iterations 10000] [--every 500] [--warmup 1000]
[--threads 2] [--data DIR]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from imagenet import build_pipeline, image_files

#: Allowed RSS growth between the end of the warm-up and the last iteration.
BUDGET = 0.05


def generate_images(folder: Path, count: int = 64) -> None:
    """Photo-sized JPEGs with smooth content and noise (so they compress like photos)."""
    rng = np.random.default_rng(0)
    for i in range(count):
        h, w = rng.integers(300, 500), rng.integers(400, 640)
        y, x = np.mgrid[0:h, 0:w]
        base = np.stack([(x * (c + 1) + y * (3 - c)) % 256 for c in range(3)], axis=-1)
        noisy = base + rng.normal(0, 12, base.shape)
        Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).save(
            folder / f"{i:03d}.jpg", quality=90
        )


def rss_mib() -> float:
    """This process's resident set size in MiB."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def open_fds() -> int:
    """File descriptors this process holds."""
    return len(os.listdir("/proc/self/fd"))


def soak(files: list[str], args: argparse.Namespace) -> float:
    """Run the pipeline, print a row every ``args.every`` iterations; return the RSS growth."""
    pipe = build_pipeline("feedline", files, "train", args.threads)
    print(f"{'iteration':>9} {'seconds':>8} {'img/s':>7} {'RSS MiB':>8} {'fds':>5} {'threads':>7}")
    start = last = time.perf_counter()
    warm_rss = rss = None
    try:
        for it in range(1, args.iterations + 1):
            pipe.run()
            if it % args.every and it != args.iterations:
                continue
            now = time.perf_counter()
            rate = args.every * 64 / (now - last) if it % args.every == 0 else float("nan")
            last = now
            rss = rss_mib()
            print(
                f"{it:>9} {now - start:>8.0f} {rate:>7.0f} {rss:>8.1f} {open_fds():>5} "
                f"{threading.active_count():>7}",
                flush=True,
            )
            if warm_rss is None and it >= args.warmup:
                warm_rss = rss
    finally:
        pipe.close()
    if warm_rss is None or rss is None:
        raise SystemExit("--warmup must be smaller than --iterations")
    return (rss - warm_rss) / warm_rss


def main() -> None:
    """Parse the arguments, run the soak and judge the growth."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", help="a folder of JPEGs (default: generated ones)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.data is None:
            generate_images(Path(tmp))
        files = image_files(args.data or tmp)
        growth = soak(files, args)
    verdict = "within" if growth < BUDGET else "OVER"
    print(f"RSS growth after warm-up: {growth:+.1%} ({verdict} the {BUDGET:.0%} budget)")
    if growth >= BUDGET:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
