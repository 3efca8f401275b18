"""A conditional pipeline against the same pipeline with ``mirror=``: the cost of ``if``.

Both pipelines read JPEGs, decode them, take a random 224 x 224 window and normalise it to
float CHW, flipping half of the samples (a coin flip):

* ``mirror``: ``crop_mirror_normalize(..., mirror=coin_flip)``, the flip fused into the
  normalisation;
* ``conditional``: ``@pipeline_def(enable_conditionals=True)`` with ``if coin_flip:
  images = flip(images)`` before ``crop_mirror_normalize`` (a split, a flip on the samples that
  take the branch, a merge).

Each (framework, variant) runs in its own process; they take turns for ``--rounds`` rounds and
the best round counts. DALI rows run when DALI is importable by ``--dali-python`` (default: this
interpreter, or ``$DALI_PYTHON``). Printed: images/s (best round) and CPU-ms per image (all
threads, least of the rounds: steadier than images/s on a shared host) per row, and the
conditional variant's cost relative to ``mirror`` of the same framework.

Measured on 2026-11-28 (``--rounds 3 --seconds 3``, batch 32, 2 threads, the bundled photos,
2-core VM shared with other jobs, DALI 2.4 CPU): feedline mirror 232 img/s (1.64 CPU-ms per
image), conditional 237 img/s (1.64): the ``if`` cost -2.1% time and +0.2% CPU per image; DALI
mirror 134 img/s (3.38), conditional 106 (3.47): +26% time, +2.6% CPU. The split and merge
move no pixels (the branch's batch lists the samples); the flip itself is OpenCV's. Before the
flip used OpenCV (NumPy's strided copy took 1.2-1.5 ms per 224 x 224 RGB image), the
conditional pipeline cost +21% time.

Usage: ``python benchmarks/conditionals.py [--data DIR] [--threads 2] [--rounds 2]
[--seconds 3] [--batch 32]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

VARIANTS = ("mirror", "conditional")


def image_files(data: str | None) -> list[str]:
    """The JPEG files to read (default: the photos bundled with feedline)."""
    if data:
        root = Path(data)
    else:
        import feedline.data

        root = Path(feedline.data.path("file_tree"))
    files = sorted(str(p) for p in root.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg"))
    if not files:
        raise SystemExit(f"no JPEG files under {root}")
    return files


def build(framework: str, variant: str, files: list[str], batch: int, threads: int) -> Any:
    """The pipeline of ``variant`` written with ``framework``'s API (``feedline`` or ``dali``)."""
    if framework == "dali":
        from nvidia.dali import fn, pipeline_def, types
    else:
        from feedline import fn, pipeline_def, types

    mean = [0.485 * 255, 0.456 * 255, 0.406 * 255]
    std = [0.229 * 255, 0.224 * 255, 0.225 * 255]
    conditional = variant == "conditional"

    @pipeline_def(
        batch_size=batch,
        num_threads=threads,
        device_id=None,
        seed=7,
        enable_conditionals=conditional,
    )
    def pipe():
        jpegs, labels = fn.readers.file(files=files, random_shuffle=True, name="Reader")
        images = fn.random_resized_crop(fn.decoders.image(jpegs, device="cpu"), size=224)
        flip = fn.random.coin_flip()
        normalize = {
            "dtype": types.FLOAT,
            "output_layout": "CHW",
            "mean": mean,
            "std": std,
        }
        if not conditional:
            return fn.crop_mirror_normalize(images, mirror=flip, **normalize), labels
        if flip:
            images = fn.flip(images, horizontal=1)
        return fn.crop_mirror_normalize(images, **normalize), labels

    pipeline = pipe()
    pipeline.build()
    return pipeline


def worker(framework: str, variant: str, args: argparse.Namespace) -> None:
    """Print the images/s of one (framework, variant) as JSON."""
    pipeline = build(framework, variant, image_files(args.data), args.batch, args.threads)
    for _ in range(3):
        pipeline.run()
    count, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < args.seconds:
        pipeline.run()
        count += args.batch
    rate = count / (time.perf_counter() - start)
    print(json.dumps({"img_s": rate, "cpu_ms": 1000 * (time.process_time() - cpu) / count}))


def _python_for(framework: str, args: argparse.Namespace) -> str | None:
    if framework == "feedline":
        return sys.executable
    python = args.dali_python or os.environ.get("DALI_PYTHON") or sys.executable
    probe = subprocess.run([python, "-c", "import nvidia.dali"], capture_output=True)
    return python if probe.returncode == 0 else None


def main() -> None:
    """Run every row in its own process, alternating, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--dali-python")
    parser.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "VARIANT"))
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker, args)
        return
    pythons = {fw: _python_for(fw, args) for fw in ("feedline", "dali")}
    rows = [(fw, v) for fw in ("feedline", "dali") if pythons[fw] for v in VARIANTS]
    best: dict[tuple[str, str], float] = {}
    cpu_ms: dict[tuple[str, str], float] = {}
    common = ["--threads", str(args.threads), "--batch", str(args.batch)]
    data = args.data or str(Path(image_files(None)[0]).parents[1])
    common += ["--seconds", str(args.seconds), "--data", data]
    for _ in range(args.rounds):
        for framework, variant in rows:
            command = [pythons[framework], __file__, "--worker", framework, variant, *common]
            result = subprocess.run(command, capture_output=True, text=True, check=True)
            measured = json.loads(result.stdout.strip().splitlines()[-1])
            row = (framework, variant)
            best[row] = max(best.get(row, 0.0), measured["img_s"])
            cpu_ms[row] = min(cpu_ms.get(row, float("inf")), measured["cpu_ms"])
    print(f"{'framework':<10} {'variant':<12} {'img/s':>8} {'vs mirror':>10} {'CPU-ms/img':>11}")
    for framework, variant in rows:
        rate = best[(framework, variant)]
        ratio = rate / best[(framework, "mirror")]
        cpu = cpu_ms[(framework, variant)]
        print(f"{framework:<10} {variant:<12} {rate:8.1f} {ratio:9.2f}x {cpu:11.2f}")
    for framework in ("feedline", "dali"):
        if (framework, "conditional") in best:
            wall = best[(framework, "mirror")] / best[(framework, "conditional")] - 1
            cpu = cpu_ms[(framework, "conditional")] / cpu_ms[(framework, "mirror")] - 1
            print(
                f"{framework}: the conditional pipeline costs {100 * wall:+.1f}% time and "
                f"{100 * cpu:+.1f}% CPU per image"
            )


if __name__ == "__main__":
    main()
