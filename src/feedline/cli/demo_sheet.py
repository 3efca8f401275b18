"""The demo's contact sheet: augmented samples in a grid with their boxes, labels and masks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Sample", "contact_sheet", "denormalize"]

_PALETTE = np.array(
    [
        (230, 25, 75),
        (60, 180, 75),
        (255, 225, 25),
        (0, 130, 200),
        (245, 130, 48),
        (145, 30, 180),
        (70, 240, 240),
        (240, 50, 230),
        (210, 245, 60),
        (250, 190, 212),
    ],
    dtype=np.uint8,
)


@dataclass
class Sample:
    """One augmented sample: an RGB ``uint8`` HWC image, boxes ``[l, t, r, b]`` relative to it,
    their labels and optionally a per-pixel label mask (``(H, W)``)."""

    image: np.ndarray
    boxes: np.ndarray
    labels: np.ndarray
    mask: np.ndarray | None = None


def denormalize(chw: np.ndarray, mean: Sequence[float], std: Sequence[float]) -> np.ndarray:
    """Undo ``crop_mirror_normalize``: a float CHW image back to ``uint8`` HWC."""
    hwc = np.transpose(chw, (1, 2, 0)) * np.asarray(std) + np.asarray(mean)
    return np.clip(np.rint(hwc), 0, 255).astype(np.uint8)


def _colour(label: int) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in _PALETTE[label % len(_PALETTE)])
    return r, g, b


def _tile(sample: Sample, names: Mapping[int, str]):
    from PIL import Image, ImageDraw

    image = sample.image.astype(np.float32)
    if sample.mask is not None:
        mask = sample.mask.astype(np.int64)
        overlay = _PALETTE[mask % len(_PALETTE)].astype(np.float32)
        covered = (mask > 0)[..., None]
        image = np.where(covered, 0.55 * image + 0.45 * overlay, image)
    tile = Image.fromarray(image.astype(np.uint8))
    draw = ImageDraw.Draw(tile)
    height, width = sample.image.shape[:2]
    for box, label in zip(sample.boxes, np.ravel(sample.labels), strict=True):
        left, top, right, bottom = (float(v) for v in box)
        xy = (left * width, top * height, right * width - 1, bottom * height - 1)
        colour = _colour(int(label))
        draw.rectangle(xy, outline=colour, width=2)
        text = names.get(int(label), str(int(label)))
        tx, ty = xy[0] + 3, max(xy[1] - 12, 0)
        draw.rectangle(draw.textbbox((tx, ty), text), fill=(0, 0, 0))
        draw.text((tx, ty), text, fill=colour)
    return tile


def contact_sheet(
    samples: Sequence[Sample], names: Mapping[int, str], path: Path, columns: int = 4
) -> Path:
    """Draw ``samples`` in a grid (boxes, label names, translucent masks) and save a PNG."""
    from PIL import Image

    tiles = [_tile(sample, names) for sample in samples]
    tile_w = max(t.width for t in tiles)
    tile_h = max(t.height for t in tiles)
    columns = min(columns, len(tiles))
    rows = -(-len(tiles) // columns)
    gap = 4
    sheet = Image.new(
        "RGB", (columns * (tile_w + gap) + gap, rows * (tile_h + gap) + gap), (24, 24, 24)
    )
    for i, tile in enumerate(tiles):
        row, column = divmod(i, columns)
        sheet.paste(tile, (gap + column * (tile_w + gap), gap + row * (tile_h + gap)))
    path.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(path)
    return path
