"""Checkpoints of pipelines without a seed: a restored pipeline continues exactly, whenever the
checkpoint was taken (before the first iteration too), readers and random operators alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from feedline import fn, pipeline_def
from feedline.core.pipeline import Pipeline


@pytest.fixture
def files(tmp_path: Path) -> Path:
    for label in range(2):
        folder = tmp_path / f"class{label}"
        folder.mkdir()
        for index in range(7):
            (folder / f"{index}.wav").write_bytes(bytes([label, index]) * (index + 1))
    return tmp_path


def unseeded(root: Path, **kwargs: Any) -> Pipeline:
    @pipeline_def(batch_size=3, num_threads=2, device_id=None, enable_checkpointing=True)
    def pipe() -> Any:
        data, label = fn.readers.file(
            file_root=str(root), name="Reader", random_shuffle=True, initial_fill=4
        )
        return data, label, fn.random.uniform(range=(0.0, 1.0)), fn.random.coin_flip()

    return pipe(**kwargs)


def batches(pipe: Pipeline, count: int) -> list[list[bytes]]:
    out = []
    for _ in range(count):
        out.append([np.asarray(sample).tobytes() for tl in pipe.run() for sample in tl])
    return out


@pytest.mark.parametrize("iterations", [0, 1, 5])
def test_a_restored_unseeded_pipeline_continues_exactly(files: Path, iterations: int) -> None:
    original = unseeded(files)
    original.build()
    batches(original, iterations)
    restored = unseeded(files, checkpoint=original.checkpoint())
    assert batches(restored, 6) == batches(original, 6)


def test_the_checkpoint_holds_the_seeds_and_the_readers_start(files: Path) -> None:
    pipe = unseeded(files)
    pipe.build()
    state = json.loads(pipe.checkpoint())
    assert set(state["readers"]) == {"Reader"}
    assert len(state["seeds"]) == 3 and all(isinstance(s, int) for s in state["seeds"].values())


def test_load_state_dict_after_build_takes_the_seeds(files: Path) -> None:
    original = unseeded(files)
    original.build()
    batches(original, 2)
    state = original.state_dict()
    restored = unseeded(files)
    restored.build()
    restored.load_state_dict(state)
    assert batches(restored, 3) == batches(original, 3)


def test_a_checkpoint_of_another_pipeline_is_refused(files: Path) -> None:
    pipe = unseeded(files)
    pipe.build()
    state = pipe.state_dict()
    state["seeds"]["no_such_operator"] = 1
    with pytest.raises(RuntimeError, match="'no_such_operator', absent from this pipeline"):
        unseeded(files, checkpoint=json.dumps(state)).build()


def test_a_checkpoint_file_read_as_bytes_restores(files: Path, tmp_path: Path) -> None:
    # DALI's recipe: checkpoint(filename), later open(filename, "rb").read() as checkpoint=
    original = unseeded(files)
    original.build()
    batches(original, 2)
    path = tmp_path / "saved.cpt"
    original.checkpoint(str(path))
    restored = unseeded(files, checkpoint=path.read_bytes())
    assert batches(restored, 3) == batches(original, 3)
    assert restored.is_restored_from_checkpoint


def test_bytes_that_are_not_utf8_are_refused_by_name(files: Path) -> None:
    with pytest.raises(ValueError, match="checkpoint is not UTF-8 JSON text"):
        unseeded(files, checkpoint=b"\x08\xff\xfe protobuf")


def test_checkpoint_without_checkpointing_is_refused_in_dalis_words(files: Path) -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def plain() -> Any:
        return fn.random.coin_flip()

    pipe = plain()
    pipe.build()
    with pytest.raises(
        RuntimeError, match="Cannot save the checkpoint. The `enable_checkpointing`"
    ):
        pipe.checkpoint()
