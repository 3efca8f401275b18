"""Tests of whole-file reading: read_bytes and the per-reader FileBytes mapping cache."""

from __future__ import annotations

import errno
import gc
import mmap
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import feedline.readers.fileio as fileio
from feedline.readers.fileio import FileBytes, read_bytes


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "a.bin").write_bytes(b"alpha")
    (tmp_path / "b.bin").write_bytes(bytes(range(256)) * 300)
    (tmp_path / "empty.bin").write_bytes(b"")
    (tmp_path / "sub").mkdir()
    return tmp_path


def out_of_mappings(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.ENOMEM, "Cannot allocate memory")


@pytest.mark.parametrize("read_ahead", [False, True])
def test_read_bytes_maps_whole_file_read_only(files: Path, read_ahead: bool) -> None:
    data = read_bytes(str(files / "b.bin"), read_ahead=read_ahead)
    assert isinstance(data.base.obj, mmap.mmap) and not data.flags.writeable
    assert data.tobytes() == (files / "b.bin").read_bytes()


def test_read_bytes_falls_back_to_plain_reads_without_mappings(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fileio.mmap, "mmap", out_of_mappings)
    data = read_bytes(str(files / "b.bin"))
    assert data.flags.writeable and data.tobytes() == (files / "b.bin").read_bytes()
    assert read_bytes(str(files / "empty.bin")).shape == (0,)


def test_read_bytes_irregular_files_name_the_path(files: Path) -> None:
    for use_mmap in (True, False):
        with pytest.raises(IsADirectoryError, match=r"cannot read '.*sub': not a regular file"):
            read_bytes(str(files / "sub"), use_mmap=use_mmap)
    if os.path.exists("/dev/null"):
        with pytest.raises(OSError, match=r"cannot read '/dev/null': not a regular file"):
            read_bytes("/dev/null")


def test_mapping_is_shared_while_a_sample_lives(files: Path) -> None:
    read = FileBytes()
    first = read(str(files / "b.bin"))
    second = read(str(files / "b.bin"))
    assert first is not second and np.shares_memory(first, second)
    assert not first.flags.writeable and not second.flags.writeable
    other = read(str(files / "a.bin"))
    assert other.tobytes() == b"alpha" and not np.shares_memory(first, other)


def test_replaced_file_is_seen_once_its_old_samples_are_gone(files: Path) -> None:
    read = FileBytes()
    path = files / "a.bin"
    old = read(str(path))
    (files / "new.bin").write_bytes(b"replaced!")
    os.replace(files / "new.bin", path)
    assert read(str(path)).tobytes() == b"alpha"  # the live mapping, as DALI does
    del old
    gc.collect()
    assert read(str(path)).tobytes() == b"replaced!"


def test_plain_reads_are_never_shared(files: Path) -> None:
    read = FileBytes(use_mmap=False)
    first, second = read(str(files / "b.bin")), read(str(files / "b.bin"))
    assert first.flags.writeable and not np.shares_memory(first, second)
    assert first.tobytes() == second.tobytes() == (files / "b.bin").read_bytes()
    assert len(read) == 0


def test_empty_files_and_plain_read_fallbacks_are_not_remembered(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = FileBytes(read_ahead=True)
    assert read(str(files / "empty.bin")).shape == (0,)
    monkeypatch.setattr(fileio.mmap, "mmap", out_of_mappings)
    fallback = read(str(files / "a.bin"))
    assert fallback.flags.writeable and fallback.tobytes() == b"alpha"
    assert len(read) == 0
    with pytest.raises(FileNotFoundError, match=r"cannot open '.*missing\.bin'"):
        read(str(files / "missing.bin"))


def test_forgotten_mappings_are_swept(tmp_path: Path) -> None:
    read = FileBytes()
    paths = []
    for i in range(3000):
        path = tmp_path / f"{i}.bin"
        path.write_bytes(i.to_bytes(2, "little"))
        paths.append(str(path))
    kept = [read(p) for p in paths[:10]]
    for path in paths[10:]:
        assert read(path).tobytes() == int(path.rsplit("/", 1)[1][:-4]).to_bytes(2, "little")
    assert len(read) <= 1024  # dead entries are dropped as the table grows
    assert all(np.shares_memory(read(p), k) for p, k in zip(paths[:10], kept, strict=True))


def is_mapping(array: np.ndarray) -> bool:
    """Whether ``array`` views a memory mapping (through any chain of views)."""
    base = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(getattr(base, "obj", None), mmap.mmap)


def test_files_under_map_from_are_read_into_read_only_buffers(tmp_path: Path) -> None:
    limit = 4096
    for size, mapped in ((limit - 1, False), (limit, True)):
        path = tmp_path / f"{size}.bin"
        path.write_bytes(os.urandom(size))
        data = read_bytes(str(path), map_from=limit)
        assert is_mapping(data) is mapped
        assert not data.flags.writeable and data.tobytes() == path.read_bytes()
        assert read_bytes(str(path), use_mmap=False, map_from=limit).flags.writeable


def test_small_file_copies_are_shared_like_mappings(files: Path) -> None:
    read = FileBytes(map_from=fileio.SMALL_FILE_BYTES)
    first = read(str(files / "b.bin"))
    second = read(str(files / "b.bin"))
    assert not is_mapping(first)
    assert np.shares_memory(first, second) and not second.flags.writeable
    assert len(read) == 1
    del first, second
    gc.collect()
    (files / "b.bin").write_bytes(b"replaced")
    assert read(str(files / "b.bin")).tobytes() == b"replaced"


def test_map_from_still_maps_large_files_and_falls_back_without_mappings(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = files / "big.bin"
    big.write_bytes(bytes(range(256)) * 64)
    read = FileBytes(map_from=4096)
    assert is_mapping(read(str(big)))
    monkeypatch.setattr(fileio.mmap, "mmap", out_of_mappings)
    fallback = FileBytes(map_from=4096)(str(big))
    assert fallback.flags.writeable and fallback.tobytes() == big.read_bytes()
    assert FileBytes(map_from=4096)(str(files / "empty.bin")).shape == (0,)
