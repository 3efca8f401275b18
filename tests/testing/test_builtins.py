"""The built-in operators and readers pass the same kit third-party plugins are held to."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import feedline.tfrecord as tfrec
from feedline.cli.demo_data import generate_coco
from feedline.core.plugins import get_plugin_system
from feedline.readers.tfrecord_index import write_index
from feedline.testing import check_operator, check_reader
from tests.readers.test_webdataset import make_tar
from tests.readers.tfrecord_data import example, feature, write_tfrecord
from tests.testing.builtin_examples import EXAMPLES, READERS, SKIPPED


def _public_operators() -> list[str]:
    """The public operators of feedline's own plugins (not those of other installed packages)."""
    from feedline.cli.plugins import is_public

    system = get_plugin_system()
    registry = system.ensure_loaded()
    own = {info.name for info in system.plugins if info.distribution == "feedline"}
    return sorted(
        name
        for name, entry in registry.operators.items()
        if is_public(entry) and entry.owner in own
    )


PUBLIC = _public_operators()


def test_every_public_operator_has_an_example_or_is_a_reader() -> None:
    assert set(PUBLIC) == set(EXAMPLES) | set(READERS) | set(SKIPPED)


@pytest.mark.parametrize("name", PUBLIC)
def test_builtin_operator_passes_check_operator(name: str) -> None:
    if name in SKIPPED:
        pytest.skip(SKIPPED[name])
    done = check_operator(name, EXAMPLES.get(name))
    if name not in READERS:
        assert {"outputs", "threads", "seed"} <= set(done)


def test_file_reader_passes_check_reader(tmp_path: Path) -> None:
    for i in range(7):
        folder = tmp_path / f"class{i % 2}"
        folder.mkdir(exist_ok=True)
        Image.fromarray(np.full((4, 5, 3), i * 30, np.uint8)).save(folder / f"{i}.png")
    assert "checkpoint" in check_reader("readers.file", {"file_root": str(tmp_path)})


def test_coco_reader_passes_check_reader(tmp_path: Path) -> None:
    data = generate_coco(tmp_path, num_images=5)
    args = {"file_root": str(data.images), "annotations_file": str(data.annotations)}
    assert "checkpoint" in check_reader("readers.coco", args)


def test_numpy_reader_passes_check_reader(tmp_path: Path) -> None:
    for i in range(7):
        np.save(tmp_path / f"{i}.npy", np.arange(i, i + 2 + i % 3, dtype=np.float32))
    assert "checkpoint" in check_reader("readers.numpy", {"file_root": str(tmp_path)})


def test_tfrecord_reader_passes_check_reader(tmp_path: Path) -> None:
    records = [
        example({"data": feature([f"record{i}".encode()]), "label": feature([i])}) for i in range(7)
    ]
    path, index = tmp_path / "data.tfrecord", tmp_path / "data.idx"
    write_tfrecord(path, records)
    assert write_index(str(path), str(index)) == 7
    features = {
        "data": tfrec.FixedLenFeature((), tfrec.string, ""),
        "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    }
    args = {"path": [str(path)], "index_path": [str(index)], "features": features}
    assert "checkpoint" in check_reader("readers.tfrecord", args)


def test_webdataset_reader_passes_check_reader(tmp_path: Path) -> None:
    members = []
    for i in range(7):
        members += [(f"s/{i:03}.txt", f"sample {i}".encode()), (f"s/{i:03}.cls", bytes([i]))]
    args = {"paths": [make_tar(tmp_path / "data.tar", members)], "ext": ["txt", "cls"]}
    assert "checkpoint" in check_reader("readers.webdataset", args)
