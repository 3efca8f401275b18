"""The JAX iterator: DALI's epoch semantics, ``{name: jax.Array}`` batches, sharding over
devices. Most tests need JAX and skip without it; plugin registration and the missing-JAX error
are checked everywhere."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import feedline.plugins.jax as jax_plugin
from feedline.core.plugins import PluginSystem
from feedline.plugins.iterator import IteratorError, LastBatchPolicy
from tests.plugins.fake_pipeline import FakePipeline
from tests.plugins.spec_tables import BATCH, ONE_PIPELINE, TWO_PIPELINES, N, parse_epoch

needs_jax = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None, reason="JAX is not installed"
)


def test_registers_the_jax_iterator(empty_plugin_system: PluginSystem) -> None:
    empty_plugin_system.register(jax_plugin, "jax")
    iterators = empty_plugin_system.ensure_loaded().iterators
    assert iterators["jax"][0] == "feedline.plugins.jax:GenericIterator"


def test_missing_jax_is_reported_when_an_iterator_is_created() -> None:
    code = (
        "import sys; sys.modules['jax'] = None\n"
        "from feedline.plugins.jax import GenericIterator\n"
        "try:\n"
        "    GenericIterator(None, ['x'])\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'feedline[jax]'" in out.stdout


def values(array: object) -> list[int]:
    flat = np.asarray(array)
    return [int(x) for x in flat.reshape(flat.shape[0], -1)[:, 0]]


@needs_jax
@pytest.mark.parametrize(("policy", "pad"), [k for k in ONE_PIPELINE if k[0] != "PARTIAL"])
def test_one_pipeline_table(policy: str, pad: bool) -> None:
    import jax

    _, epochs = ONE_PIPELINE[(policy, pad)]
    it = jax_plugin.GenericIterator(
        FakePipeline.reader(N, BATCH, pad=pad),
        ["data"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy[policy],
    )
    got = []
    for _ in epochs:
        batches = list(it)
        assert all(isinstance(b["data"], jax.Array) for b in batches)
        got.append([[values(b["data"])] for b in batches])
    assert got == [parse_epoch(e) for e in epochs]


@needs_jax
@pytest.mark.parametrize(("policy", "pad"), [k for k in TWO_PIPELINES if k[0] != "PARTIAL"])
def test_two_pipelines_give_one_array_with_a_pipeline_axis(policy: str, pad: bool) -> None:
    epochs = TWO_PIPELINES[(policy, pad)]
    it = jax_plugin.GenericIterator(
        [FakePipeline.reader(N, BATCH, 2, k, pad) for k in range(2)],
        ["data"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy[policy],
    )
    got = []
    for _ in epochs:
        epoch = []
        for batch in it:
            array = np.asarray(batch["data"])
            assert array.shape == (2, BATCH, 1)
            epoch.append([values(array[k]) for k in range(2)])
        got.append(epoch)
    assert got == [parse_epoch(e) for e in epochs]


@needs_jax
def test_sharding_lays_the_pipelines_out_along_the_batch() -> None:
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = jax.local_devices()[:1]
    sharding = NamedSharding(Mesh(np.array(devices), ("batch",)), PartitionSpec("batch"))
    it = jax_plugin.GenericIterator(
        FakePipeline.reader(N, BATCH), ["data"], reader_name="Reader", sharding=sharding
    )
    array = next(it)["data"]
    assert array.sharding == sharding
    assert values(array) == [1, 2]


@needs_jax
def test_pmap_compatible_gives_one_pipeline_a_pipeline_axis() -> None:
    it = jax_plugin.GenericIterator(
        FakePipeline.reader(N, BATCH), ["data"], reader_name="Reader", pmap_compatible=True
    )
    assert np.asarray(next(it)["data"]).shape == (1, BATCH, 1)


@needs_jax
def test_partial_and_bad_sharding_are_rejected() -> None:
    with pytest.raises(IteratorError, match="PARTIAL"):
        jax_plugin.GenericIterator(
            FakePipeline.reader(N, BATCH),
            ["data"],
            reader_name="Reader",
            last_batch_policy=LastBatchPolicy.PARTIAL,
        )
    with pytest.raises(TypeError, match="jax.sharding.Sharding"):
        jax_plugin.GenericIterator(
            FakePipeline.reader(N, BATCH), ["data"], reader_name="Reader", sharding="batch"
        )
