"""``feedline bench``: the ImageNet-style train pipeline's throughput beside a PyTorch baseline.

Both run on the same folder of JPEGs (``--data``, or images generated once into the cache
folder), each in its own process so that peak memory is its own; see
:mod:`feedline.cli.bench_worker` for what is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from feedline.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Command, CommandError, progress
from feedline.cli.demo import cache_root

__all__ = ["COMMAND", "generate_jpegs"]

_CLASSES = 10


def generate_jpegs(root: Path, count: int, seed: int = 0) -> Path:
    """Write ``count`` photo-sized JPEGs (400-640 x 300-480) into ``root/<class>/``, once.

    A folder that already holds ``count`` images is reused as it is.
    """
    from PIL import Image

    done = root / ".complete"
    if done.is_file() and done.read_text() == str(count):
        return root
    rng = np.random.default_rng(seed)
    for i in progress(range(count), count, "generating images", "img"):
        height, width = int(rng.integers(300, 481)), int(rng.integers(400, 641))
        yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
        phase = rng.uniform(0, 6.3, 3).astype(np.float32)
        waves = [np.sin(xx / rng.uniform(8, 40) + yy / rng.uniform(8, 40) + p) for p in phase]
        noise = rng.normal(0, 12, (height, width, 3)).astype(np.float32)
        image = np.clip(127 + 90 * np.stack(waves, axis=-1) + noise, 0, 255).astype(np.uint8)
        folder = root / f"class{i % _CLASSES}"
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(folder / f"{i:05d}.jpg", quality=90)
    done.write_text(str(count))
    return root


def _torch_available() -> bool:
    probe = [sys.executable, "-c", "import torch.utils.data"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def _measure(framework: str, data: Path, args: argparse.Namespace) -> dict:
    command = [
        sys.executable,
        "-m",
        "feedline.cli.bench_worker",
        framework,
        str(data),
        "--threads",
        str(args.threads),
        "--batch-size",
        str(args.batch_size),
        "--seconds",
        str(args.seconds),
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise CommandError(f"the {framework} run failed:\n{done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _table(rows: list[dict]) -> str:
    header = f"{'loader':34s} {'images/s':>9s} {'CPU-ms/img':>11s} {'peak MB':>8s}"
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row['label']:34s} {row['img_s']:9.1f} {row['cpu_ms']:11.2f} {row['peak_mb']:8.0f}"
        )
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    if min(args.images, args.batch_size, args.threads) < 1 or args.seconds <= 0:
        raise CommandError(
            "--images, --batch-size and --threads must be at least 1, --seconds above 0",
            EXIT_USAGE,
        )
    if args.data is not None:
        if not args.data.is_dir():
            raise CommandError(f"--data {args.data}: no such folder", EXIT_USAGE)
        data = args.data
    else:
        data = generate_jpegs(cache_root() / f"bench-jpegs-{args.images}", args.images)
    frameworks = ["feedline"]
    if args.baseline and _torch_available():
        frameworks.append("torch")
    elif args.baseline:
        print("torch is not installed: no DataLoader baseline (pip install 'feedline[torch]')")
    print(
        f"train pipeline on {data}: batch {args.batch_size}, {args.threads} threads, "
        f"{args.seconds:g} s per loader"
    )
    rows = []
    for framework in progress(frameworks, len(frameworks), "measuring", "loader"):
        rows.append(_measure(framework, data, args))
    print(_table(rows))
    if len(rows) == 2:
        print(f"feedline / DataLoader: {rows[0]['img_s'] / rows[1]['img_s']:.2f}x images/s")
    return EXIT_OK if rows else EXIT_FAILED


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="a folder of JPEGs in class sub-folders (default: generated ones, cached)",
    )
    parser.add_argument("--images", type=int, default=256, help="images to generate")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seconds", type=float, default=10.0, help="measured time per loader")
    parser.add_argument(
        "--no-baseline", dest="baseline", action="store_false", help="skip the PyTorch run"
    )


COMMAND = Command(
    "bench",
    "measure the ImageNet train pipeline against a PyTorch DataLoader",
    "Run the ImageNet-style train pipeline (read, decode, random resized crop to\n"
    "224, flip, normalise) on a folder of JPEGs and print images/s, CPU-ms per\n"
    "image and peak memory, beside a PyTorch DataLoader with Pillow and NumPy\n"
    "transforms (with as many worker processes as threads) when torch is installed.",
    _configure,
    _run,
)
