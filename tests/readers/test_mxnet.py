"""fn.readers.mxnet on RecordIO files written by the tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import feedline.readers.mxnet as mxnet_plugin
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.testing import check_reader
from tests.readers.reader_runs import assert_thread_independent, read
from tests.readers.recordio_data import framed, image_record, write_recordio


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(mxnet_plugin, "mxnet-reader")
    with use_plugin_system(system):
        yield


def payloads(count: int = 7) -> list[bytes]:
    """Images i*(5+i) bytes long; odd ones with one label in the header, even ones with 3."""
    return [image_record(bytes([i]) * (5 + i), [i * 0.5] if i % 2 else [1.0, 2.0, i], i)
            for i in range(count)]  # fmt: skip


def test_images_and_labels(tmp_path: Path) -> None:
    rec, idx = write_recordio(tmp_path, payloads(), split=3)
    images, labels = read("readers.mxnet", 7, path=[rec], index_path=[idx])
    assert [bytes(x) for x in images] == [bytes([i]) * (5 + i) for i in range(7)]
    assert labels[1].tolist() == [0.5] and labels[2].tolist() == [1.0, 2.0, 2.0]
    assert labels[0].dtype == np.float32 and images[0].dtype == np.uint8


def test_files_are_one_stream(tmp_path: Path) -> None:
    rec, idx = write_recordio(tmp_path, payloads(6))
    data = Path(rec).read_bytes()
    offsets = [int(line.split("\t")[1]) for line in Path(idx).read_text().splitlines()]
    cut = offsets[3]
    (tmp_path / "a.rec").write_bytes(data[:cut])
    (tmp_path / "b.rec").write_bytes(data[cut:])
    images, _ = read("readers.mxnet", 6, path=[str(tmp_path / "a.rec"), str(tmp_path / "b.rec")],
                     index_path=[idx])  # fmt: skip
    assert [bytes(x) for x in images] == [bytes([i]) * (5 + i) for i in range(6)]


def test_sharding_checkpoints_and_threads(tmp_path: Path) -> None:
    rec, idx = write_recordio(tmp_path, payloads())
    assert check_reader("readers.mxnet", {"path": [rec], "index_path": [idx]})
    assert_thread_independent("readers.mxnet", 4, path=[rec], index_path=[idx])


def test_damaged_files_are_named(tmp_path: Path) -> None:
    rec, idx = write_recordio(tmp_path, payloads(3))
    data = bytearray(Path(rec).read_bytes())
    data[0] ^= 0xFF  # the first record's magic number
    Path(rec).write_bytes(bytes(data))
    with pytest.raises(OperatorError, match=r"train\.rec.*magic"):
        read("readers.mxnet", 1, path=[rec], index_path=[idx])
    truncated = tmp_path / "short.rec"
    truncated.write_bytes(framed(payloads(1)[0])[:-8])
    (tmp_path / "short.idx").write_text("0\t0\n")
    with pytest.raises(OperatorError, match=r"short\.rec.*truncated"):
        read("readers.mxnet", 1, path=[str(truncated)], index_path=[str(tmp_path / "short.idx")])


def test_index_errors(tmp_path: Path) -> None:
    rec, idx = write_recordio(tmp_path, payloads(2))
    bad = tmp_path / "bad.idx"
    bad.write_text("0\t0\n1\tten\n")
    with pytest.raises((ValueError, OperatorError), match=r"bad\.idx.*line 2"):
        read("readers.mxnet", 1, path=[rec], index_path=[str(bad)])
    bad.write_text("0\t99999\n")
    with pytest.raises((ValueError, OperatorError), match="past the end"):
        read("readers.mxnet", 1, path=[rec], index_path=[str(bad)])
    with pytest.raises((ValueError, OperatorError), match="exactly one index file"):
        read("readers.mxnet", 1, path=[rec], index_path=[idx, idx])


def test_legacy_name(tmp_path: Path) -> None:
    rec, idx = write_recordio(tmp_path, payloads(2))
    images, _ = read("mxnet_reader", 2, path=[rec], index_path=[idx])
    assert bytes(images[1]) == bytes([1]) * 6
