"""The iterators' DALI-style checkpoints: ``checkpoints()`` gives one pipeline checkpoint per
pipeline with the iterator's counters in it, and pipelines created from them give an iterator
that continues exactly where the first one stood (batches and epoch ends alike)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from feedline.core.plugins import PluginSystem
from feedline.plugins.numpy import GenericIterator, LastBatchPolicy
from tests.plugins.file_pipelines import RealPipelines


@pytest.fixture
def real(empty_plugin_system: PluginSystem, tmp_path: Path) -> Iterator[RealPipelines]:
    with RealPipelines(empty_plugin_system, tmp_path) as make:
        yield make


def observe(it: GenericIterator, steps: int) -> list[Any]:
    """What each of ``steps`` calls of ``next()`` gives: the labels per pipeline, or None."""
    seen: list[Any] = []
    for _ in range(steps):
        try:
            seen.append([b["data"].ravel().tolist() for b in next(it)])
        except StopIteration:
            seen.append(None)
    return seen


CASES = [
    # (samples, batch, shards, policy, pad, stick, steps before the checkpoint)
    (7, 2, 1, LastBatchPolicy.FILL, False, False, 5),
    (7, 2, 1, LastBatchPolicy.PARTIAL, False, False, 3),
    (9, 3, 2, LastBatchPolicy.FILL, False, False, 7),
    (9, 3, 2, LastBatchPolicy.DROP, True, True, 2),
    (11, 4, 3, LastBatchPolicy.PARTIAL, True, False, 4),
    (11, 4, 3, LastBatchPolicy.FILL, True, True, 0),
]


@pytest.mark.parametrize(("n", "bs", "shards", "policy", "pad", "stick", "warmup"), CASES)
def test_restored_iterator_continues_like_the_original(
    real: RealPipelines,
    n: int,
    bs: int,
    shards: int,
    policy: LastBatchPolicy,
    pad: bool,
    stick: bool,
    warmup: int,
) -> None:
    def make(checkpoints: list[str]) -> GenericIterator:
        pipes = real.readers(n, bs, shards, shards, pad, stick, checkpoints=checkpoints)
        return GenericIterator(
            pipes,
            ["data"],
            reader_name="Reader",
            auto_reset=True,
            last_batch_policy=policy,
            prepare_first_batch=False,
        )

    original = make([])
    observe(original, warmup)
    restored = make(original.checkpoints())
    steps = 2 * n // bs + 2
    assert observe(restored, steps) == observe(original, steps)


def test_checkpoints_carry_the_iterator_counters(real: RealPipelines) -> None:
    it = GenericIterator(real.readers(7, 2, checkpoints=[]), ["data"], reader_name="Reader")
    next(it)
    next(it)
    (checkpoint,) = it.checkpoints()
    assert json.loads(checkpoint)["iterator_data"]["counter"] == 4


def test_checkpoints_need_checkpointing_pipelines(real: RealPipelines) -> None:
    it = GenericIterator(real.readers(7, 2), ["data"], reader_name="Reader")
    with pytest.raises(ValueError, match="enable_checkpointing=True"):
        it.checkpoints()


def test_restored_at_the_epoch_end_is_empty_until_reset(real: RealPipelines) -> None:
    it = GenericIterator(real.readers(5, 2, checkpoints=[]), ["data"], reader_name="Reader")
    assert len(list(it)) == 3
    ended = GenericIterator(
        real.readers(5, 2, checkpoints=it.checkpoints()), ["data"], reader_name="Reader"
    )
    assert observe(ended, 1) == [None]
    it.reset()
    ended.reset()
    assert observe(ended, 3) == observe(it, 3)
