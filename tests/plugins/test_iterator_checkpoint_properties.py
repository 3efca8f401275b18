"""Properties of iterator checkpoints: for any number of shards, batch size, last-batch policy,
padding, shuffling and reset mode, an iterator over pipelines restored from ``checkpoints()``
taken after any number of steps (epoch ends included) goes on exactly as the original does,
ends of epochs included (but for DALI's one exception, below)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from feedline import Pipeline, fn, pipeline_def
from feedline.plugins.numpy import GenericIterator, LastBatchPolicy

#: Files available to the readers.
FILES = 9
#: What a step yields at an epoch's end.
END = "end of epoch"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("iterator_files")
    paths = []
    for index in range(FILES):
        path = folder / f"{index}.bin"
        path.write_bytes(bytes([index]))
        paths.append(str(path))
    return paths


@st.composite
def setups(draw: st.DrawFn) -> dict[str, Any]:
    """An iterator's settings and those of the reader in each of its pipelines."""
    shards = draw(st.integers(1, 3))
    # every shard holds a full batch (DALI's iterators refuse an epoch without one)
    batch_size = draw(st.integers(1, min(4, FILES // shards)))
    return {
        "samples": draw(st.integers(shards * batch_size, FILES)),
        "shards": shards,
        "batch_size": batch_size,
        "random_shuffle": draw(st.booleans()),
        "stick_to_shard": draw(st.booleans()),
        "pad_last_batch": draw(st.booleans()),
        "policy": draw(st.sampled_from(list(LastBatchPolicy))),
        "auto_reset": draw(st.booleans()),
    }


def make_iterator(
    files: list[str], setup: dict[str, Any], checkpoints: list[str] | None = None
) -> GenericIterator:
    samples = setup["samples"]

    @pipeline_def(
        batch_size=setup["batch_size"], num_threads=1, device_id=None, enable_checkpointing=True
    )
    def graph(shard_id: int) -> Any:
        _, label = fn.readers.file(
            files=files[:samples],
            labels=list(range(samples)),
            num_shards=setup["shards"],
            shard_id=shard_id,
            random_shuffle=setup["random_shuffle"],
            stick_to_shard=setup["stick_to_shard"],
            pad_last_batch=setup["pad_last_batch"],
            name="Reader",
        )
        return label

    given_checkpoints = checkpoints or [None] * setup["shards"]
    pipes: list[Pipeline] = [
        graph(shard_id=k, checkpoint=given_checkpoints[k]) for k in range(setup["shards"])
    ]
    return GenericIterator(
        pipes,
        ["data"],
        reader_name="Reader",
        auto_reset=setup["auto_reset"],
        last_batch_policy=setup["policy"],
    )


def step(it: GenericIterator, auto_reset: bool) -> Any:
    """The next batch's labels per pipeline, or :data:`END` (then reset, without auto_reset)."""
    try:
        batch = next(it)
    except StopIteration:
        if not auto_reset:
            it.reset()
        return END
    return [np.asarray(out["data"]).ravel().tolist() for out in batch]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(setups(), st.integers(0, 12), st.integers(1, 8))
def test_an_iterator_restored_after_any_step_goes_on_as_the_original(
    files: list[str], setup: dict[str, Any], taken_after: int, compared: int
) -> None:
    original = make_iterator(files, setup)
    for _ in range(taken_after):
        step(original, setup["auto_reset"])
    resumed = make_iterator(files, setup, original.checkpoints())
    expected = [step(original, setup["auto_reset"]) for _ in range(compared)]
    if setup["auto_reset"] and expected[0] == END:
        # DALI's rule: an auto-resetting iterator restored where the original meets the end of
        # an epoch meets it while preparing its first batch, and starts the next epoch there
        expected = expected[1:]
    assert [step(resumed, setup["auto_reset"]) for _ in expected] == expected
