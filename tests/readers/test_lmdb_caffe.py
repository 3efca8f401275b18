"""fn.readers.caffe and fn.readers.caffe2 on LMDB databases written by the tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import feedline.readers.lmdb_caffe as caffe_plugin
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.readers.lmdb_caffe import parse_datum
from feedline.testing import check_reader
from tests.readers.lmdb_data import datum, field, tensor, tensor_protos, write_lmdb
from tests.readers.reader_runs import assert_thread_independent, read

pytest.importorskip("lmdb", reason="readers.caffe/caffe2 need the lmdb package (feedline[lmdb])")


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(caffe_plugin, "caffe-reader")
    with use_plugin_system(system):
        yield


@pytest.fixture(scope="module")
def caffe_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("caffe")
    return write_lmdb(root / "db", [datum(bytes([i]) * (3 + i), 3 * i - 4) for i in range(7)])


def test_datum_fields() -> None:
    data, label = parse_datum(np.frombuffer(datum(b"jpeg", -12345), np.uint8))
    assert bytes(data) == b"jpeg" and label == -12345


def test_caffe_images_and_labels(caffe_db: str) -> None:
    images, labels = read("readers.caffe", 7, path=[caffe_db])
    assert [bytes(x) for x in images] == [bytes([i]) * (3 + i) for i in range(7)]
    assert [x.tolist() for x in labels] == [[3 * i - 4] for i in range(7)]
    assert labels[0].dtype == np.int32 and images[0].dtype == np.uint8
    (only_labels,) = read("readers.caffe", 2, path=[caffe_db], image_available=False)
    assert only_labels[1].tolist() == [-1]
    both = read("readers.caffe", 14, path=[caffe_db, caffe_db], label_available=False)
    assert len(both) == 1 and bytes(both[0][7]) == bytes(both[0][0])


def test_caffe_sharding_checkpoints_and_threads(caffe_db: str) -> None:
    assert check_reader("readers.caffe", {"path": [caffe_db]})
    assert_thread_independent("readers.caffe", 4, path=[caffe_db])


def test_caffe2_label_types(tmp_path: Path) -> None:
    image = tensor(4, strings=[b"png!"])
    single = write_lmdb(
        tmp_path / "single", [tensor_protos(image, tensor(2, ints=[i])) for i in range(3)]
    )
    images, labels = read("readers.caffe2", 3, path=[single])
    assert bytes(images[2]) == b"png!" and [x.tolist() for x in labels] == [[0], [1], [2]]
    sparse = write_lmdb(tmp_path / "sparse", [tensor_protos(image, tensor(2, ints=[0, 3]))])
    (_, labels) = read("readers.caffe2", 1, path=[sparse], label_type=1, num_labels=5)
    assert labels[0].tolist() == [1, 0, 0, 1, 0] and labels[0].dtype == np.int32
    dense = write_lmdb(
        tmp_path / "dense", [tensor_protos(image, tensor(1, [3], floats=[0.5, 0, 2]))]
    )
    (_, labels) = read("readers.caffe2", 1, path=[dense], label_type=2, num_labels=3)
    assert labels[0].tolist() == [0.5, 0, 2] and labels[0].dtype == np.float32
    weighted = write_lmdb(tmp_path / "weighted", [tensor_protos(
        image, tensor(2, ints=[1, 2]), tensor(1, floats=[0.25, 0.75]))])  # fmt: skip
    (_, labels) = read("readers.caffe2", 1, path=[weighted], label_type=3, num_labels=4)
    assert labels[0].tolist() == [0, 0.25, 0.75, 0]


def test_caffe2_raw_pixels_extras_and_boxes(tmp_path: Path) -> None:
    record = tensor_protos(
        tensor(3, [2, 3, 2], raw=bytes(range(12))), tensor(1, floats=[1.5]),
        tensor(1, [2, 2], floats=[1, 2, 3, 4]), tensor(2, [4], ints=[0, 0, 9, 9]),
    )  # fmt: skip
    db = write_lmdb(tmp_path / "extras", [record])
    images, labels, extra, boxes = read("readers.caffe2", 1, path=[db], additional_inputs=1,
                                        bbox=True)  # fmt: skip
    assert images[0].shape == (2, 3, 2) and images[0].ravel().tolist() == list(range(12))
    assert labels[0].tolist() == [1.5]
    assert extra[0].tolist() == [1, 2, 3, 4] and extra[0].dtype == np.float32
    assert boxes[0].tolist() == [0, 0, 9, 9] and boxes[0].dtype == np.int32
    (no_label,) = read("readers.caffe2", 1, path=[db], label_type=4)
    assert no_label[0].shape == (2, 3, 2)


def test_corrupt_records_are_named(tmp_path: Path) -> None:
    db = write_lmdb(tmp_path / "broken", [datum(b"ok", 1), field(4, 5)[:-1] + b"\xff\xff"])
    with pytest.raises(OperatorError, match=r"broken.*00000001"):
        read("readers.caffe", 2, path=[db])
    c2 = write_lmdb(tmp_path / "c2broken", [tensor_protos(tensor(4, strings=[b"x"]))])
    with pytest.raises(OperatorError, match=r"c2broken"):
        read("readers.caffe2", 1, path=[c2])


def test_missing_database_is_named(tmp_path: Path) -> None:
    with pytest.raises((ValueError, OperatorError), match=r"nowhere"):
        read("readers.caffe", 1, path=[str(tmp_path / "nowhere")])


def test_legacy_names(caffe_db: str, tmp_path: Path) -> None:
    assert [x.tolist() for x in read("caffe_reader", 2, path=[caffe_db])[1]] == [[-4], [-1]]
    db = write_lmdb(
        tmp_path / "c2", [tensor_protos(tensor(4, strings=[b"x"]), tensor(2, ints=[3]))]
    )
    assert read("caffe2_reader", 1, path=[db])[1][0].tolist() == [3]
