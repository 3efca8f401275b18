"""A small generated COCO data set for the ``readers.coco`` tests, and shared helpers.

The data set exercises what real COCO files contain (non-contiguous category ids listed out of
order, multi-part polygons, crowd objects with uncompressed RLE, a compressed RLE, the
``is_crowd`` spelling, images without objects, tiny boxes, an unknown category, an annotation of
an unlisted image, file names with a sub-directory and a space) at a size that builds in
milliseconds. :func:`reference_samples` is an independent, plain-Python statement of the DALI
rules (``docs/coco.md``) used as the expected values.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from tests.conftest import SHARED_DATA, sample_data, shared_reason

COCO = SHARED_DATA / "coco"
REAL_COCO = (COCO / "images", COCO / "annotations" / "instances_train2017.json")
SKIP_REASON = shared_reason(COCO)
PIXELWISE = sample_data("coco_dali_pixelwise")
DUMMY = (sample_data("coco_dali_dummy", "images"), sample_data("coco_dali_dummy", "instances.json"))


def _polygon(rng: random.Random, w: int, h: int, points: int) -> list[float]:
    cx, cy = rng.uniform(0.2 * w, 0.8 * w), rng.uniform(0.2 * h, 0.8 * h)
    coords = []
    for k in range(points):
        angle = 2 * np.pi * k / points
        radius = rng.uniform(0.1, 0.4) * min(w, h)
        coords += [round(cx + radius * np.cos(angle), 2), round(cy + radius * np.sin(angle), 2)]
    return coords


def _uncompressed_rle(rng: random.Random, w: int, h: int) -> dict[str, Any]:
    total = w * h
    counts = []
    left = total
    while left > 0:
        run = min(left, rng.randint(1, max(2, total // 6)))
        counts.append(run)
        left -= run
    return {"size": [h, w], "counts": counts}


def _compressed_rle(rng: random.Random, w: int, h: int) -> dict[str, Any]:
    from pycocotools import mask as mask_utils

    mask = np.zeros((h, w), np.uint8, order="F")
    mask[rng.randint(0, h // 2) : h - 2, rng.randint(0, w // 2) : w - 3] = 1
    rle = mask_utils.encode(np.asfortranarray(mask))
    return {"size": [h, w], "counts": rle["counts"].decode()}


def make_document(seed: int = 0) -> dict[str, Any]:
    """The annotation document of the generated data set (deterministic for a seed)."""
    rng = random.Random(seed)
    sizes = [(40, 30), (33, 27), (48, 36), (25, 25), (64, 20), (30, 44), (36, 36)]
    ids = [30, 10, 20, 50, 40, 60, 70]
    names = ["b.jpg", "a.jpg", "sub/c.jpg", "with space.jpg", "e.jpg", "f.jpg", "g.jpg"]
    images = [
        {"id": i, "file_name": n, "width": w, "height": h, "license": 1}
        for i, n, (w, h) in zip(ids, names, sizes, strict=True)
    ]
    categories = [{"id": c, "name": f"c{c}"} for c in (7, 3, 12, 5)]
    anns: list[dict[str, Any]] = []

    def add(image: int, cat: int, seg: Any, box: list[float] | None = None, **extra: Any) -> None:
        w, h = sizes[ids.index(image)] if image in ids else (20, 20)
        if box is None:
            x, y = rng.uniform(0, w / 2), rng.uniform(0, h / 2)
            box = [round(x, 2), round(y, 2), round(rng.uniform(1, w - x), 2),
                   round(rng.uniform(1, h - y), 2)]  # fmt: skip
        anns.append({"id": len(anns) + 1, "image_id": image, "category_id": cat, "bbox": box,
                     "segmentation": seg, "area": 1.0, "iscrowd": 0, **extra})  # fmt: skip

    for image in ids[:4]:
        w, h = sizes[ids.index(image)]
        for _ in range(rng.randint(1, 3)):
            parts = [_polygon(rng, w, h, rng.randint(3, 9)) for _ in range(rng.randint(1, 3))]
            add(image, rng.choice([7, 3, 12, 5]), parts)
    w, h = sizes[0]
    add(30, 3, _uncompressed_rle(rng, w, h), iscrowd=1)
    add(30, 3, [_polygon(rng, w, h, 5)])
    add(10, 12, _uncompressed_rle(rng, *sizes[1]), iscrowd=1)
    add(20, 5, _compressed_rle(rng, *sizes[2]))
    add(40, 7, [_polygon(rng, *sizes[4], 4)], is_crowd=0)
    anns[-1].pop("iscrowd")
    add(40, 99, [_polygon(rng, *sizes[4], 6)])  # unknown category → label 0
    add(40, 5, [_polygon(rng, *sizes[4], 3)], box=[1.0, 2.0, 0.05, 9.0])  # below threshold
    add(40, 5, [_polygon(rng, *sizes[4], 3)], box=[1.0, 2.0, 0.1, 0.1])  # exactly threshold
    add(40, 12, [], box=[2.5, 1.5, 6.0, 4.0])  # no polygon parts
    add(50, 3, [_polygon(rng, *sizes[3], 5), []])  # an empty part
    add(999, 3, [_polygon(rng, 20, 20, 4)])  # image not listed
    rng.shuffle(anns)
    return {
        "info": {"description": 'feedline test set \u00e9 "quoted" [brackets] {braces}'},
        "licenses": [{"id": 1, "name": "CC0"}],
        "images": images,
        "annotations": anns,
        "categories": categories,
    }


def write_dataset(root: Path, doc: dict[str, Any], indent: int | None = None) -> Path:
    """Write ``doc`` as ``root/instances.json`` and one small JPEG per image under ``root``."""
    for k, image in enumerate(doc["images"]):
        path = root / image["file_name"]
        path.parent.mkdir(parents=True, exist_ok=True)
        color = (40 * k % 256, 90, 200 - 20 * k % 200)
        Image.new("RGB", (image["width"], image["height"]), color).save(path, quality=80)
    ann = root / "instances.json"
    ann.write_text(json.dumps(doc, indent=indent))
    return ann


def reference_samples(
    doc: dict[str, Any],
    *,
    ltrb: bool = False,
    ratio: bool = False,
    skip_empty: bool = False,
    avoid_class_remapping: bool = False,
    include_iscrowd: bool = True,
    size_threshold: float = 0.1,
    images: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The expected samples: file name, id, size, boxes, labels, polygons and vertices."""
    f32 = np.float32
    if images is None:
        entries = sorted(doc["images"], key=lambda e: e["id"])
    else:
        by_name = {e["file_name"]: e for e in doc["images"]}
        entries = [by_name[n] for n in images if n in by_name]
    labels: dict[int, int] = {}
    for k, cat in enumerate(doc.get("categories", [])):
        labels.setdefault(cat["id"], k + 1)
    per_image = defaultdict(list)
    for ann in doc.get("annotations", []):
        per_image[ann["image_id"]].append(ann)
    out = []
    for entry in entries:
        w, h = f32(entry["width"]), f32(entry["height"])
        objects = []
        for ann in per_image[entry["id"]]:
            x, y, bw, bh = (f32(v) for v in ann["bbox"])
            crowd = ann.get("iscrowd", ann.get("is_crowd", 0))
            if bw < f32(size_threshold) or bh < f32(size_threshold):
                continue
            if crowd and not include_iscrowd:
                continue
            objects.append(ann)
        if skip_empty and not objects:
            continue
        boxes, labs, polys, verts = [], [], [], []
        for j, ann in enumerate(objects):
            x, y, bw, bh = (f32(v) for v in ann["bbox"])
            box = [x, y, x + bw, y + bh] if ltrb else [x, y, bw, bh]
            if ratio:
                box = [box[0] / w, box[1] / h, box[2] / w, box[3] / h]
            boxes.append(box)
            cat = ann["category_id"]
            labs.append(cat if avoid_class_remapping else labels.get(cat, 0))
            seg = ann.get("segmentation")
            for part in seg if isinstance(seg, list) else []:
                start = len(verts)
                for k in range(0, len(part), 2):
                    vx, vy = f32(part[k]), f32(part[k + 1])
                    verts.append([vx / w, vy / h] if ratio else [vx, vy])
                polys.append([j, start, len(verts)])
        out.append(
            {
                "file_name": entry["file_name"],
                "id": entry["id"],
                "width": entry["width"],
                "height": entry["height"],
                "objects": objects,
                "bboxes": np.array(boxes, np.float32).reshape(-1, 4),
                "labels": np.array(labs, np.int32),
                "polygons": np.array(polys, np.int32).reshape(-1, 3),
                "vertices": np.array(verts, np.float32).reshape(-1, 2),
            }
        )
    return out


def reference_mask(sample: dict[str, Any], ratio: bool = False) -> np.ndarray:
    """The pixelwise mask of a reference sample, computed with pycocotools (``docs/coco.md``).

    With ``ratio`` the vertices make the float32 round trip ``(v / W) * W`` first.
    """
    from pycocotools import _mask
    from pycocotools import mask as mask_utils

    h, w = sample["height"], sample["width"]
    out = np.zeros((h, w), np.int32)
    by_label: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for ann, label in zip(sample["objects"], sample["labels"].tolist(), strict=True):
        by_label[label].append(ann)
    for label in sorted(by_label):
        anns = by_label[label]
        scale = np.array([w, h], np.float32)
        polygons = []
        for a in anns:
            for part in a["segmentation"] if isinstance(a["segmentation"], list) else []:
                points = np.asarray(part, np.float32).reshape(-1, 2)
                if ratio:
                    points = (points / scale) * scale
                polygons.append(points.astype(np.float64).ravel())
        if polygons:
            # frPyObjects takes a 4-number list for a box: rasterise 2-point polygons directly.
            rles = [
                mask_utils.frPyObjects([p.tolist()], h, w)[0]
                if p.size > 4
                else _mask.frPoly([p], h, w)[0]
                for p in polygons
            ]
            mask = mask_utils.decode(mask_utils.merge(rles))
        else:
            rle_anns = [a for a in anns if isinstance(a["segmentation"], dict)]
            if not rle_anns:
                continue
            seg = rle_anns[-1]["segmentation"]
            if isinstance(seg["counts"], list):
                seg = mask_utils.frPyObjects(seg, h, w)
            mask = mask_utils.decode(seg)
        out[mask.astype(bool)] = label
    return out[:, :, None]
