"""DALI's preprocessed-annotation files: what ``save_preprocessed_annotations`` writes.

A directory holds one file per internal array of DALI's COCO loader, each a native-endian
``uint32`` element count followed by the packed elements; an empty array gets no file:

* ``offsets.dat``, ``counts.dat``: int32, the first object and the object count per sample;
  ``boxes.dat``: float32, 4 per object (the count is the number of floats); ``labels.dat``:
  int32 per object; ``filenames.dat``: text, one file name per line (no count).
* with polygon or pixelwise masks: ``polygon_data.dat``: int32 rows ``(object in the sample,
  first vertex, end vertex)``, vertices counted from the sample's first; ``vertices.dat``:
  float32 ``(x, y)`` pairs (the count is the number of pairs); ``polygon_offset.dat``,
  ``polygons_count.dat``, ``vertices_offset.dat``, ``vertices_count.dat``: int64 per sample.
* with pixelwise masks: ``masks_rles.dat``: the count, then per RLE ``height, width, m`` as int64
  and ``m`` uint32 run lengths (uncompressed); ``masks_rles_idx.dat``: int32, the object each
  RLE belongs to, within its sample; ``masks_offset.dat``, ``mask_count.dat``: int64 per sample;
  ``heights.dat``, ``widths.dat``: int32 per sample.
* with ``image_ids``: ``original_ids.dat``, int32 per sample.

Values are final (``ltrb``, ``ratio``, thresholds already applied). :func:`save_dali` writes the
files byte for byte as DALI 2.4 does; :func:`load_dali` reads them into a
:class:`~feedline.readers.coco.index.CocoIndex`. One deliberate difference: DALI splits
``filenames.dat`` on any whitespace, so a name with a space breaks its samples; feedline splits
on line ends only.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from feedline.readers.coco.index import CocoIndex, CocoOptions
from feedline.readers.coco.raw import offsets, ranges, rle_runs, rle_string

__all__ = ["DALI_MARKER", "load_dali", "save_dali"]

DALI_MARKER = "offsets.dat"
"""The file every directory DALI writes has (it has at least one sample)."""


def _write(directory: str, name: str, values: np.ndarray, count: int | None = None) -> None:
    if values.size == 0:
        return
    with open(os.path.join(directory, name), "wb") as f:
        f.write(np.uint32(values.shape[0] if count is None else count).tobytes())
        f.write(np.ascontiguousarray(values).tobytes())


def _sample_of_objects(index: CocoIndex) -> np.ndarray:
    return np.repeat(np.arange(len(index)), np.diff(index.ann_off))


def save_dali(index: CocoIndex, directory: str, image_ids: bool) -> None:
    """Write ``index`` to ``directory`` (created if needed) in DALI's layout.

    Args:
        index: the annotations.
        directory: where.
        image_ids: also write ``original_ids.dat`` (DALI does when ``image_ids`` is set).

    Raises:
        ValueError: a file name holds a line end (``filenames.dat`` cannot store it), or an
            image id does not fit in int32.
        OSError: the directory cannot be written (the message names it).
    """
    bad = next((name for name in index.file_names if "\n" in name or "\r" in name), None)
    if bad is not None:
        raise ValueError(f"file name {bad!r} holds a line end: DALI's filenames.dat cannot")
    if image_ids and ((index.image_ids < -(2**31)) | (index.image_ids >= 2**31)).any():
        raise ValueError("an image id does not fit in DALI's int32 original_ids.dat")
    try:
        os.makedirs(directory, exist_ok=True)
        _save(index, directory, image_ids)
    except OSError as exc:
        raise OSError(
            exc.errno, f"cannot write preprocessed annotations to {directory!r}: {exc}"
        ) from None


def _save(index: CocoIndex, directory: str, image_ids: bool) -> None:
    counts = np.diff(index.ann_off)
    _write(directory, "offsets.dat", index.ann_off[:-1].astype(np.int32))
    _write(directory, "counts.dat", counts.astype(np.int32))
    boxes = np.asarray(index.bboxes, np.float32)
    _write(directory, "boxes.dat", boxes, count=boxes.size)
    _write(directory, "labels.dat", np.asarray(index.labels, np.int32))
    text = "".join(f"{name}\n" for name in index.file_names)
    with open(os.path.join(directory, "filenames.dat"), "wb") as f:
        f.write(text.encode("utf-8", "surrogateescape"))
    if index.options.polygons:
        _save_polygons(index, directory)
    if index.options.rle:
        _save_rles(index, directory)
        _write(directory, "heights.dat", index.heights.astype(np.int32))
        _write(directory, "widths.dat", index.widths.astype(np.int32))
    if image_ids:
        _write(directory, "original_ids.dat", index.image_ids.astype(np.int32))


def _save_polygons(index: CocoIndex, directory: str) -> None:
    assert index.ann_poly_off is not None and index.poly_first is not None
    assert index.poly_size is not None and index.vertices is not None
    sample_of_object = _sample_of_objects(index)
    per_object = np.diff(index.ann_poly_off)
    poly_off = index.ann_poly_off[index.ann_off]
    poly_count = np.diff(poly_off)
    owner = np.repeat(np.arange(per_object.size), per_object)  # object of each polygon
    sample = sample_of_object[owner]
    end = np.cumsum(index.poly_size)
    vert_off = offsets(index.poly_size)[poly_off]  # first vertex of each sample
    rows = np.empty((owner.size, 3), np.int32)
    rows[:, 0] = owner - index.ann_off[sample]
    rows[:, 2] = end - vert_off[sample]
    rows[:, 1] = rows[:, 2] - index.poly_size
    vertices = index.vertices[ranges(index.poly_first, index.poly_size)]
    if index.options.ratio:
        scale = np.stack([index.widths, index.heights], axis=1).astype(np.float32)
        vertices /= np.repeat(scale[sample], index.poly_size, axis=0)
    _write(directory, "polygon_data.dat", rows)
    _write(directory, "polygon_offset.dat", poly_off[:-1].astype(np.int64))
    _write(directory, "polygons_count.dat", poly_count.astype(np.int64))
    _write(directory, "vertices.dat", np.asarray(vertices, np.float32))
    _write(directory, "vertices_offset.dat", vert_off[:-1].astype(np.int64))
    _write(directory, "vertices_count.dat", np.diff(vert_off).astype(np.int64))


def _save_rles(index: CocoIndex, directory: str) -> None:
    assert index.ann_rle is not None and index.rle_hw is not None
    assert index.rle_off is not None and index.rle_counts is not None
    objects = np.flatnonzero(index.ann_rle >= 0)  # in sample order, then object order
    sample = _sample_of_objects(index)[objects]
    parts: list[bytes] = [np.uint32(objects.size).tobytes()]
    for r in index.ann_rle[objects].tolist():
        counts = index.rle_counts[int(index.rle_off[r]) : int(index.rle_off[r + 1])].tobytes()
        runs = rle_runs(counts)
        assert runs is not None  # checked when parsed
        height, width = (int(v) for v in index.rle_hw[r])
        parts += [np.array([height, width, runs.size], np.int64).tobytes()]
        parts += [runs.astype(np.uint32).tobytes()]
    if objects.size:
        with open(os.path.join(directory, "masks_rles.dat"), "wb") as f:
            f.write(b"".join(parts))
    _write(directory, "masks_rles_idx.dat", (objects - index.ann_off[sample]).astype(np.int32))
    per_sample = np.bincount(sample, minlength=len(index))
    _write(directory, "masks_offset.dat", offsets(per_sample)[:-1])
    _write(directory, "mask_count.dat", per_sample.astype(np.int64))


class _Reader:
    """Reads the ``.dat`` files of one directory; a missing one is an empty array."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def has(self, name: str) -> bool:
        return os.path.exists(os.path.join(self.directory, name))

    def array(self, name: str, dtype: Any, per_count: int = 1, width: int = 1) -> np.ndarray:
        """File ``name``: ``count × per_count`` elements, as rows of ``width``."""
        path = os.path.join(self.directory, name)
        if not os.path.exists(path):
            return np.zeros((0, width) if width > 1 else 0, dtype)
        with open(path, "rb") as f:
            data = f.read()
        count = int(np.frombuffer(data[:4], np.uint32)[0]) if len(data) >= 4 else -1
        size = np.dtype(dtype).itemsize
        if count < 0 or len(data) - 4 != count * per_count * size or (count * per_count) % width:
            raise ValueError(f"{path}: {count} elements announced, {len(data) - 4} bytes follow")
        values = np.frombuffer(data, dtype, offset=4)
        return values.reshape(-1, width) if width > 1 else values


def load_dali(directory: str) -> CocoIndex:
    """Read a directory written by DALI's (or feedline's) ``save_preprocessed_annotations``.

    Raises:
        ValueError: a damaged or inconsistent file (the message names it).
    """
    files = _Reader(directory)
    names_path = os.path.join(directory, "filenames.dat")
    with open(names_path, "rb") as f:
        file_names = f.read().decode("utf-8", "surrogateescape").splitlines()
    n = len(file_names)
    start = files.array("offsets.dat", np.int32).astype(np.int64)
    counts = files.array("counts.dat", np.int32).astype(np.int64)
    ann_off = offsets(counts)
    if start.shape != (n,) or counts.shape != (n,) or (start != ann_off[:-1]).any():
        raise ValueError(f"{directory}: offsets.dat and counts.dat do not describe {n} samples")
    m = int(ann_off[-1])
    boxes = files.array("boxes.dat", np.float32, width=4)
    labels = files.array("labels.dat", np.int32)
    if boxes.shape != (m, 4) or labels.shape != (m,):
        raise ValueError(f"{directory}: boxes.dat or labels.dat does not hold {m} objects")
    ids = files.array("original_ids.dat", np.int32).astype(np.int64)
    sizes = [files.array(f"{k}.dat", np.int32).astype(np.int64) for k in ("widths", "heights")]
    polygons = files.has("polygon_offset.dat")
    rle = files.has("masks_offset.dat")
    index = CocoIndex(
        file_names=file_names,
        image_ids=ids if ids.size else np.arange(n, dtype=np.int64),
        widths=sizes[0] if sizes[0].size else np.zeros(n, np.int64),
        heights=sizes[1] if sizes[1].size else np.zeros(n, np.int64),
        ann_off=ann_off,
        bboxes=boxes.copy(),
        labels=labels.copy(),
        options=CocoOptions(polygons=polygons, rle=rle),
    )
    if any(a.shape != (n,) for a in (index.image_ids, index.widths, index.heights)):
        raise ValueError(f"{directory}: original_ids, widths or heights.dat is not per sample")
    if polygons:
        _load_polygons(index, files)
    if rle:
        _load_rles(index, files)
    return index


def _per_sample(files: _Reader, name: str, n: int) -> np.ndarray:
    values = files.array(name, np.int64)
    if values.size == 0:
        values = np.zeros(n, np.int64)  # all samples empty: DALI writes no file
    if values.shape != (n,) or (values < 0).any():
        raise ValueError(f"{os.path.join(files.directory, name)}: not one count per sample")
    return values


def _load_polygons(index: CocoIndex, files: _Reader) -> None:
    n, m = len(index), int(index.ann_off[-1])
    poly_off = _per_sample(files, "polygon_offset.dat", n)
    poly_count = _per_sample(files, "polygons_count.dat", n)
    vert_off = _per_sample(files, "vertices_offset.dat", n)
    rows = files.array("polygon_data.dat", np.int32, 3, width=3).astype(np.int64)
    vertices = files.array("vertices.dat", np.float32, 2, width=2)
    where = f"{files.directory}: polygon_data.dat"
    if int(poly_count.sum()) != rows.shape[0] or (poly_off != offsets(poly_count)[:-1]).any():
        raise ValueError(f"{where} does not match polygon_offset.dat and polygons_count.dat")
    sample = np.repeat(np.arange(n), poly_count)
    owner = index.ann_off[sample] + rows[:, 0]
    first = vert_off[sample] + rows[:, 1]
    size = rows[:, 2] - rows[:, 1]
    objects_of_sample = np.diff(index.ann_off)[sample]
    if (
        (rows[:, 0] < 0).any()
        or (rows[:, 0] >= objects_of_sample).any()
        or (np.diff(owner) < 0).any()
        or (size < 0).any()
        or (first < 0).any()
        or (first + size > vertices.shape[0]).any()
    ):
        raise ValueError(f"{where} refers to objects or vertices that do not exist")
    index.ann_poly_off = offsets(np.bincount(owner, minlength=m))
    index.poly_first, index.poly_size = first, size
    index.vertices = vertices.copy()


def _load_rles(index: CocoIndex, files: _Reader) -> None:
    n, m = len(index), int(index.ann_off[-1])
    rle_off = _per_sample(files, "masks_offset.dat", n)
    rle_count = _per_sample(files, "mask_count.dat", n)
    which = files.array("masks_rles_idx.dat", np.int32).astype(np.int64)
    path = os.path.join(files.directory, "masks_rles.dat")
    table: list[tuple[int, int, bytes]] = []
    if os.path.exists(path):
        with open(path, "rb") as f:
            data = f.read()
        table = _rle_table(data, path)
    sample = np.repeat(np.arange(n), rle_count)
    owner = index.ann_off[sample] + which
    if (
        len(table) != which.size
        or int(rle_count.sum()) != which.size
        or (rle_off != offsets(rle_count)[:-1]).any()
        or (which < 0).any()
        or (owner >= index.ann_off[sample + 1]).any()
    ):
        raise ValueError(f"{path}: does not match masks_rles_idx, masks_offset, mask_count.dat")
    index.ann_rle = np.full(m, -1, np.int64)
    index.ann_rle[owner] = np.arange(which.size)
    index.rle_hw = np.array([(h, w) for h, w, _ in table], np.int64).reshape(-1, 2)
    strings = [s for _, _, s in table]
    index.rle_off = offsets([len(s) for s in strings])
    index.rle_counts = np.frombuffer(b"".join(strings), np.uint8).copy()


def _rle_table(data: bytes, path: str) -> list[tuple[int, int, bytes]]:
    count = int(np.frombuffer(data[:4], np.uint32)[0]) if len(data) >= 4 else -1
    table, at = [], 4
    for _ in range(max(count, 0)):
        if at + 24 > len(data):
            break
        height, width, size = (int(v) for v in np.frombuffer(data, np.int64, 3, at))
        if size < 0 or at + 24 + 4 * size > len(data):
            break
        runs = np.frombuffer(data, np.uint32, size, at + 24)
        if int(runs.sum(dtype=np.int64)) != height * width:
            break
        table.append((height, width, rle_string(runs.tolist())))
        at += 24 + 4 * size
    if count < 0 or len(table) != count or at != len(data):
        raise ValueError(f"{path}: damaged RLE table")
    return table
