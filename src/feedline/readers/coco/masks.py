"""Pixelwise masks of COCO samples, rasterised with pycocotools.

Each label's mask is the union of the polygons of all its objects (converted to RLE and merged
by the COCO API from float32 vertices), or, when the label has no polygon object, the RLE of
its last object with one. Labels are painted in ascending order, so where objects overlap the
highest label wins. RLEs are expanded to pixels with NumPy (pycocotools' ``decode`` warns under
NumPy 2). pycocotools is imported on first use only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline.readers.coco.index import CocoIndex
from feedline.readers.coco.raw import ranges, rle_runs

__all__ = ["pixelwise_mask"]


def _coco_mask_api() -> tuple[Any, Any]:
    try:
        from pycocotools import _mask, mask
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "readers.coco with pixelwise_masks needs pycocotools (pip install pycocotools, "
            "or feedline[coco])"
        ) from None
    return _mask, mask


def pixelwise_mask(index: CocoIndex, i: int) -> np.ndarray:
    """The ``(H, W, 1)`` int32 label mask of sample ``i``.

    Raises:
        ValueError: the index holds no segmentation data, or an RLE's size is not the image's.
    """
    if index.ann_poly_off is None or index.poly_first is None or index.vertices is None:
        raise ValueError("these annotations were prepared without segmentation data")
    assert index.poly_size is not None
    height, width = int(index.heights[i]), int(index.widths[i])
    out = np.zeros((height, width), np.int32)
    objects = index.objects(i)
    labels = index.labels[objects]
    poly_off = index.ann_poly_off[objects.start : objects.stop + 1]
    scale = np.array([width, height], np.float32)
    for label in np.unique(labels).tolist():
        members = np.flatnonzero(labels == label)
        parts = ranges(poly_off[members], poly_off[members + 1] - poly_off[members])
        if parts.size:
            polygons = []
            for p in parts.tolist():
                first = int(index.poly_first[p])
                points = index.vertices[first : first + int(index.poly_size[p])]
                if index.options.ratio:
                    points = (points / scale) * scale  # DALI's float32 round trip
                polygons.append(points.astype(np.float64).ravel())
            _mask, mask_utils = _coco_mask_api()
            counts = mask_utils.merge(_mask.frPoly(polygons, height, width))["counts"]
        else:
            counts = _last_rle(index, objects.start + members, i)
            if counts is None:
                continue
        out[_pixels(counts, height, width)] = label
    return out[:, :, None]


def _pixels(counts: bytes, height: int, width: int) -> np.ndarray:
    """The boolean ``(height, width)`` mask of compressed RLE ``counts`` (column-major runs)."""
    runs = rle_runs(counts)
    if runs is None or int(runs.sum()) != height * width:
        raise ValueError(f"malformed RLE {counts[:40]!r} for a {height}x{width} image")
    values = np.arange(runs.size, dtype=np.int64) & 1
    return np.repeat(values.astype(bool), runs).reshape(width, height).T


def _last_rle(index: CocoIndex, objects: np.ndarray, i: int) -> bytes | None:
    if index.ann_rle is None or index.rle_hw is None or index.rle_off is None:
        return None
    assert index.rle_counts is not None
    found = index.ann_rle[objects]
    found = found[found >= 0]
    if found.size == 0:
        return None
    r = int(found[-1])
    size = [int(v) for v in index.rle_hw[r]]
    if size != [int(index.heights[i]), int(index.widths[i])]:
        raise ValueError(
            f"an RLE segmentation of {index.file_names[i]!r} is {size[0]}x{size[1]} (height x "
            f"width), but the image is {index.heights[i]}x{index.widths[i]}"
        )
    return index.rle_counts[int(index.rle_off[r]) : int(index.rle_off[r + 1])].tobytes()
