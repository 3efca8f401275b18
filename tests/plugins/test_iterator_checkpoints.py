"""DALI's iterator checkpoints: ``checkpoints()`` gives one pipeline checkpoint per pipeline with
the iterator's counters inside; an iterator over pipelines restored from them continues with the
batch after the last one handed out, mid-epoch and across epochs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from feedline import Pipeline, fn, pipeline_def
from feedline.plugins.numpy import GenericIterator

SAMPLES = 7


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    paths = []
    for index in range(SAMPLES):
        path = tmp_path / f"{index}.bin"
        path.write_bytes(bytes([index]))
        paths.append(str(path))
    return paths


def pipelines(files: list[str], checkpoints: list[str] | None = None) -> list[Pipeline]:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_checkpointing=True)
    def graph(shard_id: int) -> Any:
        _, label = fn.readers.file(
            files=files,
            labels=list(range(SAMPLES)),
            num_shards=2,
            shard_id=shard_id,
            random_shuffle=True,
            name="Reader",
        )
        return label

    given = checkpoints or [None, None]
    return [graph(shard_id=k, checkpoint=given[k]) for k in range(2)]


def labels(batch: Any) -> list[int]:
    return sorted(int(v) for pipe_out in batch for v in pipe_out["data"].ravel())


def step(it: GenericIterator) -> list[int]:
    """The next batch's labels, going on into the next epoch (auto_reset) at an epoch's end."""
    try:
        return labels(next(it))
    except StopIteration:
        return labels(next(it))


def iterator(pipes: list[Pipeline]) -> GenericIterator:
    return GenericIterator(pipes, ["data"], reader_name="Reader", auto_reset=True)


@pytest.mark.parametrize("taken", [0, 1, 3, 4, 6])
def test_an_iterator_over_restored_pipelines_continues_exactly(
    files: list[str], taken: int
) -> None:
    original = iterator(pipelines(files))
    for _ in range(taken):
        step(original)
    saved = original.checkpoints()
    assert len(saved) == 2 and all(json.loads(c)["iterator_data"] for c in saved)
    resumed = iterator(pipelines(files, saved))
    assert [step(resumed) for _ in range(6)] == [step(original) for _ in range(6)]


def test_checkpoints_need_checkpointing(files: list[str]) -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def plain() -> Any:
        return fn.readers.file(files=files, name="Reader")[1]

    with pytest.raises(ValueError, match="checkpointing disabled"):
        GenericIterator([plain()], ["data"], reader_name="Reader").checkpoints()


def test_pipelines_must_agree_on_checkpointing(files: list[str]) -> None:
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def plain() -> Any:
        return fn.readers.file(files=files, name="Reader", num_shards=2, shard_id=1)[1]

    with pytest.raises(ValueError, match="same value for `enable_checkpointing`"):
        GenericIterator([pipelines(files)[0], plain()], ["data"], reader_name="Reader")


def test_a_plain_pipeline_checkpoint_restores_no_counters_and_warns(files: list[str]) -> None:
    original = pipelines(files)
    with pytest.warns(UserWarning, match="Iterator data was not saved in the checkpoint"):
        iterator(pipelines(files, [pipe.checkpoint() for pipe in original]))


def test_pipelines_restored_from_different_iterator_states_are_warned_about(
    files: list[str],
) -> None:
    it = iterator(pipelines(files))
    first = it.checkpoints()
    step(it)
    second = it.checkpoints()
    with pytest.warns(UserWarning, match="different iterator data"):
        iterator(pipelines(files, [first[0], second[1]]))


def test_restored_right_after_an_epochs_end_the_iterator_goes_on_as_the_original(
    files: list[str],
) -> None:
    original = iterator(pipelines(files))
    assert [labels(batch) for batch in original]  # the whole epoch, to its StopIteration
    resumed = iterator(pipelines(files, original.checkpoints()))
    assert [labels(batch) for batch in resumed] == [labels(batch) for batch in original]
    assert [step(resumed) for _ in range(4)] == [step(original) for _ in range(4)]
