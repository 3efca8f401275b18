"""The built-in operators and readers pass the same kit third-party plugins are held to."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from feedline.cli.demo_data import generate_coco
from feedline.core.plugins import get_plugin_system
from feedline.testing import check_operator, check_reader
from tests.testing.builtin_examples import EXAMPLES, READERS


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
    assert set(PUBLIC) == set(EXAMPLES) | set(READERS)


@pytest.mark.parametrize("name", PUBLIC)
def test_builtin_operator_passes_check_operator(name: str) -> None:
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
