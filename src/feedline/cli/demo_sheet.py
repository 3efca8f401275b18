"""The demo's contact sheet: augmented samples in a grid with their boxes, labels and masks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Sample", "contact_sheet", "denormalize", "place_label"]

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


def _ink(background: tuple[int, int, int]) -> tuple[int, int, int]:
    """Black or white, whichever reads better on ``background``."""
    r, g, b = background
    return (0, 0, 0) if 0.299 * r + 0.587 * g + 0.114 * b > 140 else (255, 255, 255)


def _font(height: int) -> Any:
    """A font whose labels read at the tile's size: about 1/20 of it, at least 13 pixels."""
    from PIL import ImageFont

    size = max(13, round(height / 20))
    try:
        return ImageFont.load_default(size=size)  # scalable where Pillow has FreeType
    except (TypeError, ValueError, OSError, ImportError):  # older Pillow or no FreeType
        return ImageFont.load_default()


Rectangle = tuple[int, int, int, int]  # left, top, right, bottom (exclusive)


def _overlaps(a: Rectangle, b: Rectangle) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_label(
    box: Rectangle, size: tuple[int, int], bounds: tuple[int, int], taken: Sequence[Rectangle]
) -> Rectangle | None:
    """Where a label of ``size`` (width, height) goes for ``box`` inside a ``bounds`` (width,
    height) tile without overlapping any rectangle of ``taken``: just above the box's top-left
    corner, else inside it, below the box, at its right corners, else the nearest free spot
    down the tile from the box's top; None when the tile has no room left."""
    width, height = size
    tile_w, tile_h = bounds
    if width > tile_w or height > tile_h:
        return None
    left, top, right, bottom = box
    corners = [
        (left, top - height),
        (left, top),
        (left, bottom),
        (left, bottom - height),
        (right - width, top - height),
        (right - width, top),
        (right - width, bottom),
        (right - width, bottom - height),
    ]
    starts = sorted({min(max(x, 0), tile_w - width) for x in (left, right - width, 0)})
    rows = sorted(range(tile_h - height + 1), key=lambda y: (y < top, abs(y - top)))
    scan = [(x, y) for y in rows for x in starts]
    for x, y in [*corners, *scan]:
        x, y = min(max(x, 0), tile_w - width), min(max(y, 0), tile_h - height)
        spot = (x, y, x + width, y + height)
        if not any(_overlaps(spot, other) for other in taken):
            return spot
    return None


def _tile(sample: Sample, names: Mapping[int, str]) -> Any:
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
    font = _font(height)
    labels = []
    for box, label in zip(sample.boxes, np.ravel(sample.labels), strict=True):
        x0, y0, x1, y1 = (float(v) for v in box)
        xy = (round(x0 * width), round(y0 * height), round(x1 * width) - 1, round(y1 * height) - 1)
        colour = _colour(int(label))
        draw.rectangle(xy, outline=colour, width=2)
        labels.append((xy, names.get(int(label), str(int(label))), colour))
    taken: list[Rectangle] = []
    pad = 2
    for (left, top, right, bottom), text, colour in labels:  # after the boxes: on top of them
        x0, y0, x1, y1 = draw.textbbox((0, 0), text, font=font)
        size = (x1 - x0 + 2 * pad, y1 - y0 + 2 * pad)
        spot = place_label((left, top, right + 1, bottom + 1), size, (width, height), taken)
        if spot is None:
            continue  # no room left on this tile: the coloured box stays without its name
        taken.append(spot)
        draw.rectangle((spot[0], spot[1], spot[2] - 1, spot[3] - 1), fill=colour)
        draw.text((spot[0] + pad - x0, spot[1] + pad - y0), text, fill=_ink(colour), font=font)
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
