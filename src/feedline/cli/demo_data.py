"""Where ``feedline demo`` finds its COCO data: ``--data``, the bundled sample, or a small
generated data set of coloured shapes (with boxes and polygon masks that match them)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from feedline.cli.common import EXIT_USAGE, CommandError

__all__ = ["CocoData", "bundled_sample", "find_coco", "generate_coco"]

BUNDLED = "coco_dali_pixelwise"
"""The bundled sample the demo uses: six photos with objects outlined by polygons and RLE."""

_SHAPES = ("rectangle", "ellipse", "triangle")


@dataclass(frozen=True)
class CocoData:
    """A COCO data set: the image folder, the annotation file and what the file holds."""

    images: Path
    annotations: Path
    categories: dict[int, str]
    num_images: int
    has_segmentation: bool

    @classmethod
    def load(cls, images: Path, annotations: Path) -> CocoData:
        """Read the annotation file's summary (categories, image count, segmentations).

        Raises:
            CommandError: the file is not readable JSON in COCO form (the message names it).
        """
        try:
            content = json.loads(annotations.read_bytes())
            categories = {int(c["id"]): str(c["name"]) for c in content["categories"]}
            count = len(content["images"])
            segmented = any(a.get("segmentation") for a in content.get("annotations", ()))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise CommandError(
                f"{annotations}: not a COCO annotation file ({type(error).__name__}: {error})",
                EXIT_USAGE,
            ) from None
        return cls(images, annotations, categories, count, segmented)

    def label_names(self) -> dict[int, str]:
        """Names by the labels ``readers.coco`` outputs (categories renumbered 1..K in order)."""
        return {label: name for label, name in enumerate(self.categories.values(), start=1)}


def find_coco(path: Path) -> CocoData:
    """The COCO data set in folder ``path``.

    The annotations are ``path/*.json`` or ``path/annotations/*.json`` (exactly one file); the
    images are in ``path/images`` when it exists, else in ``path`` itself.

    Raises:
        CommandError: the folder is missing, or holds no or several annotation files.
    """
    if not path.is_dir():
        raise CommandError(f"--data {path}: no such folder", EXIT_USAGE)
    candidates = sorted(path.glob("*.json")) or sorted(path.glob("annotations/*.json"))
    if len(candidates) != 1:
        found = ", ".join(p.name for p in candidates) or "none"
        raise CommandError(
            f"--data {path}: expected exactly one annotation file (*.json or annotations/*.json), "
            f"found {found}",
            EXIT_USAGE,
        )
    images = path / "images" if (path / "images").is_dir() else path
    return CocoData.load(images, candidates[0])


def bundled_sample() -> CocoData | None:
    """The sample data set shipped in ``feedline/data``, or None when it is not installed."""
    root = Path(str(resources.files("feedline") / "data" / BUNDLED))
    if (root / "instances.json").is_file() and (root / "images").is_dir():
        return find_coco(root)
    return None


def _draw_shape(canvas: np.ndarray, kind: str, box: tuple[int, int, int, int], colour: np.ndarray):
    """Paint one shape into ``canvas``; returns its polygon (COCO ``[x0, y0, x1, y1, …]``)."""
    x, y, w, h = box
    yy, xx = np.mgrid[0 : canvas.shape[0], 0 : canvas.shape[1]]
    if kind == "rectangle":
        inside = (xx >= x) & (xx < x + w) & (yy >= y) & (yy < y + h)
        polygon = [x, y, x + w, y, x + w, y + h, x, y + h]
    elif kind == "ellipse":
        cx, cy = x + w / 2, y + h / 2
        inside = ((xx + 0.5 - cx) / (w / 2)) ** 2 + ((yy + 0.5 - cy) / (h / 2)) ** 2 <= 1
        angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        points = np.stack([cx + w / 2 * np.cos(angles), cy + h / 2 * np.sin(angles)], axis=1)
        polygon = [round(float(v), 1) for v in points.ravel()]
    else:
        # Apex at the top centre, base along the bottom edge.
        rel_y = (yy + 0.5 - y) / h
        half = rel_y * w / 2
        inside = (rel_y >= 0) & (rel_y <= 1) & (np.abs(xx + 0.5 - (x + w / 2)) <= half)
        polygon = [x + w / 2, y, x + w, y + h, x, y + h]
    canvas[inside] = colour
    return polygon


def generate_coco(root: Path, num_images: int = 12, seed: int = 0) -> CocoData:
    """Write a small COCO data set of shapes on textured backgrounds into ``root``.

    Every image holds one to three rectangles, ellipses or triangles; their boxes and polygon
    segmentations are exact, so augmented boxes can be checked by eye against the shapes.
    """
    from PIL import Image

    rng = np.random.default_rng(seed)
    (root / "images").mkdir(parents=True, exist_ok=True)
    images, annotations = [], []
    for image_id in range(1, num_images + 1):
        height, width = int(rng.integers(180, 260)), int(rng.integers(220, 340))
        xx = np.arange(width)[None, :]
        base = rng.integers(40, 120, 3)
        canvas = base + 30 * np.sin(xx / 9.0)[..., None] + rng.normal(0, 6, (height, width, 3))
        canvas = np.clip(canvas, 0, 255).astype(np.uint8)
        for _ in range(int(rng.integers(1, 4))):
            category = int(rng.integers(len(_SHAPES)))
            w, h = int(rng.integers(40, width // 2)), int(rng.integers(40, height // 2))
            x, y = int(rng.integers(0, width - w)), int(rng.integers(0, height - h))
            colour = rng.integers(150, 256, 3).astype(np.uint8)
            polygon = _draw_shape(canvas, _SHAPES[category], (x, y, w, h), colour)
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": image_id,
                    "category_id": category + 1,
                    "bbox": [x, y, w, h],
                    "area": float(w * h),
                    "iscrowd": 0,
                    "segmentation": [polygon],
                }
            )
        name = f"{image_id:04d}.jpg"
        Image.fromarray(canvas).save(root / "images" / name, quality=92)
        images.append({"id": image_id, "file_name": name, "width": width, "height": height})
    categories = [{"id": i + 1, "name": kind} for i, kind in enumerate(_SHAPES)]
    document = {"images": images, "annotations": annotations, "categories": categories}
    (root / "instances.json").write_text(json.dumps(document))
    return find_coco(root)
