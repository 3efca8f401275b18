"""fn.readers.file inside pipelines: DALI's tables, outputs and errors."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import feedline.readers.file as file_plugin
from feedline import fn, pipeline_def
from feedline.core.errors import OperatorError
from feedline.core.pipeline import Pipeline
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.core.types import DataType
from feedline.readers.base import Reader
from tests.conftest import sample_data
from tests.readers.test_sampler import PAD_TABLE, SEVEN_TABLE, STREAM_TABLE, parse

FILE_TREE = sample_data("file_tree")


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(file_plugin, "file-reader")
    with use_plugin_system(system):
        yield


def make_files(root: Path, names: list[str], subdir: str = "cls") -> Path:
    """One class directory holding a file per name; each file's content is its name."""
    (root / subdir).mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / subdir / f"{name}.jpg").write_bytes(name.encode())
    return root


@pytest.fixture
def ten(tmp_path: Path) -> str:
    return str(make_files(tmp_path, [f"{i:02d}" for i in range(10)]))


@pytest.fixture
def seven(tmp_path: Path) -> str:
    return str(make_files(tmp_path, [str(i) for i in range(1, 8)]))


def reader_pipe(bs: int, seed: int = 3, **kwargs: Any) -> Pipeline:
    @pipeline_def(batch_size=bs, num_threads=2, device_id=None, seed=seed)
    def pipe() -> Any:
        data, label = fn.readers.file(name="Reader", **kwargs)
        return data, label

    return pipe()


def read(bs: int, batches: int, **kwargs: Any) -> list[list[str]]:
    """Batches of file contents (= names) read by one pipeline."""
    pipe = reader_pipe(bs, **kwargs)
    pipe.build()
    out = []
    for _ in range(batches):
        data, _label = pipe.run()
        out.append([np.asarray(data[i]).tobytes().decode() for i in range(len(data))])
    pipe.close()
    return out


def as_ints(batches: list[list[str]]) -> list[list[int]]:
    """File names ("05") as the numbers of DALI's tables."""
    return [[int(name) for name in batch] for batch in batches]


@pytest.mark.parametrize(("k", "stick", "expected"), STREAM_TABLE)
def test_spec_1_2_streaming_table(ten: str, k: int, stick: bool, expected: str) -> None:
    want = parse(expected)
    got = read(2, len(want), file_root=ten, num_shards=3, shard_id=k, stick_to_shard=stick)
    assert as_ints(got) == want


@pytest.mark.parametrize(("s", "k", "bs", "stick", "expected"), PAD_TABLE)
def test_spec_1_3_padding_table(
    ten: str, s: int, k: int, bs: int, stick: bool, expected: str
) -> None:
    want = parse(expected)
    got = read(bs, len(want), file_root=ten, num_shards=s, shard_id=k, stick_to_shard=stick,
               pad_last_batch=True)  # fmt: skip
    assert as_ints(got) == want


@pytest.mark.parametrize(("s", "k", "pad", "expected"), SEVEN_TABLE)
def test_spec_5_4_seven_files(seven: str, s: int, k: int, pad: bool, expected: str) -> None:
    want = parse(expected)
    got = read(2, len(want), file_root=seven, num_shards=s, shard_id=k, pad_last_batch=pad)
    assert as_ints(got) == want


def test_epoch_size_and_reader_meta(seven: str) -> None:
    pipe = reader_pipe(2, file_root=seven, num_shards=2, shard_id=1, pad_last_batch=True)
    pipe.build()
    assert pipe.epoch_size("Reader") == 8
    assert pipe.reader_meta() == {
        "Reader": {
            "epoch_size": 7,
            "epoch_size_padded": 8,
            "number_of_shards": 2,
            "shard_id": 1,
            "pad_last_batch": 1,
            "stick_to_shard": 0,
        }
    }
    pipe.close()


def test_random_shuffle_fixed_list_permutation(ten: str) -> None:
    # initial_fill=1: pure permuted-list order, the same for any op seed.
    orders = [
        [name for b in read(5, 2, seed=seed, file_root=ten, random_shuffle=True, initial_fill=1)
         for name in b]
        for seed in (1, 2, 3)
    ]  # fmt: skip
    assert orders[0] == orders[1] == orders[2]
    assert sorted(orders[0]) == [f"{i:02d}" for i in range(10)]
    assert orders[0] != sorted(orders[0])
    halves = [
        read(5, 1, file_root=ten, random_shuffle=True, initial_fill=1, num_shards=2, shard_id=k)[0]
        for k in (0, 1)
    ]
    assert halves == [orders[0][:5], orders[0][5:]]


def test_shuffle_buffer_epochs_and_shard_rotation(ten: str) -> None:
    """Every aligned block of one epoch is a permutation; shard k at epoch e = shard k+e at 0."""
    s, bs = 3, 4
    common = {"file_root": ten, "random_shuffle": True, "initial_fill": 6, "num_shards": s,
              "pad_last_batch": True}  # fmt: skip
    per_shard = []
    for k in range(s):
        batches = read(bs, 3 * s, shard_id=k, **common)  # 4 samples per shard-epoch = 1 batch
        epochs = [sorted(set(b)) for b in batches]
        per_shard.append(epochs)
        for e in range(len(epochs)):
            assert epochs[e] == epochs[e % s]  # a padded epoch repeats every s epochs
    for e in range(s):
        union = [name for k in range(s) for name in per_shard[k][e]]
        assert sorted(union) == [f"{i:02d}" for i in range(10)]  # disjoint and complete
        for k in range(s):
            assert per_shard[k][e] == per_shard[(k + e) % s][0]


def test_shuffle_after_epoch_is_global_and_keeps_shards(ten: str) -> None:
    per_shard = [
        read(1, 4 * 5, file_root=ten, shuffle_after_epoch=True, num_shards=2, shard_id=k)
        for k in (0, 1)
    ]
    flat = [[b[0] for b in batches] for batches in per_shard]
    for e in range(4):
        epoch = flat[0][5 * e : 5 * e + 5] + flat[1][5 * e : 5 * e + 5]
        assert sorted(epoch) == [f"{i:02d}" for i in range(10)]
    assert flat[0][:5] != flat[0][5:10]


def test_outputs_types_layouts_and_source_info(tmp_path: Path) -> None:
    make_files(tmp_path, ["a", "b"], "x")
    (tmp_path / "x" / "empty.png").write_bytes(b"")
    for dont_use_mmap in (False, True):
        pipe = reader_pipe(3, file_root=str(tmp_path), dont_use_mmap=dont_use_mmap, read_ahead=True)
        pipe.build()
        data, label = pipe.run()
        assert data.dtype == DataType.UINT8 and label.dtype == DataType.INT32
        assert data.layout() == "" and label.layout() == ""
        assert data.shape() == [(1,), (1,), (0,)]
        assert label.shape() == [(1,), (1,), (1,)]
        assert [data[i].source_info() for i in range(3)] == ["x/a.jpg", "x/b.jpg", "x/empty.png"]
        assert [label[i].source_info() for i in range(3)] == ["x/a.jpg", "x/b.jpg", "x/empty.png"]
        assert label.as_array().ravel().tolist() == [0, 0, 0]
        pipe.close()


def test_file_list_and_files_modes(tmp_path: Path) -> None:
    make_files(tmp_path, ["cute kitten", "dog"], "pets")
    (tmp_path / "list.txt").write_text("pets/cute kitten.jpg 5\n\npets/dog.jpg\t0012\n")
    pipe = reader_pipe(2, file_list=str(tmp_path / "list.txt"))
    pipe.build()
    data, label = pipe.run()
    assert [np.asarray(data[i]).tobytes() for i in range(2)] == [b"cute kitten", b"dog"]
    assert label.as_array().ravel().tolist() == [5, 12]
    assert data[0].source_info() == "pets/cute kitten.jpg"
    pipe.close()
    pipe = reader_pipe(3, files=["pets/dog.jpg", "pets/cute kitten.jpg", "pets/dog.jpg"],
                       labels=[-1, 7, 9], file_root=str(tmp_path))  # fmt: skip
    pipe.build()
    data, label = pipe.run()
    assert [np.asarray(data[i]).tobytes() for i in range(3)] == [b"dog", b"cute kitten", b"dog"]
    assert label.as_array().ravel().tolist() == [-1, 7, 9]
    pipe.close()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"file_root": "/nonexistent/feedline"}, FileNotFoundError,
         "file_root '/nonexistent/feedline' does not exist"),
        ({"num_shards": 11}, RuntimeError, r"input samples: 10, needs .* number of shards: 11\."),
        ({"num_shards": 2, "shard_id": 2}, ValueError, "num_shards needs to be greater"),
        ({"shard_id": -1}, ValueError, "shard_id must not be negative"),
        ({"shuffle_after_epoch": True, "random_shuffle": True}, ValueError, "random_shuffle"),
        ({"file_list": "x.txt"}, ValueError, "either files or file_list"),
    ],
)  # fmt: skip
def test_build_errors(ten: str, kwargs: dict, error: type[Exception], match: str) -> None:
    args = {"file_root": ten, **kwargs}
    if "file_list" in kwargs:
        args = {"files": ["a"], **kwargs}
    with pytest.raises(error, match=match):
        reader_pipe(2, **args).build()


def test_empty_directory_and_lazy_init(tmp_path: Path) -> None:
    (tmp_path / "cls").mkdir()
    (tmp_path / "cls" / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match=r"No files found.*file_root '.*'"):
        reader_pipe(2, file_root=str(tmp_path)).build()
    pipe = reader_pipe(2, file_root="/nonexistent/feedline", lazy_init=True)
    pipe.build()
    with pytest.raises(FileNotFoundError, match="/nonexistent/feedline"):
        pipe.reader_meta("Reader")
    pipe.close()


@pytest.mark.parametrize("dont_use_mmap", [False, True])
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(items=st.lists(st.integers(0, 9), min_size=1, max_size=12))
def test_load_batch_matches_load_per_file(ten: str, dont_use_mmap: bool, items: list[int]) -> None:
    pipe = reader_pipe(2, files=[f"cls/{i:02d}.jpg" for i in range(10)], file_root=ten,
                       labels=[7 * i for i in range(10)], dont_use_mmap=dont_use_mmap)  # fmt: skip
    pipe.build()
    reader = pipe._readers()["Reader"]
    data, labels = reader.load_batch(items)
    want_data, want_labels = Reader.load_batch(reader, items)
    assert (
        [d.tobytes() for d in data]
        == [d.tobytes() for d in want_data]
        == [f"{i:02d}".encode() for i in items]
    )
    assert all(d.flags.writeable is dont_use_mmap for d in data)
    assert labels.dtype == np.int32 and labels.shape == (len(items), 1)
    assert labels.tolist() == [w.tolist() for w in want_labels] == [[7 * i] for i in items]
    pipe.close()


def test_unreadable_file_names_its_path(tmp_path: Path) -> None:
    make_files(tmp_path, ["a", "b", "c"])
    os.symlink(tmp_path / "gone", tmp_path / "cls" / "bad.jpg")  # dangling: listed, unreadable
    pipe = reader_pipe(2, file_root=str(tmp_path))
    pipe.build()
    first = pipe.run()[0]
    assert [np.asarray(first[i]).tobytes() for i in range(2)] == [b"a", b"b"]
    with pytest.raises(OperatorError) as info:
        pipe.run()
    message = str(info.value)
    assert "operator 'Reader'" in message and "sample 0" in message
    assert "(cls/bad.jpg)" in message and "FileNotFoundError" in message
    assert str(tmp_path / "cls" / "bad.jpg") in message
    pipe.close()


# Labels and sizes below were produced by DALI 2.4 readers.file on the same tree.
DALI_FILE_TREE = [
    ("100/swan-3584559_640.jpg", 0, 93373), ("414/backpack-3510412_640.jpg", 1, 105693),
    ("510/ship-1083562_640.jpg", 2, 114016), ("695/padlock-406986_640.jpg", 3, 98306),
    ("704/parking-meter-3556171_960_720.jpg", 4, 122096),
    ("704/parking-meter-828887_960_720.jpg", 4, 217598),
    ("704/street-2116802_960_720.jpg", 4, 97573),
    ("814/motor-boats-3524545_960_720.jpg", 5, 83813),
    ("814/powerboat-2784250_960_720.jpg", 5, 117846),
    ("814/speedboat-271768_960_720.jpg", 5, 241222), ("84/peacock-90051_640.jpg", 6, 166535),
]  # fmt: skip


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_real_file_tree(dont_use_mmap: bool) -> None:
    pipe = reader_pipe(11, file_root=str(FILE_TREE), dont_use_mmap=dont_use_mmap)
    pipe.build()
    data, label = pipe.run()
    got = [(data[i].source_info(), int(label.at(i)[0]), data.shape()[i][0]) for i in range(11)]
    assert got == DALI_FILE_TREE
    for i, (source, _, _) in enumerate(DALI_FILE_TREE):
        assert np.asarray(data[i]).tobytes() == (FILE_TREE / source).read_bytes()
    pipe.close()


def test_real_file_list() -> None:
    pipe = reader_pipe(11, file_list=str(FILE_TREE / "image_list.txt"))
    pipe.build()
    data, label = pipe.run()
    for i in range(11):
        source = data[i].source_info()
        assert int(label.at(i)[0]) == int(source.split("/")[0])
        assert np.asarray(data[i]).tobytes() == (FILE_TREE / source).read_bytes()
    pipe.close()


def test_paths_given_as_pathlib_objects(tmp_path: Path) -> None:
    root = make_files(tmp_path, ["a", "b"])
    listing = tmp_path / "list.txt"
    listing.write_text("cls/b.jpg 7\n")
    by_root = read(2, 1, file_root=root)
    assert sorted(by_root[0]) == ["a", "b"]
    assert read(1, 1, file_root=root, file_list=listing) == [["b"]]
    assert read(1, 1, files=[root / "cls" / "a.jpg"]) == [["a"]]
