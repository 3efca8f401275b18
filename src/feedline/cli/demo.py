"""``feedline demo``: a detection pipeline on COCO data, its throughput and a contact sheet.

The pipeline: ``readers.coco`` → ``decoders.image`` → ``random_bbox_crop`` + ``slice`` (the
crop keeps the boxes whose centres it holds) → ``resize`` → ``flip`` with ``bb_flip`` (the
same coin for image, boxes and mask) → ``crop_mirror_normalize``. The picture shows the
normalised output turned back into pixels, so what it shows is what a model would see.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from feedline.cli.common import (
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    Command,
    CommandError,
)
from feedline.cli.demo_data import CocoData, bundled_sample, find_coco, generate_coco
from feedline.cli.demo_sheet import Sample, contact_sheet, denormalize

__all__ = ["COMMAND", "build_pipeline", "cache_root", "gpu_problem"]

MEAN = (0.485 * 255, 0.456 * 255, 0.406 * 255)
STD = (0.229 * 255, 0.224 * 255, 0.225 * 255)
GPU_OPS = ("resize", "flip", "crop_mirror_normalize")
"""With ``--device gpu`` these run on the GPU; reading, decoding and the box-aware crop stay on
the CPU and the cropped images move to the GPU with one transfer per batch."""


def gpu_problem() -> str | None:
    """Why the demo cannot run on the GPU here (None when it can)."""
    from feedline.core.plugins import get_registry

    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA device is visible"
    except Exception as error:
        return f"CuPy cannot reach a CUDA device ({type(error).__name__}: {error})"
    registry = get_registry()
    missing = [
        op
        for op in GPU_OPS
        if op not in registry.operators or "gpu" not in registry.operators[op].kernels
    ]
    return f"no GPU kernel is installed for {', '.join(missing)}" if missing else None


def build_pipeline(
    data: CocoData,
    *,
    batch_size: int,
    threads: int,
    size: int,
    masks: bool,
    device: str,
    seed: int,
) -> Any:
    """The demo's detection pipeline (outputs: images CHW float, boxes ltrb, labels[, masks])."""
    from feedline import fn, pipeline_def, types

    gpu = device == "gpu"

    device_of = "gpu" if gpu else "cpu"

    @pipeline_def(
        batch_size=batch_size, num_threads=threads, device_id=0 if gpu else None, seed=seed
    )
    def detection() -> Any:
        outputs = fn.readers.coco(
            file_root=str(data.images),
            annotations_file=str(data.annotations),
            ltrb=True,
            ratio=True,
            skip_empty=True,
            random_shuffle=True,
            pixelwise_masks=masks,
            name="Reader",
        )
        jpegs, boxes, labels = outputs[:3]
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        anchor, shape, boxes, labels = fn.random_bbox_crop(
            boxes,
            labels,
            bbox_layout="xyXY",
            aspect_ratio=[0.5, 2.0],
            scaling=[0.3, 1.0],
            thresholds=[0.1, 0.3, 0.5, 0.7, 0.9],
            allow_no_crop=True,
            num_attempts=50,
            # Keep every box the window shows, as the masks keep every pixel it shows (by
            # default a box whose centre falls outside would be dropped, its pixels kept).
            bbox_prune_threshold=0.0,
        )
        images = fn.slice(images, anchor, shape, out_of_bounds_policy="trim_to_shape")
        if gpu:
            images = images.gpu()
        images = fn.resize(images, resize_x=size, resize_y=size, device=device_of)
        flip = fn.random.coin_flip(probability=0.5)
        images = fn.flip(images, horizontal=flip, device=device_of)
        boxes = fn.bb_flip(boxes, ltrb=True, horizontal=flip)
        images = fn.crop_mirror_normalize(
            images,
            mean=list(MEAN),
            std=list(STD),
            output_layout="CHW",
            device=device_of,
        )
        if not masks:
            return images, boxes, labels
        mask = fn.slice(outputs[3], anchor, shape, out_of_bounds_policy="trim_to_shape")
        mask = fn.resize(mask, resize_x=size, resize_y=size, interp_type=types.INTERP_NN)
        return images, boxes, labels, fn.flip(mask, horizontal=flip)

    return detection()


def cache_root() -> Path:
    """Where the CLI keeps generated data: ``$FEEDLINE_CACHE_DIR`` or ``~/.cache/feedline``."""
    configured = os.environ.get("FEEDLINE_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "feedline"


def _data(args: argparse.Namespace) -> CocoData:
    if args.data is not None:
        return find_coco(args.data)
    sample = bundled_sample()
    if sample is not None:
        return sample
    root = cache_root() / "demo-coco"
    if (root / "instances.json").is_file():
        return find_coco(root)
    print(f"no bundled sample installed; generating shapes into {root}")
    return generate_coco(root)


def _has_pycocotools() -> bool:
    try:
        import pycocotools  # noqa: F401
    except ImportError:
        return False
    return True


def _to_numpy(tensor_list: Any) -> list[np.ndarray]:
    cpu = tensor_list.as_cpu() if hasattr(tensor_list, "as_cpu") else tensor_list
    return [np.asarray(cpu.at(i)) for i in range(len(cpu))]


def _progress_bar(batches: int) -> Any:
    """A tqdm bar on stderr over the batches, shown from the pipeline's build on (which may
    compile the C kernels first), on a terminal or not."""
    from tqdm import tqdm

    return tqdm(
        total=batches,
        desc="building the pipeline",
        unit="batch",
        file=sys.stderr,
        dynamic_ncols=True,
        mininterval=0.2,
    )


def _run(args: argparse.Namespace) -> int:
    from feedline import OperatorError, PipelineError

    if args.batches < 1 or args.batch_size < 1 or args.threads < 1 or args.size < 8:
        raise CommandError(
            "--batches, --batch-size and --threads must be at least 1, --size at least 8",
            EXIT_USAGE,
        )
    if args.device == "gpu":
        problem = gpu_problem()
        if problem is not None:
            raise CommandError(f"--device gpu is not available: {problem}", EXIT_UNAVAILABLE)
    data = _data(args)
    masks = data.has_segmentation and _has_pycocotools() and not args.no_masks
    print(
        f"data: {data.num_images} images in {data.images}, annotations {data.annotations}"
        + ("" if masks or not data.has_segmentation else " (masks need pycocotools: not drawn)")
    )
    pipe = build_pipeline(
        data,
        batch_size=args.batch_size,
        threads=args.threads,
        size=args.size,
        masks=masks,
        device=args.device,
        seed=args.seed,
    )
    shown: list[Sample] = []
    try:
        with _progress_bar(args.batches) as bar:
            pipe.build()  # reads the annotations; the first run also compiles the C kernels
            bar.set_description("demo")
            start = time.perf_counter()
            for _ in range(args.batches):
                outputs = [_to_numpy(out) for out in pipe.run()]
                for i in range(len(outputs[0])):
                    if len(shown) < args.samples:
                        mask = outputs[3][i][..., 0] if masks else None
                        image = denormalize(outputs[0][i], MEAN, STD)
                        shown.append(Sample(image, outputs[1][i], outputs[2][i], mask))
                bar.update()
            elapsed = time.perf_counter() - start
    except (OperatorError, PipelineError, ValueError, OSError) as error:
        raise CommandError(str(error)) from None
    count = args.batches * args.batch_size
    print(
        f"{count} images in {elapsed:.2f} s: {count / elapsed:.1f} images/s "
        f"({args.threads} threads, batch {args.batch_size}, device {args.device})"
    )
    path = contact_sheet(shown, data.label_names(), args.out).resolve()
    print(f"contact sheet of {len(shown)} augmented samples: {path}")
    return EXIT_OK


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="a COCO data set folder: one *.json (or annotations/*.json) and the images "
        "(in images/ or beside the JSON); default: the bundled sample",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("feedline-demo.png"),
        help="the PNG to write (default: feedline-demo.png in the current folder)",
    )
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--batches", type=int, default=20, help="batches to run (default 20)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--size", type=int, default=320, help="output side in pixels")
    parser.add_argument("--samples", type=int, default=12, help="samples on the contact sheet")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no-masks", action="store_true", help="do not read or draw masks")


COMMAND = Command(
    "demo",
    "run a detection pipeline on sample images and draw what it produces",
    "Run readers.coco -> decode -> random crop with boxes -> resize -> flip ->\n"
    "normalise on a COCO data set (default: the bundled sample; --data for yours),\n"
    "print the throughput and write a PNG contact sheet of augmented samples with\n"
    "their boxes, labels and masks drawn.",
    _configure,
    _run,
)
