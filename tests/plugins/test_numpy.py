"""The NumPy iterators: zero-copy hand-over, ragged outputs, registration, and DALI's epoch
tables against real pipelines (``readers.file`` over 7 generated files)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import feedline.plugins.numpy as numpy_plugin
from feedline.core.plugins import PluginSystem
from feedline.core.registry import load_object
from feedline.core.tensor import TensorListCPU
from feedline.plugins.iterator import IteratorError, LastBatchPolicy
from feedline.plugins.numpy import GenericIterator, RaggedIterator
from tests.plugins.fake_pipeline import FakePipeline, OneBatch
from tests.plugins.file_pipelines import RealPipelines
from tests.plugins.spec_tables import (
    BATCH,
    ONE_PIPELINE,
    TWO_PIPELINES,
    N,
    batch_values,
    parse_epoch,
)


@pytest.fixture
def real(empty_plugin_system: PluginSystem, tmp_path: Path) -> Iterator[RealPipelines]:
    with RealPipelines(empty_plugin_system, tmp_path) as make:
        yield make


def epochs_of(it: GenericIterator, count: int) -> list[list[list[list[int]]]]:
    return [[batch_values(b) for b in it] for _ in range(count)]


# ------------------------------------------------------------------------- real pipelines


@pytest.mark.parametrize(("policy", "pad"), list(ONE_PIPELINE))
def test_one_pipeline_table_on_real_pipelines(real: RealPipelines, policy: str, pad: bool) -> None:
    first_len, epochs = ONE_PIPELINE[(policy, pad)]
    it = GenericIterator(
        real.readers(N, BATCH, pad=pad),
        ["data"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy[policy],
    )
    assert len(it) == first_len
    assert epochs_of(it, len(epochs)) == [parse_epoch(e) for e in epochs]


@pytest.mark.parametrize(("policy", "pad"), list(TWO_PIPELINES))
def test_two_pipelines_table_on_real_pipelines(real: RealPipelines, policy: str, pad: bool) -> None:
    epochs = TWO_PIPELINES[(policy, pad)]
    it = GenericIterator(
        real.readers(N, BATCH, shards=2, pipes=2, pad=pad),
        ["data"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy[policy],
        auto_reset=True,
    )
    got = []
    for _ in epochs:
        got.append([batch_values(b) for b in it])
    assert got == [parse_epoch(e) for e in epochs]


def test_labels_are_int32_batches_of_shape_bs_1(real: RealPipelines) -> None:
    it = GenericIterator(real.readers(N, BATCH), ["label"], reader_name="Reader")
    (batch,) = next(it)
    assert batch["label"].dtype == np.int32
    assert batch["label"].shape == (BATCH, 1)


def test_external_source_stop_iteration_ends_each_epoch(real: RealPipelines) -> None:
    it = GenericIterator(real.source(3), ["x"])
    for _ in range(3):
        assert [b[0]["x"].ravel().tolist() for b in it] == [[0, 1], [10, 11], [20, 21]]


def test_external_source_with_auto_reset(real: RealPipelines) -> None:
    it = GenericIterator(real.source(2), ["x"], auto_reset="yes")
    for _ in range(2):
        assert len(list(it)) == 2


def test_state_dict_resumes_a_shuffled_sharded_reader_mid_epoch(
    real: RealPipelines, tmp_path: Path
) -> None:
    def make(**kwargs: Any) -> GenericIterator:
        pipes = real.readers(11, 2, shards=2, pipes=2, random_shuffle=True, initial_fill=3)
        return GenericIterator(pipes, ["data"], reader_name="Reader", auto_reset=True, **kwargs)

    def take(it: GenericIterator, count: int) -> list:
        got: list = []
        while len(got) < count:
            try:
                got.append(batch_values(next(it)))
            except StopIteration:
                got.append("epoch end")
        return got

    reference = make()
    assert "epoch end" in take(reference, 5)  # 3 batches per epoch: crosses a boundary
    saved = tmp_path / "state.json"
    saved.write_text(json.dumps(reference.state_dict()))
    expected = take(reference, 8)

    resumed = make(prepare_first_batch=False)
    resumed.load_state_dict(json.loads(saved.read_text()))
    assert take(resumed, 8) == expected


# ------------------------------------------------------------------------- hand-over


def test_batches_share_the_pipeline_buffers() -> None:
    pipe = FakePipeline.reader(N, BATCH, num_outputs=2)
    it = GenericIterator([pipe], ["a", "b"], reader_name="Reader")
    (batch,) = next(it)
    tl_a, tl_b = pipe.last_shared
    assert np.shares_memory(batch["a"], tl_a.as_array())
    assert np.shares_memory(batch["b"], tl_b.as_array())


def ragged_batch() -> TensorListCPU:
    return TensorListCPU.from_samples([np.ones((3, 4), np.float32), np.zeros((1, 4), np.float32)])


def test_ragged_iterator_returns_lists_of_views() -> None:
    images = TensorListCPU.from_samples([np.zeros((2, 2), np.uint8)] * 2)
    boxes = ragged_batch()
    it = RaggedIterator(
        OneBatch(images, boxes),
        ["images", "boxes"],
        output_types=[RaggedIterator.DENSE_TAG, RaggedIterator.LIST_TAG],
    )
    (batch,) = next(it)
    assert batch["images"].shape == (2, 2, 2)
    assert [b.shape for b in batch["boxes"]] == [(3, 4), (1, 4)]
    assert all(np.shares_memory(b, s) for b, s in zip(batch["boxes"], boxes.samples(), strict=True))


def test_ragged_iterator_untagged_outputs_are_dense() -> None:
    with pytest.raises(RuntimeError, match="'boxes' of pipeline 0 is ragged"):
        RaggedIterator(OneBatch(ragged_batch()), ["boxes"])


def test_ragged_iterator_partial_trims_lists() -> None:
    pipe = FakePipeline.reader(3, 2, num_outputs=1)
    it = RaggedIterator(
        [pipe],
        ["data"],
        reader_name="Reader",
        output_types=["list"],
        last_batch_policy=LastBatchPolicy.PARTIAL,
    )
    assert [batch_values(b) for b in it] == parse_epoch("12 3")


def test_ragged_iterator_rejects_unknown_tags() -> None:
    with pytest.raises(IteratorError, match="'sparse_coo' for output 'boxes'"):
        RaggedIterator(OneBatch(ragged_batch()), ["boxes"], output_types=["sparse_coo"])


# ------------------------------------------------------------------------- registration


def test_registers_the_numpy_iterators(empty_plugin_system: PluginSystem) -> None:
    empty_plugin_system.register(numpy_plugin, "numpy")
    iterators = empty_plugin_system.ensure_loaded().iterators
    assert load_object(iterators["numpy"][0]) is GenericIterator
    assert load_object(iterators["numpy.ragged"][0]) is RaggedIterator


def test_entry_points_name_the_three_iterator_plugins() -> None:
    points = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="feedline.plugins")}
    assert points["numpy"] == "feedline.plugins.numpy"
    assert points["pytorch"] == "feedline.plugins.pytorch"
    assert points["jax"] == "feedline.plugins.jax"


def test_numpy_plugin_works_without_any_framework() -> None:
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['jax'] = None\n"
        "import numpy as np\n"
        "from feedline.core.tensor import TensorListCPU\n"
        "from feedline.plugins.numpy import GenericIterator\n"
        "class P:\n"
        "    max_batch_size = 2\n"
        "    def build(self): pass\n"
        "    def schedule_run(self): pass\n"
        "    def release_outputs(self): pass\n"
        "    def state_dict(self): return {}\n"
        "    def share_outputs(self): return (TensorListCPU(np.arange(4).reshape(2, 2)),)\n"
        "print(next(GenericIterator(P(), ['x']))[0]['x'].sum())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "6"
