"""PipelineDefinition + StructuredOutputIterator end to end: inputs (per sample, per batch, in
worker processes), shuffling and sharding, strings, nested dicts of torch tensors, epochs, the
DataLoader stand-in and the first-batch type check."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from feedline import fn
from feedline.plugins.structured import (
    DALIStructuredOutputIterator,
    PaddingToUniform,
    PipelineDefinition,
    PipelineStepBase,
    SampleDataGroup,
    ShuffledShardedInputCallable,
    StructuredOutputIterator,
)
from feedline.plugins.structured.definition import definition_of
from tests.plugins.structured.helpers import BatchIterable, CountingProvider

torch = pytest.importorskip("torch", reason="the structured iterator hands out torch tensors")

BATCH = 4


def loader(source: Any, steps: list | None = None, parallel: bool = False, **kwargs: Any):
    definition = PipelineDefinition(
        source, steps or [PaddingToUniform("cls", -1)], use_parallel_external_source=parallel
    )
    pipe = definition.get_dali_pipeline(
        batch_size=BATCH, num_threads=1, device_id=None, seed=3, **kwargs
    )
    return StructuredOutputIterator(None, pipe, definition.check_and_get_output_data_structure())


def indices(it: StructuredOutputIterator) -> list[int]:
    return [int(i) for batch in it for i in batch["index"]]


def test_batches_are_nested_dicts_of_torch_tensors_with_strings_decoded() -> None:
    source = ShuffledShardedInputCallable(CountingProvider(10), BATCH)
    it = loader(source)
    assert len(it) == 2 and source.length == 2
    batches = list(it)
    assert len(batches) == 2
    first = batches[0]
    assert set(first) == {"index", "name", "cls"}
    assert isinstance(first["index"], torch.Tensor) and first["index"].dtype == torch.int64
    assert first["index"].tolist() == [0, 1, 2, 3]
    assert first["name"] == ["s0", "s1", "s2", "s3"]
    assert first["cls"].dtype == torch.int32
    assert first["cls"].tolist() == [[1, -1, -1], [1, 2, -1], [1, 2, 0], [1, -1, -1]]
    assert indices(it) == list(range(8))


def test_shuffled_epochs_differ_and_cover_the_shard() -> None:
    source = ShuffledShardedInputCallable(CountingProvider(12), BATCH, shuffle=True, seed=7)
    it = loader(source)
    first, second = indices(it), indices(it)
    assert sorted(first) == sorted(second) == list(range(12))
    assert first != second
    assert first == source.shard_indices(0).tolist()
    assert second == source.shard_indices(1).tolist()


def test_shards_partition_the_data_with_one_global_order() -> None:
    shards = [
        ShuffledShardedInputCallable(CountingProvider(19), 3, k, 3, shuffle=True, seed=1)
        for k in range(3)
    ]
    for epoch in range(3):
        orders = [s.epoch_order(epoch).tolist() for s in shards]
        assert orders[0] == orders[1] == orders[2]
        taken = [set(s.shard_indices(epoch).tolist()) for s in shards]
        assert all(len(t) == 6 for t in taken)
        assert not (taken[0] & taken[1] or taken[1] & taken[2] or taken[0] & taken[2])
    assert shards[0].length == 2
    assert shards[0].epoch_order(0).tolist() != shards[0].epoch_order(1).tolist()
    unshuffled = ShuffledShardedInputCallable(CountingProvider(10), 2, 1, 2)
    assert unshuffled.shard_indices(4).tolist() == [5, 6, 7, 8]
    assert unshuffled.used_sample_data_structure._apply_mapping is False


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": 2, "num_shards": 0}, "num_shards"),
        ({"batch_size": 2, "shard_id": 2, "num_shards": 2}, "not below num_shards"),
        ({"batch_size": 2, "seed": -1}, "seed"),
    ],
)
def test_shuffled_callable_validates_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ShuffledShardedInputCallable(CountingProvider(4), **kwargs)


def test_shuffled_callable_needs_a_provider() -> None:
    with pytest.raises(TypeError, match="DataProvider"):
        ShuffledShardedInputCallable([1, 2], 2)


def test_parallel_loading_gives_the_same_batches() -> None:
    serial = indices(loader(ShuffledShardedInputCallable(CountingProvider(8), BATCH, shuffle=True)))
    parallel_it = loader(
        ShuffledShardedInputCallable(CountingProvider(8), BATCH, shuffle=True),
        parallel=True,
        py_num_workers=2,
    )
    assert indices(parallel_it) == serial
    assert indices(parallel_it) != serial  # the next epoch has another order


def test_iterable_input_restarts_every_epoch() -> None:
    source = BatchIterable(BATCH, 2)
    it = loader(source)
    assert len(it) == 2
    assert indices(it) == list(range(8))
    assert indices(it) == list(range(8))
    assert source.restarts >= 2


def test_sample_data_group_output_and_post_processing() -> None:
    source = ShuffledShardedInputCallable(CountingProvider(8), BATCH)
    definition = PipelineDefinition(
        source, [PaddingToUniform("cls")], use_parallel_external_source=False
    )
    blueprint = definition.check_and_get_output_data_structure()
    pipe = definition.get_dali_pipeline(BATCH, 1, None, 3)
    seen: list[Any] = []

    def post(batch: SampleDataGroup) -> str:
        seen.append(batch)
        return "done"

    it = DALIStructuredOutputIterator(
        5,
        pipe,
        blueprint,
        convert_sample_data_group_to_dict=False,
        post_process_func=post,
        contained_dataset="data set",
    )
    assert next(iter(it)) == "done"
    batch = seen[0]
    assert isinstance(batch, SampleDataGroup) and batch.type_matches(blueprint)
    assert batch["name"] == ["s0", "s1", "s2", "s3"]
    assert len(it) == 5 and it.dataset == "data set" and it.batch_size == BATCH
    assert it.sample_data_structure_blueprint.type_matches(blueprint)
    assert it.sample_data_structure_blueprint is not it.sample_data_structure_blueprint
    assert it.internal_iterator.__class__.__name__ == "GenericIterator"
    simple = iter(it)
    assert isinstance(simple, DALIStructuredOutputIterator.SimpleIterator)
    assert iter(simple) is simple and len(simple) == 5
    simple.reset()


def test_iterator_arguments_are_validated() -> None:
    source = ShuffledShardedInputCallable(CountingProvider(8), BATCH)
    definition = PipelineDefinition(source, use_parallel_external_source=False)
    pipe = definition.get_dali_pipeline(batch_size=BATCH, num_threads=1, device_id=None)
    blueprint = definition.check_and_get_output_data_structure()
    with pytest.raises(ValueError, match="num_batches_in_epoch"):
        StructuredOutputIterator(-1, pipe, blueprint)
    with pytest.raises(TypeError, match="SampleDataGroup"):
        StructuredOutputIterator(1, pipe, {"a": 1})
    with pytest.raises(TypeError, match="post_process_func"):
        StructuredOutputIterator(1, pipe, blueprint, post_process_func=3)
    assert definition_of(pipe) is definition


def test_len_without_a_known_length() -> None:
    source = BatchIterable(BATCH, 1)
    source.__class__ = type("NoLength", (BatchIterable,), {"length": property(lambda s: None)})
    it = loader(source)
    with pytest.raises(TypeError, match="num_batches_in_epoch"):
        len(it)


def test_data_loader_stand_in() -> None:
    from torch.utils.data import DataLoader

    source = ShuffledShardedInputCallable(CountingProvider(8), BATCH)
    definition = PipelineDefinition(
        source, [PaddingToUniform("cls")], use_parallel_external_source=False
    )
    pipe = definition.get_dali_pipeline(batch_size=BATCH, num_threads=1, device_id=None)
    it = StructuredOutputIterator.CreateAsDataLoaderObject(
        None, pipe, definition.check_and_get_output_data_structure()
    )
    assert isinstance(it, DataLoader) and isinstance(it, StructuredOutputIterator)
    assert len(it) == 2 and it.dataset is it
    assert [b["name"][0] for b in it] == ["s0", "s4"]
    with pytest.raises(AttributeError, match="'sampler' is a DataLoader attribute"):
        _ = it.sampler
    assert not hasattr(it, "num_workers")
    again = StructuredOutputIterator.CreateAsDataLoaderObject(
        None,
        definition.get_dali_pipeline(batch_size=BATCH, num_threads=1, device_id=None),
        definition.check_and_get_output_data_structure(),
    )
    assert type(again) is type(it)


class Untyped(PipelineStepBase):
    """Writes ``index`` through a python_function that returns float64: unknown until run."""

    def _check_and_adjust_data_format_input_to_output(self, data_empty):
        return data_empty

    def _process(self, data):
        data["index"] = fn.python_function(data["index"], function=lambda x: x.astype(np.float64))
        return data


def test_types_unknown_at_build_are_checked_on_the_first_batch() -> None:
    source = ShuffledShardedInputCallable(CountingProvider(8), BATCH)
    it = loader(source, [Untyped(), PaddingToUniform("cls")])
    with pytest.raises(
        TypeError, match="field 'index' has type float64, but the blueprint declares int64"
    ):
        next(it)


def test_enable_conditionals_is_accepted_as_ported_pipelines_pass_it() -> None:
    definition = PipelineDefinition(
        ShuffledShardedInputCallable(CountingProvider(8), BATCH),
        use_parallel_external_source=False,
    )
    pipe = definition.get_dali_pipeline(batch_size=2, num_threads=1, enable_conditionals=True)
    pipe.build()
    assert [int(np.asarray(x).ravel()[0]) for x in pipe.run()[0]] == [0, 1]
    with pytest.raises(TypeError, match="given twice"):
        definition.get_dali_pipeline(2, batch_size=2)
    assert definition.get_pipeline == definition.get_dali_pipeline


def test_definition_validates_its_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    source = ShuffledShardedInputCallable(CountingProvider(8), BATCH)
    with pytest.raises(TypeError, match="CallableBase or an IterableBase"):
        PipelineDefinition(lambda info: ())
    with pytest.raises(TypeError, match=r"preprocess_functors\[1\]"):
        PipelineDefinition(source, [None, "step"])
    with pytest.raises(ValueError, match="prefetch_queue_depth"):
        PipelineDefinition(source, prefetch_queue_depth=0)
    printing = PipelineDefinition(
        source,
        [PaddingToUniform("cls")],
        use_parallel_external_source=False,
        print_sample_data_group_format=True,
    )
    printing.get_dali_pipeline(batch_size=2, num_threads=1, device_id=None)
    printed = capsys.readouterr().out
    assert "input format:" in printed and "format after PaddingToUniform" in printed
    assert "cls: DALIDataType.INT32" in printed


def test_registers_the_structured_iterator(empty_plugin_system: Any) -> None:
    from feedline.core.registry import load_object
    from feedline.plugins.structured import plugin

    empty_plugin_system.register(plugin, "structured")
    iterators = empty_plugin_system.ensure_loaded().iterators
    assert load_object(iterators["structured"][0]) is StructuredOutputIterator


def test_importing_the_plugin_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys, feedline.plugins.structured, feedline.plugins.structured.plugin; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_iterable_input_in_a_worker_with_every_leaf_padded() -> None:
    it = loader(BatchIterable(BATCH, 2), [PaddingToUniform(fill_value=-1)], parallel=True)
    for _ in range(2):
        batches = list(it)
        assert [b["index"].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7]]
        assert batches[1]["name"] == ["s4", "s5", "s6", "s7"]
        assert batches[1]["cls"].tolist() == [[1, 2, -1], [1, 2, 0], [1, -1, -1], [1, 2, -1]]
