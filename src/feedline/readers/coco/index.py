"""DALI's ``readers.coco`` semantics over parsed annotations: the per-sample index.

:func:`build_index` turns :class:`~feedline.readers.coco.raw.RawCoco` (JSON order, unfiltered)
into :class:`CocoIndex`: the samples in reading order with their annotations stored sample by
sample — final values (DALI's rules: sample order, ``images`` selection, size and crowd
filters, class remapping, ``skip_empty``, ``ltrb`` and ``ratio``) — in a few flat NumPy arrays
with offsets. The same arrays are what the preprocessed-annotation files and the cache store.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from feedline.readers.coco.raw import RawCoco, offsets, ranges

__all__ = ["ARRAY_FIELDS", "CocoIndex", "CocoOptions", "build_index"]


@dataclass(frozen=True)
class CocoOptions:
    """The arguments that change what is parsed and how (the cache key holds all of them).

    Attributes:
        ltrb: boxes as ``[left, top, right, bottom]`` instead of ``[x, y, w, h]``.
        ratio: coordinates divided by the image width and height.
        size_threshold: objects whose box width or height is below it are dropped.
        skip_empty: drop samples without objects.
        include_iscrowd: keep crowd objects.
        avoid_class_remapping: labels are the raw category ids instead of 1..K.
        polygons: keep polygon segmentations (``polygon_masks``, ``masks``, ``pixelwise_masks``).
        rle: keep RLE segmentations (``pixelwise_masks``).
        images: only these file names, in this order (None: every image, sorted by id).
    """

    ltrb: bool = False
    ratio: bool = False
    size_threshold: float = 0.1
    skip_empty: bool = False
    include_iscrowd: bool = True
    avoid_class_remapping: bool = False
    polygons: bool = False
    rle: bool = False
    images: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (lists for tuples)."""
        data = asdict(self)
        data["images"] = None if self.images is None else list(self.images)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CocoOptions:
        """The inverse of :meth:`to_json`."""
        images = data.get("images")
        return cls(**{**data, "images": None if images is None else tuple(images)})


ARRAY_FIELDS = (
    "image_ids",
    "widths",
    "heights",
    "ann_off",
    "bboxes",
    "labels",
    "ann_poly_off",
    "poly_first",
    "poly_size",
    "vertices",
    "ann_rle",
    "rle_hw",
    "rle_off",
    "rle_counts",
)
"""The array attributes of :class:`CocoIndex`, in storage order."""


@dataclass
class CocoIndex:
    """The samples of a COCO reader and their final annotations.

    Attributes:
        file_names: image file name of each sample (relative to ``file_root``).
        image_ids: int64 original COCO id of each sample.
        widths, heights: int64 image size of each sample (from the JSON).
        ann_off: int64 ``(N + 1,)``: the objects of sample ``i`` are
            ``[ann_off[i], ann_off[i + 1])``.
        bboxes: float32 ``(M, 4)`` final boxes.
        labels: int32 ``(M,)`` final labels.
        ann_poly_off: int64 ``(M + 1,)``: the polygons of object ``k`` are
            ``[ann_poly_off[k], ann_poly_off[k + 1])`` (None without polygons).
        poly_first, poly_size: int64 ``(P,)``: polygon ``p`` is
            ``vertices[poly_first[p] : poly_first[p] + poly_size[p]]``.
        vertices: float32 ``(V, 2)`` vertices as in the JSON (in JSON order, not normalised: a
            sample's are gathered, and divided by the image size with ``ratio``, when read).
        ann_rle: int64 ``(M,)`` index into the RLE table or -1 (None without RLE).
        rle_hw, rle_off, rle_counts: the RLE table (see :class:`RawCoco`).
        options: what the values were built with.
    """

    file_names: list[str]
    image_ids: np.ndarray
    widths: np.ndarray
    heights: np.ndarray
    ann_off: np.ndarray
    bboxes: np.ndarray
    labels: np.ndarray
    options: CocoOptions = field(default_factory=CocoOptions)
    ann_poly_off: np.ndarray | None = None
    poly_first: np.ndarray | None = None
    poly_size: np.ndarray | None = None
    vertices: np.ndarray | None = None
    ann_rle: np.ndarray | None = None
    rle_hw: np.ndarray | None = None
    rle_off: np.ndarray | None = None
    rle_counts: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.file_names)

    def objects(self, i: int) -> slice:
        """The objects of sample ``i`` as a slice of the per-object arrays."""
        return slice(int(self.ann_off[i]), int(self.ann_off[i + 1]))

    def polygons(self, i: int, coordinate_units: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(polygons int32 (P, 3), vertices float32 (V, 2))`` of sample ``i``.

        Args:
            i: the sample.
            coordinate_units: start/end count coordinates instead of vertices (the deprecated
                ``masks`` format, ×2).

        Raises:
            ValueError: the index holds no polygons.
        """
        polygons = self._polygon_range(i)
        assert self.ann_poly_off is not None and self.poly_size is not None
        objects = self.objects(i)
        sizes = self.poly_size[polygons]
        rows = np.empty((sizes.size, 3), np.int32)
        per_object = np.diff(self.ann_poly_off[objects.start : objects.stop + 1])
        rows[:, 0] = np.repeat(np.arange(objects.stop - objects.start), per_object)
        np.cumsum(sizes, out=rows[:, 2])
        rows[:, 1] = rows[:, 2] - sizes
        if coordinate_units:
            rows[:, 1:] *= 2
        return rows, self.sample_vertices(i, polygons)

    def _polygon_range(self, i: int) -> slice:
        if self.ann_poly_off is None or self.poly_first is None or self.vertices is None:
            raise ValueError("these annotations were prepared without polygon data")
        objects = self.objects(i)
        return slice(int(self.ann_poly_off[objects.start]), int(self.ann_poly_off[objects.stop]))

    def sample_vertices(self, i: int, polygons: slice | None = None) -> np.ndarray:
        """The final vertices of sample ``i``'s polygons (or of ``polygons``), concatenated."""
        polygons = self._polygon_range(i) if polygons is None else polygons
        assert self.poly_first is not None and self.poly_size is not None
        assert self.vertices is not None
        vertices = self.vertices[ranges(self.poly_first[polygons], self.poly_size[polygons])]
        if self.options.ratio:
            vertices /= np.array([self.widths[i], self.heights[i]], np.float32)
        return vertices


def _sample_order(raw: RawCoco, images: tuple[str, ...] | None) -> np.ndarray:
    if images is None:
        return np.argsort(raw.image_ids, kind="stable")
    last = {name: i for i, name in enumerate(raw.file_names)}
    return np.array([last[name] for name in images if name in last], dtype=np.int64)


def _labels(raw: RawCoco, remap: bool) -> np.ndarray:
    cats = raw.ann_category_ids
    if not remap:
        if cats.size and (np.abs(cats) >= 2**31).any():
            raise ValueError("a category_id does not fit in int32")
        return cats.astype(np.int32)
    # Category entry k (first occurrence of an id) → k + 1; unknown ids → 0.
    unique, first = np.unique(raw.category_ids, return_index=True)
    if unique.size == 0:
        return np.zeros(cats.size, np.int32)
    at = np.minimum(np.searchsorted(unique, cats), unique.size - 1)
    return np.where(unique[at] == cats, first[at] + 1, 0).astype(np.int32)


def build_index(raw: RawCoco, options: CocoOptions) -> CocoIndex:
    """Apply ``options`` to ``raw`` (DALI's rules).

    Raises:
        ValueError: a category id does not fit in int32 with ``avoid_class_remapping``.
    """
    order = _sample_order(raw, options.images)
    boxes = raw.ann_boxes
    threshold = np.float32(options.size_threshold)
    keep = (boxes[:, 2] >= threshold) & (boxes[:, 3] >= threshold)
    if not options.include_iscrowd:
        keep &= ~raw.ann_crowd
    kept = np.flatnonzero(keep)
    kept = kept[np.argsort(raw.ann_image_ids[kept], kind="stable")]
    sorted_ids = raw.ann_image_ids[kept]
    ids = raw.image_ids[order]
    lo = np.searchsorted(sorted_ids, ids, "left")
    counts = np.searchsorted(sorted_ids, ids, "right") - lo
    if options.skip_empty:
        nonempty = counts > 0
        order, lo, counts, ids = order[nonempty], lo[nonempty], counts[nonempty], ids[nonempty]
    selected = kept[ranges(lo, counts)]
    sample = np.repeat(np.arange(order.size), counts)
    widths = raw.widths[order]
    heights = raw.heights[order]
    bboxes = boxes[selected]
    if options.ltrb:
        bboxes[:, 2:] += bboxes[:, :2]
    if options.ratio:
        bboxes /= np.stack([widths, heights] * 2, axis=1).astype(np.float32)[sample]
    index = CocoIndex(
        file_names=[raw.file_names[i] for i in order.tolist()],
        image_ids=ids,
        widths=widths,
        heights=heights,
        ann_off=offsets(counts),
        bboxes=bboxes,
        labels=_labels(raw, not options.avoid_class_remapping)[selected],
        options=options,
    )
    if options.polygons:
        _select_polygons(index, raw, selected)
    if options.rle and raw.ann_rle is not None:
        index.ann_rle = raw.ann_rle[selected]
        index.rle_hw, index.rle_off, index.rle_counts = raw.rle_hw, raw.rle_off, raw.rle_counts
    return index


def _select_polygons(index: CocoIndex, raw: RawCoco, selected: np.ndarray) -> None:
    assert raw.ann_poly_off is not None and raw.poly_vert_off is not None
    poly_counts = np.diff(raw.ann_poly_off)[selected]
    polys = ranges(raw.ann_poly_off[selected], poly_counts)
    index.ann_poly_off = offsets(poly_counts)
    index.poly_first = raw.poly_vert_off[polys]
    index.poly_size = np.diff(raw.poly_vert_off)[polys]
    index.vertices = raw.vertices
