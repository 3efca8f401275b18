"""external_source and checkpoints: a callable taking the sample or batch index is asked, after
a restore, for the batch that follows the saved one (epoch and iteration in the epoch); other
sources keep no state and are warned about, in DALI's words."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from feedline import Pipeline, fn, pipeline_def
from feedline.core.types import BatchInfo, SampleInfo

EPOCH = 3  # batches per epoch
BATCH = 2


def by_iteration(index: int) -> list[np.ndarray]:
    if index >= EPOCH:
        raise StopIteration
    return [np.array([index, i]) for i in range(BATCH)]


def by_batch_info(info: BatchInfo) -> list[np.ndarray]:
    if info.iteration >= EPOCH:
        raise StopIteration
    return [np.array([info.epoch_idx, info.iteration, i]) for i in range(BATCH)]


def by_sample_info(info: SampleInfo) -> np.ndarray:
    if info.idx_in_epoch >= EPOCH * BATCH:
        raise StopIteration
    return np.array([info.epoch_idx, info.iteration, info.idx_in_epoch, info.idx_in_batch])


MODES: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "iteration": (by_iteration, {"batch": True}),
    "batch_info": (by_batch_info, {"batch": True, "batch_info": True}),
    "sample_info": (by_sample_info, {"batch": False}),
}


def make(mode: str, **kwargs: Any) -> Pipeline:
    source, es_args = MODES[mode]

    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, enable_checkpointing=True)
    def pipe() -> Any:
        return fn.external_source(source=source, **es_args)

    return pipe(**kwargs)


def step(pipe: Pipeline) -> list[list[int]]:
    try:
        out = pipe.run()
    except StopIteration:
        pipe.reset()
        out = pipe.run()
    return [s.tolist() for s in out[0].samples()]


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("iterations", [0, 2, 3, 7])
def test_a_restored_indexed_source_continues_where_the_consumer_stopped(
    mode: str, iterations: int
) -> None:
    original = make(mode)
    for _ in range(iterations):
        step(original)
    restored = make(mode, checkpoint=original.checkpoint())
    assert restored.is_restored_from_checkpoint is False  # not built yet
    after = [step(restored) for _ in range(2 * EPOCH)]
    assert restored.is_restored_from_checkpoint is True
    assert after == [step(original) for _ in range(2 * EPOCH)]


def test_the_checkpoint_holds_the_iteration_in_the_epoch() -> None:
    pipe = make("iteration")
    for _ in range(EPOCH + 1):  # the whole first epoch, then one batch of the second
        step(pipe)
    state = pipe.state_dict()
    assert (state["epoch_idx"], state["iteration_in_epoch"]) == (1, 1)


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        (lambda: np.zeros((BATCH, 1)), "parameterless callable"),
        ([np.zeros((BATCH, 1))], "an iterable"),
        (iter([np.zeros((BATCH, 1))]), "an iterable"),
    ],
)
def test_sources_without_an_index_are_warned_about(source: Any, kind: str) -> None:
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, enable_checkpointing=True)
    def pipe() -> Any:
        return fn.external_source(source=source)

    with pytest.warns(UserWarning, match=f"with {kind} as a 'source'") as record:
        pipe().build()
    assert "DALI doesn't capture state of such 'source'." in str(record[0].message)


def test_no_warning_without_checkpointing_or_for_indexed_sources() -> None:
    @pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
    def plain() -> Any:
        return fn.external_source(source=lambda: np.zeros((BATCH, 1)))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain().build()
        make("sample_info").build()
