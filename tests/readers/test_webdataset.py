"""fn.readers.webdataset: grouping, extension sets, dtypes, missing components, indexes."""

from __future__ import annotations

import io
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import feedline.readers.webdataset as wds_plugin
from feedline import fn, pipeline_def, types
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.readers.webdataset import (
    IndexFileError,
    group_samples,
    read_wds_index,
    scan_tar,
    split_name,
)


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(wds_plugin, "webdataset-reader")
    with use_plugin_system(system):
        yield


MEMBERS = [
    ("shard/000.jpg", b"jpeg-zero"),
    ("shard/000.cls", np.array([7], np.int32).tobytes()),
    ("shard/001.jpg", b"jpeg-one"),
    ("shard/001.cls", np.array([8], np.int32).tobytes()),
    ("shard/.hidden.txt", b"ignored"),
    ("shard/002.JPEG", b"jpeg-two"),
    ("shard/003.left.png", b"png-three"),
    ("shard/003.cls", np.array([9], np.int32).tobytes()),
]


def make_tar(path: Path, members: list[tuple[str, bytes]] = MEMBERS) -> str:
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def write_index(tar_path: str, index_path: Path) -> str:
    """DALI's wds2idx v1.2 layout, written from tarfile's member table."""
    samples = group_samples(scan_tar(tar_path))
    lines = [f"v1.2 {len(samples)}"]
    lines += [" ".join(f"{c.ext} {c.offset} {c.size} {c.name}" for c in s) for s in samples]
    index_path.write_text("\n".join(lines) + "\n")
    return str(index_path)


def read(batch_size: int, **kwargs: Any) -> tuple[list[list[np.ndarray]], list[str]]:
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=1)
    def pipe() -> Any:
        out = fn.readers.webdataset(name="Reader", **kwargs)
        return tuple(out) if isinstance(out, list) else out

    p = pipe()
    try:
        p.build()
        outputs = p.run()
        return [[tl.at(i) for i in range(len(tl))] for tl in outputs], outputs[0].source_infos()
    finally:
        p.close()


def test_split_name_takes_the_first_dot_of_the_file_name() -> None:
    assert split_name("a.b/003.left.png") == ("a.b/003", "left.png")
    assert split_name("dir/.hidden") == ("dir/", "hidden")
    assert split_name("noext") == ("noext", "")


@pytest.mark.parametrize("indexed", [False, True], ids=["scanned", "indexed"])
def test_outputs_dtypes_and_source_info(tmp_path: Path, indexed: bool) -> None:
    tar = make_tar(tmp_path / "data.tar")
    index = [write_index(tar, tmp_path / "data.idx")] if indexed else None
    (images, labels), sources = read(
        4,
        paths=[tar],
        index_paths=index,
        ext=["jpg;jpeg;left.png", "cls"],
        dtypes=[types.UINT8, types.INT32],
        case_sensitive_extensions=False,
    )
    assert [bytes(x) for x in images] == [b"jpeg-zero", b"jpeg-one", b"jpeg-two", b"png-three"]
    assert [x.tolist() for x in labels] == [[7], [8], [], [9]]  # 002 has no cls: empty
    assert labels[0].dtype == np.int32 and labels[2].dtype == np.int32
    with tarfile.open(tar) as archive:
        members = {m.name: m.offset_data for m in archive}
    assert sources[0] == f"{tar}:{members['shard/000.jpg']}:shard/000.jpg"
    assert members["shard/000.jpg"] % 512 == 0


def test_case_sensitive_extensions_and_skip(tmp_path: Path) -> None:
    tar = make_tar(tmp_path / "data.tar")
    (images, _), _ = read(
        2, paths=[tar], ext=["jpg;jpeg", "cls"], missing_component_behavior="skip"
    )
    assert [bytes(x) for x in images] == [b"jpeg-zero", b"jpeg-one"]  # .JPEG does not match
    with pytest.raises(ValueError, match=r"'shard/002.JPEG'.*no component.*'jpg'"):
        read(1, paths=[tar], ext=["jpg", "cls"], missing_component_behavior="error")


def test_dtype_size_and_argument_errors(tmp_path: Path) -> None:
    tar = make_tar(tmp_path / "data.tar")
    with pytest.raises(ValueError, match=r"000.jpg.*9 bytes, not a multiple of int32"):
        read(1, paths=[tar], ext=["jpg"], dtypes=[types.INT32])
    with pytest.raises(ValueError, match="dtypes has 1 entries for 2 outputs"):
        read(1, paths=[tar], ext=["jpg", "cls"], dtypes=[types.UINT8])
    with pytest.raises(TypeError, match="Python type"):
        read(1, paths=[tar], ext=["jpg"], dtypes=[float])
    with pytest.raises(ValueError, match="one per archive"):
        read(1, paths=[tar], ext=["jpg"], index_paths=["a.idx", "b.idx"])
    with pytest.raises(ValueError, match="must be one of"):
        read(1, paths=[tar], ext=["jpg"], missing_component_behavior="fill")
    (tmp_path / "bad.tar").write_bytes(b"x" * 100)
    with pytest.raises(ValueError, match="not a readable"):
        read(1, paths=[str(tmp_path / "bad.tar")], ext=["jpg"])


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("", 0, "no version signature found"),
        ("v2.0 1\njpg 0 1 a.jpg\n", 0, r"Unsupported version of the index file \(v2.0\)"),
        ("v1.2\n", 0, "no sample count found"),
        ("v1.2 0\n", 0, "sample count must be positive"),
        ("v1.2 2\njpg 0 1 a.jpg\n", 2, "no extensions provided for the sample"),
        ("v1.2 1\njpg x 1 a.jpg\n", 1, r"component parameters \(offset, size or filename\)"),
        ("v1.1 1\njpg 0\n", 1, r"component parameters \(offset or size\)"),
        ("v1.1 1\njpg 100 1\n", 1, "not a multiple of tar block size"),
    ],
)
def test_index_file_errors_name_the_file_and_sample_line(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    bad = tmp_path / "bad.idx"
    bad.write_text(text)
    expected = f'Malformed index file at "{re.escape(str(bad))}" line {line} - .*{words}'
    with pytest.raises(IndexFileError, match=expected) as caught:
        read_wds_index(str(bad))
    assert isinstance(caught.value, RuntimeError) and isinstance(caught.value, ValueError)


def test_index_file_lines_past_the_count_are_ignored(tmp_path: Path) -> None:
    index = tmp_path / "ok.idx"
    index.write_text("v1.1 1\njpg 512 3 cls 1024 4\nnot a sample line\n")
    (sample,) = read_wds_index(str(index))
    assert [(c.ext, c.offset, c.size, c.line) for c in sample] == [
        ("jpg", 512, 3, 1),
        ("cls", 1024, 4, 1),
    ]


def test_an_index_pointing_past_the_archive_fails_when_read(tmp_path: Path) -> None:
    tar = make_tar(tmp_path / "a.tar", MEMBERS[:1])
    index = tmp_path / "far.idx"
    index.write_text("v1.1 1\njpg 1048576 1\n")
    with pytest.raises(RuntimeError, match="line 1 - offset is outside of the archive file"):
        read(1, paths=[tar], ext=["jpg"], index_paths=[str(index)])


def test_sharding_over_samples_of_several_archives(tmp_path: Path) -> None:
    first = make_tar(tmp_path / "a.tar", MEMBERS[:4])
    second = make_tar(tmp_path / "b.tar", [("x/010.jpg", b"ten"), ("x/011.jpg", b"eleven")])
    (images,), _ = read(2, paths=[first, second], ext=["jpg"], num_shards=2, shard_id=1)
    assert [bytes(x) for x in images] == [b"ten", b"eleven"]
