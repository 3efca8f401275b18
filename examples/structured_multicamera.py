"""Structured samples end to end: two "cameras" per sample, boxes and class names, nested output.

Each sample holds two cameras (an encoded JPEG, its boxes ``x1, y1, x2, y2`` in pixels and the
boxes' class names, mapped to ids on assignment) and a string tag. The pipeline decodes both
images, gives each camera its own random affine transform (pad-resize, scale, flip, shift: the
boxes follow the image) and colour jitter, and pads the per-box fields so they batch. The
iterator returns nested dicts of PyTorch tensors::

    {"cams": {0: {"image": uint8 [B, H, W, 3], "boxes": float [B, N, 4], "labels": int32 [B, N]},
              1: {...}},
     "tag": ["sample-3", ...]}

By default the images are generated (coloured rectangles are the "objects"); ``--coco DIR`` uses
a COCO-style folder instead (``DIR/images/*.jpg`` and ``DIR/annotations/instances_*.json``;
consecutive images become the two cameras of a sample).

Usage: ``python examples/structured_multicamera.py [--coco DIR] [--batch-size 4] [--epochs 1]``
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from feedline import types
from feedline.plugins.structured import (
    AffineTransformer,
    DataGroupArrayWithNameElementsAppliedStep,
    DataProvider,
    ImageDecoder,
    PaddingToUniform,
    PhotoMetricDistorter,
    PipelineDefinition,
    SampleDataGroup,
    ShuffledShardedInputCallable,
    StructuredOutputIterator,
)

GENERATED_CLASSES = ("car", "person", "bicycle")
OUTPUT_HW = (192, 256)


def sample_format(class_ids: dict[Any, int]) -> SampleDataGroup:
    """The blueprint: ``cams`` (2 x image, boxes, labels) and ``tag``."""
    camera = SampleDataGroup()
    camera.add_data_field("image", types.UINT8)
    camera.add_data_field("boxes", types.FLOAT)
    camera.add_data_field("labels", types.INT32, mapping=class_ids)
    sample = SampleDataGroup()
    sample.add_data_group_field_array("cams", camera, 2)
    sample.add_data_field("tag", types.STRING)
    return sample


class GeneratedCameras(DataProvider):
    """Samples of two generated JPEGs, each with 1-3 filled rectangles as labelled objects."""

    def __init__(self, num_samples: int, seed: int = 0) -> None:
        self._count = num_samples
        self._seed = seed
        ids = {name: index + 1 for index, name in enumerate(GENERATED_CLASSES)}
        self._format = sample_format({**ids, None: 0})

    def get_number_of_samples(self) -> int:
        return self._count

    @property
    def sample_data_structure(self) -> SampleDataGroup:
        return self._format.get_empty_like_self()

    def _camera(self, rng: np.random.Generator) -> tuple[np.ndarray, list, list]:
        height, width = int(rng.integers(120, 200)), int(rng.integers(160, 260))
        image = Image.new("RGB", (width, height), tuple(int(v) for v in rng.integers(0, 90, 3)))
        draw = ImageDraw.Draw(image)
        boxes, names = [], []
        for _ in range(int(rng.integers(1, 4))):
            x1, y1 = int(rng.integers(0, width - 40)), int(rng.integers(0, height - 40))
            x2, y2 = x1 + int(rng.integers(20, 40)), y1 + int(rng.integers(20, 40))
            draw.rectangle((x1, y1, x2, y2), fill=tuple(int(v) for v in rng.integers(120, 255, 3)))
            boxes.append([x1, y1, x2, y2])
            names.append(str(rng.choice(GENERATED_CLASSES)))
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=90)
        return np.frombuffer(buffer.getvalue(), np.uint8), boxes, names

    def get_data(self, sample_index: int) -> SampleDataGroup:
        rng = np.random.default_rng([self._seed, sample_index])
        sample = self.sample_data_structure
        for cam in range(2):
            encoded, boxes, names = self._camera(rng)
            sample["cams"][cam]["image"] = encoded
            sample["cams"][cam]["boxes"] = boxes
            sample["cams"][cam]["labels"] = names
        sample["tag"] = f"sample-{sample_index}"
        return sample


class CocoCameras(DataProvider):
    """Samples of two consecutive images of a COCO-style folder, with their boxes and names."""

    def __init__(self, root: str | Path, limit: int | None = None) -> None:
        root = Path(root)
        files = sorted((root / "annotations").glob("instances_*.json"))
        if not files:
            raise FileNotFoundError(f"no annotations/instances_*.json under {root}")
        with open(files[0], encoding="utf-8") as handle:
            coco = json.load(handle)
        names = {c["id"]: c["name"] for c in coco["categories"]}
        self._images = sorted(coco["images"], key=lambda im: im["id"])[
            : None if limit is None else 2 * limit
        ]
        self._boxes: dict[int, list] = {im["id"]: [] for im in self._images}
        for ann in coco["annotations"]:
            if ann["image_id"] not in self._boxes:
                continue
            x, y, w, h = ann["bbox"]
            self._boxes[ann["image_id"]].append(([x, y, x + w, y + h], names[ann["category_id"]]))
        self._root = root / "images"
        ids = {name: index + 1 for index, name in enumerate(sorted(set(names.values())))}
        self._format = sample_format({**ids, None: 0})

    def get_number_of_samples(self) -> int:
        return len(self._images) // 2

    @property
    def sample_data_structure(self) -> SampleDataGroup:
        return self._format.get_empty_like_self()

    def get_data(self, sample_index: int) -> SampleDataGroup:
        sample = self.sample_data_structure
        for cam in range(2):
            info = self._images[2 * sample_index + cam]
            camera = sample["cams"][cam]
            camera["image"] = np.fromfile(self._root / info["file_name"], dtype=np.uint8)
            pairs = self._boxes[info["id"]]
            camera["boxes"] = np.array([b for b, _ in pairs], np.float32).reshape(-1, 4)
            camera["labels"] = [name for _, name in pairs]
        sample["tag"] = f"coco-{self._images[2 * sample_index]['id']}"
        return sample


def make_loader(
    provider: DataProvider,
    batch_size: int,
    num_threads: int = 2,
    seed: int = 0,
    parallel: bool = False,
) -> StructuredOutputIterator:
    """The pipeline and its iterator (``parallel`` loads samples in worker processes)."""
    per_camera = "cams"
    steps = [
        ImageDecoder("image"),
        DataGroupArrayWithNameElementsAppliedStep(
            AffineTransformer(
                OUTPUT_HW,
                resizing_mode="pad",
                resizing_anchor="center",
                image_field_names="image",
                box_field_names="boxes",
                prob_flip=0.5,
                scale_range=(0.8, 1.1),
                translation_range=(-0.05, 0.05),
            ),
            per_camera,
        ),
        DataGroupArrayWithNameElementsAppliedStep(PhotoMetricDistorter("image"), per_camera),
        PaddingToUniform(["boxes", "labels"], fill_value=-1),
    ]
    source = ShuffledShardedInputCallable(provider, batch_size, shuffle=True, seed=seed)
    definition = PipelineDefinition(source, steps, use_parallel_external_source=parallel)
    pipe = definition.get_dali_pipeline(
        batch_size=batch_size,
        num_threads=num_threads,
        device_id=None,
        seed=seed,
        py_num_workers=2 if parallel else 1,
    )
    blueprint = definition.check_and_get_output_data_structure()
    return StructuredOutputIterator.CreateAsDataLoaderObject(None, pipe, blueprint)


def describe(batch: dict) -> str:
    """One line about a batch."""
    cams = batch["cams"]
    shapes = ", ".join(
        f"cam{k}: image {tuple(cams[k]['image'].shape)} boxes {tuple(cams[k]['boxes'].shape)}"
        for k in sorted(cams)
    )
    return f"{batch['tag'][0]}...: {shapes}"


def main(argv: list[str] | None = None) -> list[dict]:
    """Run the example; returns the batches of the last epoch."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--coco", help="a COCO-style folder (default: generated images)")
    parser.add_argument("--samples", type=int, default=16, help="samples (COCO: at most)")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--parallel", action="store_true", help="load in worker processes")
    args = parser.parse_args(argv)
    if args.coco:
        provider: DataProvider = CocoCameras(args.coco, limit=args.samples)
    else:
        provider = GeneratedCameras(args.samples)
    loader = make_loader(provider, args.batch_size, args.threads, parallel=args.parallel)
    print(f"{len(loader)} batches per epoch; output format:")
    print(loader.sample_data_structure_blueprint.get_string_no_details(), end="")
    batches: list[dict] = []
    for epoch in range(args.epochs):
        start = time.perf_counter()
        batches = []
        for batch in loader:
            batches.append(batch)
            print(describe(batch))
        seconds = time.perf_counter() - start
        rate = len(batches) * args.batch_size / max(seconds, 1e-9)
        print(f"epoch {epoch}: {len(batches)} batches, {rate:.0f} samples/s")
    return batches


if __name__ == "__main__":
    main()
