"""One measured run of ``feedline bench``, in its own process: ``python -m
feedline.cli.bench_worker {feedline,torch} DIR``; prints one JSON row.

Measured after three warm-up batches for ``--seconds``: images/s, CPU-ms per image (this
process and, for the DataLoader, its worker processes) and peak resident memory (likewise).
The baseline does what torchvision's ``RandomResizedCrop(224)``, ``RandomHorizontalFlip`` and
``Normalize`` do, with Pillow and NumPy (torchvision is not needed).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "PillowTrainDataset",
    "dataloader_step",
    "main",
    "proc_cpu_seconds",
    "proc_peak_kb",
    "random_resized_box",
    "time_steps",
]

MEAN = np.float32([0.485 * 255, 0.456 * 255, 0.406 * 255])
STD = np.float32([0.229 * 255, 0.224 * 255, 0.225 * 255])
SIZE = 224


def _files(root: Path) -> list[Path]:
    suffixes = {".jpg", ".jpeg", ".png"}
    return sorted(p for p in root.rglob("*") if p.suffix.lower() in suffixes)


def random_resized_box(rng: np.random.Generator, w: int, h: int) -> tuple[int, int, int, int]:
    """torchvision's ``RandomResizedCrop`` window (scale 0.08-1, ratio 3/4-4/3, 10 tries, else
    the whole image) as a Pillow box ``(left, top, right, bottom)``."""
    for _ in range(10):
        area = rng.uniform(0.08, 1.0) * w * h
        ratio = math.exp(rng.uniform(math.log(3 / 4), math.log(4 / 3)))
        cw, ch = round(math.sqrt(area * ratio)), round(math.sqrt(area / ratio))
        if 0 < cw <= w and 0 < ch <= h:
            x, y = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
            return (x, y, x + cw, y + ch)
    return (0, 0, w, h)


class PillowTrainDataset:
    """Random resized crop (scale 0.08-1, ratio 3/4-4/3), flip and normalise with Pillow."""

    def __init__(self, files: list[Path], seed: int = 0) -> None:
        self.files, self.seed = files, seed

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> Any:
        import torch
        from PIL import Image

        rng = np.random.default_rng((self.seed, index, time.perf_counter_ns()))
        with Image.open(self.files[index]) as img:
            image = img.convert("RGB")
        box = random_resized_box(rng, *image.size)
        image = image.resize((SIZE, SIZE), Image.Resampling.BILINEAR, box=box)
        if rng.random() < 0.5:
            image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        array = (np.asarray(image, dtype=np.float32) - MEAN) / STD
        return torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1))), index


def _feedline_step(root: Path, threads: int, batch: int) -> tuple[Callable[[], None], list[int]]:
    from feedline import fn, pipeline_def, types

    @pipeline_def(batch_size=batch, num_threads=threads, device_id=None, seed=1)
    def train() -> Any:
        jpegs, labels = fn.readers.file(file_root=str(root), random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
        images = fn.random_resized_crop(images, size=SIZE)
        images = fn.crop_mirror_normalize(
            images,
            mirror=fn.random.coin_flip(),
            dtype=types.FLOAT,
            output_layout="CHW",
            mean=MEAN.tolist(),
            std=STD.tolist(),
        )
        return images, labels

    pipe = train(prefetch_queue_depth=2)
    pipe.build()
    return pipe.run, []


def dataloader_step(
    dataset: Any, batch: int, workers: int, shuffle: bool = True
) -> tuple[Callable[[], None], list[int]]:
    """A function fetching the next batch of a persistent ``DataLoader`` over ``dataset`` (a new
    epoch when one ends), and the worker processes' ids (for their CPU time and memory)."""
    import torch
    from torch.utils.data import DataLoader

    torch.set_num_threads(1)
    loader = DataLoader(
        dataset,
        batch_size=batch,
        shuffle=shuffle,
        num_workers=workers,
        persistent_workers=True,
        prefetch_factor=2,
        drop_last=True,
    )
    state = {"it": iter(loader)}

    def step() -> None:
        try:
            next(state["it"])
        except StopIteration:
            state["it"] = iter(loader)
            next(state["it"])

    step()
    return step, [w.pid for w in state["it"]._workers]


def _torch_step(root: Path, threads: int, batch: int) -> tuple[Callable[[], None], list[int]]:
    return dataloader_step(PillowTrainDataset(_files(root)), batch, threads)


def proc_cpu_seconds(pids: list[int]) -> float:
    """CPU seconds used so far by the processes ``pids`` (Linux ``/proc``; 0 elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def proc_peak_kb(pid: int) -> int:
    """Peak resident memory of process ``pid`` in KiB (Linux ``/proc``; 0 elsewhere)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def time_steps(
    step: Callable[[], None], batch: int, seconds: float, workers: Sequence[int] = ()
) -> dict[str, float]:
    """Call ``step`` (one batch of ``batch`` images) three times, then for ``seconds``.

    Returns ``img_s``, ``cpu_ms`` per image (this process and the ``workers`` processes) and
    ``peak_mb`` (the same processes' peak resident memory, summed).
    """
    for _ in range(3):
        step()
    count = 0
    cpu0, workers0 = time.process_time(), proc_cpu_seconds(workers)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        count += batch
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu0 + proc_cpu_seconds(workers) - workers0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_kb += sum(proc_peak_kb(pid) for pid in workers)
    return {"img_s": count / elapsed, "cpu_ms": cpu / count * 1e3, "peak_mb": peak_kb / 1024}


def measure(framework: str, root: Path, threads: int, batch: int, seconds: float) -> dict:
    """Run one loader for ``seconds`` and return its row."""
    make = _feedline_step if framework == "feedline" else _torch_step
    step, workers = make(root, threads, batch)
    plural = "s" if threads > 1 else ""
    label = (
        f"feedline ({threads} thread{plural})"
        if framework == "feedline"
        else f"PyTorch DataLoader ({threads} worker{plural})"
    )
    return {"label": label, "framework": framework, **time_steps(step, batch, seconds, workers)}


def main() -> None:
    """Parse the arguments, measure, print the JSON row."""
    parser = argparse.ArgumentParser(prog="python -m feedline.cli.bench_worker")
    parser.add_argument("framework", choices=("feedline", "torch"))
    parser.add_argument("data", type=Path)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    row = measure(args.framework, args.data, args.threads, args.batch_size, args.seconds)
    print(json.dumps(row))


if __name__ == "__main__":
    main()
