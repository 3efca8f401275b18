"""fn.readers.sequence on folders of frames written by the tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import feedline.readers.sequence as sequence_plugin
from feedline import types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.testing import check_reader
from tests.readers.reader_runs import assert_thread_independent, read


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(sequence_plugin, "sequence-reader")
    with use_plugin_system(system):
        yield


@pytest.fixture
def frames(tmp_path: Path) -> str:
    """Folders b (5 frames), a (3) and c (1); frame k of a folder has level base + 10 k."""
    for name, count, base in (("b", 5, 100), ("a", 3, 0), ("c", 1, 50)):
        (tmp_path / name).mkdir()
        for k in range(count):
            pixels = np.full((6, 8, 3), base + 10 * k, np.uint8)
            pixels[0, 0] = (255, 0, 0)
            Image.fromarray(pixels).save(tmp_path / name / f"{k:03d}.png")
    (tmp_path / "b" / "notes.txt").write_text("not a frame")
    return str(tmp_path)


def levels(sequence: np.ndarray) -> list[int]:
    return [int(frame[1:, 1:].mean()) for frame in sequence]


def test_sequences_of_each_folder(frames: str) -> None:
    (out,) = read("readers.sequence", 6, file_root=frames, sequence_length=2)
    assert out[0].shape == (2, 6, 8, 3) and out[0].dtype == np.uint8
    assert [levels(s) for s in out] == [[0, 10], [10, 20], [100, 110], [110, 120], [120, 130],
                                        [130, 140]]  # fmt: skip
    (out,) = read("readers.sequence", 3, file_root=frames, sequence_length=2, step=2)
    assert [levels(s) for s in out] == [[0, 10], [100, 110], [120, 130]]
    (out,) = read("readers.sequence", 4, file_root=frames, sequence_length=2, stride=2)
    assert [levels(s) for s in out] == [[0, 20], [100, 120], [110, 130], [120, 140]]


def test_colour_spaces(frames: str) -> None:
    (rgb,) = read("readers.sequence", 1, file_root=frames, sequence_length=1)
    (bgr,) = read("readers.sequence", 1, file_root=frames, sequence_length=1,
                  image_type=types.BGR)  # fmt: skip
    (gray,) = read("readers.sequence", 1, file_root=frames, sequence_length=1,
                   image_type=types.GRAY)  # fmt: skip
    assert rgb[0][0, 0, 0].tolist() == [255, 0, 0] and bgr[0][0, 0, 0].tolist() == [0, 0, 255]
    assert gray[0].shape == (1, 6, 8, 1)


def test_sharding_checkpoints_and_threads(frames: str) -> None:
    assert check_reader("readers.sequence", {"file_root": frames, "sequence_length": 2})
    assert_thread_independent("readers.sequence", 4, file_root=frames, sequence_length=2)


def test_errors(frames: str, tmp_path: Path) -> None:
    with pytest.raises((ValueError, OperatorError), match="holds 9 frames"):
        read("readers.sequence", 1, file_root=frames, sequence_length=9)
    (Path(frames) / "a" / "001.png").write_bytes(b"\x89PNG broken")
    with pytest.raises(OperatorError, match=r"a/001\.png"):
        read("readers.sequence", 2, file_root=frames, sequence_length=2)
    with pytest.raises((ValueError, OperatorError), match="positive"):
        read("readers.sequence", 1, file_root=frames, sequence_length=2, stride=0)


def test_legacy_name(frames: str) -> None:
    (out,) = read("sequence_reader", 1, file_root=frames, sequence_length=2)
    assert levels(out[0]) == [0, 10]
