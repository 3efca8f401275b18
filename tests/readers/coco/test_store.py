"""Tests of the preprocessed-annotation format and the automatic cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feedline.readers.coco.index import ARRAY_FIELDS, CocoIndex, CocoOptions, build_index
from feedline.readers.coco.raw import raw_from_document
from feedline.readers.coco.store import (
    CACHE_ENV,
    MANIFEST,
    cache_entry,
    load_index,
    load_preprocessed,
    resolve_cache_dir,
    save_index,
    store_in_cache,
)
from tests.readers.coco.data import make_document, write_dataset


def assert_same_index(a: CocoIndex, b: CocoIndex) -> None:
    assert a.file_names == b.file_names and a.options == b.options
    for name in ARRAY_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and np.array_equal(x, y), name


def _index(options: CocoOptions, seed: int = 0) -> CocoIndex:
    doc = make_document(seed)
    return build_index(raw_from_document(doc, "t", options.polygons, options.rle), options)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.integers(0, 3),
    st.sampled_from([None, ("g.jpg", "with space.jpg", "g.jpg")]),
)  # fmt: skip
def test_save_load_is_lossless(
    tmp_path: Path, ratio: bool, ltrb: bool, polygons: bool, rle: bool, seed: int, images
) -> None:
    options = CocoOptions(ratio=ratio, ltrb=ltrb, polygons=polygons or rle, rle=rle, images=images)
    index = _index(options, seed)
    folder = tmp_path / f"pre-{ratio}{ltrb}{polygons}{rle}{seed}{images is None}"
    save_index(index, str(folder))
    assert_same_index(load_index(str(folder)), index)
    assert not list(folder.glob(".tmp-*"))
    assert {p.suffix for p in folder.iterdir()} == {".npy", ".json"}


def test_large_arrays_are_memory_mapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("feedline.readers.coco.store._MMAP_BYTES", 100)
    index = _index(CocoOptions(polygons=True))
    save_index(index, str(tmp_path))
    loaded = load_index(str(tmp_path))
    assert isinstance(loaded.vertices, np.memmap) and not loaded.vertices.flags.writeable
    assert_same_index(loaded, index)


def test_npy_files_never_need_pickle(tmp_path: Path) -> None:
    save_index(_index(CocoOptions(polygons=True, rle=True)), str(tmp_path))
    for path in tmp_path.glob("*.npy"):
        np.load(path, allow_pickle=False)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    assert manifest["num_samples"] == 7 and manifest["options"]["rle"] is True


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not found"):
        load_index(str(tmp_path / "missing"))
    (tmp_path / "boxes.dat").write_bytes(b"\0" * 8)
    with pytest.raises(FileNotFoundError, match="no feedline_coco.json"):
        load_index(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="holds no preprocessed annotations"):
        load_preprocessed(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="not found"):
        load_preprocessed(str(tmp_path / "missing"))
    save_index(_index(CocoOptions()), str(tmp_path))
    (tmp_path / "labels.npy").write_bytes(b"garbage")
    with pytest.raises(ValueError, match=r"damaged .*labels.npy"):
        load_index(str(tmp_path))
    np.save(tmp_path / "labels.npy", np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        load_index(str(tmp_path))
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    (tmp_path / MANIFEST).write_text(json.dumps({**manifest, "version": 99}))
    with pytest.raises(ValueError, match="unknown format or version"):
        load_index(str(tmp_path))


def test_save_error_names_the_directory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError, match="cannot write preprocessed annotations to .*file"):
        save_index(_index(CocoOptions()), str(blocker / "sub"))


def test_cache_hits_and_invalidation(tmp_path: Path) -> None:
    ann = write_dataset(tmp_path / "data", make_document())
    cache = str(tmp_path / "cache")
    options = CocoOptions(polygons=True)
    assert cache_entry(cache, str(ann), options) is None
    index = _index(options)
    assert store_in_cache(cache, str(ann), options, index)
    assert_same_index(cache_entry(cache, str(ann), options), index)
    assert cache_entry(cache, str(ann), CocoOptions(polygons=True, ratio=True)) is None
    os.utime(ann, ns=(1, 1))
    assert cache_entry(cache, str(ann), options) is None
    assert cache_entry(cache, str(tmp_path / "missing.json"), options) is None


def test_damaged_cache_entries_are_ignored_and_replaced(tmp_path: Path) -> None:
    ann = write_dataset(tmp_path / "data", make_document())
    cache = tmp_path / "cache"
    options = CocoOptions()
    store_in_cache(str(cache), str(ann), options, _index(options))
    (entry,) = cache.iterdir()
    (entry / "bboxes.npy").write_bytes(b"broken")
    assert cache_entry(str(cache), str(ann), options) is None
    assert store_in_cache(str(cache), str(ann), options, _index(options))
    assert cache_entry(str(cache), str(ann), options) is not None
    assert [p.name for p in cache.iterdir()] == [entry.name]


def test_unwritable_cache_warns(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    ann = write_dataset(tmp_path / "data", make_document())
    with pytest.warns(RuntimeWarning, match="cannot write the COCO annotation cache"):
        assert not store_in_cache(str(blocker), str(ann), CocoOptions(), _index(CocoOptions()))


def test_resolve_cache_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    assert resolve_cache_dir(None) is None
    assert resolve_cache_dir("/x") == "/x"
    monkeypatch.setenv(CACHE_ENV, "/env")
    assert resolve_cache_dir(None) == "/env"
    assert resolve_cache_dir("") is None
    assert resolve_cache_dir("/x") == "/x"
