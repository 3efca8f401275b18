"""The PyTorch iterators: DALI's API, DALI's tables, zero-copy DLPack hand-over, ragged
outputs and registration."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from feedline.core.plugins import PluginSystem
from feedline.core.registry import load_object
from feedline.core.tensor import TensorListCPU
from feedline.core.types import DataType
from feedline.plugins import iterator as base
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

torch = pytest.importorskip("torch", reason="the PyTorch iterators need torch")

from feedline.plugins import pytorch as pt  # noqa: E402
from feedline.plugins.pytorch import (  # noqa: E402
    ClassificationIterator,
    GenericIterator,
    LastBatchPolicy,
    RaggedIterator,
)


@pytest.fixture
def real(empty_plugin_system: PluginSystem, tmp_path: Path) -> Iterator[RealPipelines]:
    with RealPipelines(empty_plugin_system, tmp_path) as make:
        yield make


def epochs_of(it: GenericIterator, count: int, name: str = "data") -> list:
    return [[batch_values(b, name) for b in it] for _ in range(count)]


# ------------------------------------------------------------------------- DALI's epoch tables


@pytest.mark.parametrize("real_pipes", [False, True], ids=["fake", "real"])
@pytest.mark.parametrize(("policy", "pad"), list(ONE_PIPELINE))
def test_one_pipeline_table(real: RealPipelines, policy: str, pad: bool, real_pipes: bool) -> None:
    first_len, epochs = ONE_PIPELINE[(policy, pad)]
    pipes = real.readers(N, BATCH, pad=pad) if real_pipes else [FakePipeline.reader(N, 2, pad=pad)]
    it = GenericIterator(
        pipes, ["data"], reader_name="Reader", last_batch_policy=LastBatchPolicy[policy]
    )
    assert len(it) == first_len
    assert epochs_of(it, len(epochs)) == [parse_epoch(e) for e in epochs]


@pytest.mark.parametrize("real_pipes", [False, True], ids=["fake", "real"])
@pytest.mark.parametrize(("policy", "pad"), list(TWO_PIPELINES))
def test_two_pipelines_table(real: RealPipelines, policy: str, pad: bool, real_pipes: bool) -> None:
    epochs = TWO_PIPELINES[(policy, pad)]
    if real_pipes:
        pipes = real.readers(N, BATCH, shards=2, pipes=2, pad=pad)
    else:
        pipes = [FakePipeline.reader(N, BATCH, 2, k, pad) for k in range(2)]
    it = GenericIterator(
        pipes, ["data"], reader_name="Reader", last_batch_policy=LastBatchPolicy[policy]
    )
    assert epochs_of(it, len(epochs)) == [parse_epoch(e) for e in epochs]


@pytest.mark.parametrize(("policy", "pad"), list(ONE_PIPELINE))
def test_legacy_size_mode_on_real_pipelines(real: RealPipelines, policy: str, pad: bool) -> None:
    _, epochs = ONE_PIPELINE[(policy, pad)]
    with pytest.warns(UserWarning, match="legacy"):
        it = GenericIterator(
            real.readers(N, BATCH, pad=pad),
            ["data"],
            size=N,
            last_batch_padded=pad,
            last_batch_policy=LastBatchPolicy[policy],
        )
    assert epochs_of(it, len(epochs)) == [parse_epoch(e) for e in epochs]


def test_external_source_epochs_in_a_for_loop(real: RealPipelines) -> None:
    it = GenericIterator(real.source(2, shape=(3,)), ["x"])
    for _ in range(3):
        batches = list(it)
        assert [b[0]["x"][:, 0].tolist() for b in batches] == [[0.0, 1.0], [10.0, 11.0]]


# ------------------------------------------------------------------------- output format


def test_output_is_one_dict_of_tensors_per_pipeline(real: RealPipelines) -> None:
    it = GenericIterator(real.readers(N, BATCH, shards=2, pipes=2), ["label"], reader_name="Reader")
    batch = next(it)
    assert isinstance(batch, list) and len(batch) == 2
    for per_pipe in batch:
        assert list(per_pipe) == ["label"]
        label = per_pipe["label"]
        assert isinstance(label, torch.Tensor)
        assert label.dtype == torch.int32
        assert label.shape == (BATCH, 1)
        assert label.device == torch.device("cpu")


@pytest.mark.parametrize(
    "dtype", [np.uint8, np.uint16, np.int64, np.float16, np.float32, np.float64, np.bool_]
)
def test_dtypes_map_to_torch(dtype: type) -> None:
    data = TensorListCPU(np.ones((2, 3), dtype=dtype))
    (batch,) = next(GenericIterator(OneBatch(data), ["x"]))
    assert batch["x"].numpy().dtype == np.dtype(dtype)
    assert batch["x"].shape == (2, 3)


def test_tensors_share_the_pipeline_buffer() -> None:
    pipe = FakePipeline.reader(N, BATCH, num_outputs=2)
    it = GenericIterator([pipe], ["a", "b"], reader_name="Reader")
    (batch,) = next(it)
    tl_a, _ = pipe.last_shared
    assert batch["a"].data_ptr() == tl_a.as_array().ctypes.data
    batch["a"][0, 0] = 42
    assert tl_a.as_array()[0, 0] == 42


def test_earlier_batches_stay_valid_while_iterating() -> None:
    it = GenericIterator([FakePipeline.reader(N, BATCH)], ["data"], reader_name="Reader")
    kept = [next(it) for _ in range(3)]
    next(it)
    assert [batch_values(b) for b in kept] == parse_epoch("12 34 56")


def test_classification_iterator_names_data_and_label() -> None:
    it = ClassificationIterator(FakePipeline.reader(N, BATCH, num_outputs=2), reader_name="Reader")
    assert it.output_map == ["data", "label"]
    assert list(next(it)[0]) == ["data", "label"]


def test_dali_names_are_aliases() -> None:
    assert pt.DALIGenericIterator is GenericIterator
    assert pt.DALIClassificationIterator is ClassificationIterator
    assert pt.DALIRaggedIterator is RaggedIterator
    assert pt.LastBatchPolicy is base.LastBatchPolicy


def test_dynamic_shape_is_accepted_and_shapes_may_change() -> None:
    sizes = iter([1, 3])

    def sample(_: int) -> np.ndarray:
        return np.zeros(next(sizes), np.float32)

    pipe = FakePipeline(lambda: iter([[0], [1]]), 1, make_sample=sample)
    it = GenericIterator(pipe, ["x"], dynamic_shape=True)
    assert [b[0]["x"].shape for b in it] == [(1, 1), (1, 3)]


def test_ragged_output_suggests_the_ragged_iterator() -> None:
    boxes = TensorListCPU.from_samples([np.zeros((3, 4)), np.zeros((1, 4))])
    with pytest.raises(RuntimeError, match=r"'boxes' of pipeline 0 is ragged.*RaggedIterator"):
        GenericIterator(OneBatch(boxes), ["boxes"])


class Unshareable:
    """A dense batch whose tensor refuses DLPack (as a foreign device buffer might)."""

    dtype = DataType.FLOAT

    def __len__(self) -> int:
        return 2

    def is_dense_tensor(self) -> bool:
        return True

    def as_tensor(self) -> Unshareable:
        return self

    def __dlpack__(self, **_: Any) -> Any:
        raise BufferError("no DLPack for this buffer")

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def test_dlpack_failure_names_the_output() -> None:
    with pytest.raises(TypeError, match=r"output 'weird' of pipeline 0 .*no DLPack"):
        GenericIterator(OneBatch(Unshareable()), ["weird"])


# ------------------------------------------------------------------------- ragged iterator


def ragged_reader(n: int = 5, bs: int = 2) -> FakePipeline:
    """Samples ``i`` of shape ``(i % 3 + 1, 2)`` filled with ``i + 1``."""

    def sample(i: int) -> np.ndarray:
        return np.full((i % 3 + 1, 2), i + 1, dtype=np.float32)

    return FakePipeline.reader(n, bs, make_sample=sample)


def ragged_iterator(tag: str, policy: LastBatchPolicy = LastBatchPolicy.FILL) -> RaggedIterator:
    return RaggedIterator(
        ragged_reader(),
        ["boxes"],
        reader_name="Reader",
        output_types=[tag],
        last_batch_policy=policy,
    )


def test_sparse_list_gives_zero_copy_per_sample_tensors() -> None:
    it = ragged_iterator(RaggedIterator.SPARSE_LIST_TAG)
    (batch,) = next(it)
    assert [t.shape for t in batch["boxes"]] == [(1, 2), (2, 2)]
    assert [float(t[0, 0]) for t in batch["boxes"]] == [1.0, 2.0]


def test_sparse_coo_holds_the_samples_padded_with_zeros() -> None:
    (batch,) = next(ragged_iterator(RaggedIterator.SPARSE_COO_TAG))
    coo = batch["boxes"]
    assert coo.is_sparse and coo.shape == (2, 2, 2)
    expected = np.zeros((2, 2, 2), np.float32)
    expected[0, :1] = 1
    expected[1, :2] = 2
    np.testing.assert_array_equal(coo.to_dense().numpy(), expected)


@pytest.mark.parametrize("tag", [RaggedIterator.SPARSE_LIST_TAG, RaggedIterator.SPARSE_COO_TAG])
def test_partial_trims_every_ragged_kind(tag: str) -> None:
    it = ragged_iterator(tag, LastBatchPolicy.PARTIAL)
    last = list(it)[-1][0]["boxes"]
    if tag == RaggedIterator.SPARSE_COO_TAG:
        assert last.shape[0] == 1 and last.to_dense()[0, 0, 0] == 5
    else:
        assert [float(t[0, 0]) for t in last] == [5.0]


@pytest.mark.parametrize("tag", [RaggedIterator.SPARSE_LIST_TAG, RaggedIterator.SPARSE_COO_TAG])
def test_partial_can_cut_a_pipeline_batch_to_nothing(tag: str) -> None:
    # N=5 in shards of 2 and 3: the second batch holds no sample of shard 0.
    def sample(i: int) -> np.ndarray:
        return np.full((i % 3 + 1, 2), i + 1, dtype=np.float32)

    pipes = [FakePipeline.reader(5, 2, 2, k, make_sample=sample) for k in range(2)]
    it = RaggedIterator(
        pipes,
        ["boxes"],
        reader_name="Reader",
        output_types=[tag],
        last_batch_policy=LastBatchPolicy.PARTIAL,
    )
    last = list(it)[-1]
    assert len(last[0]["boxes"]) == 0
    assert len(last[1]["boxes"]) == 1


def test_ragged_tag_that_cannot_hold_the_samples_is_explained() -> None:
    # Ragged in both dimensions: the COO values cannot be concatenated.
    images = TensorListCPU.from_samples([np.zeros((3, 4)), np.zeros((2, 5))])
    with pytest.raises(RuntimeError, match=r"'s' of pipeline 0 .*'sparse_coo'.*'sparse_list'"):
        RaggedIterator(OneBatch(images), ["s"], output_types=["sparse_coo"])


def test_ragged_iterator_without_tags_is_dense() -> None:
    with pytest.raises(RuntimeError, match="output_types"):
        RaggedIterator(ragged_reader(), ["boxes"], reader_name="Reader")


# ------------------------------------------------------------------------- plugin


def test_registers_the_pytorch_iterators(empty_plugin_system: PluginSystem) -> None:
    empty_plugin_system.register(pt, "pytorch")
    iterators = empty_plugin_system.ensure_loaded().iterators
    assert load_object(iterators["pytorch"][0]) is GenericIterator
    assert load_object(iterators["pytorch.ragged"][0]) is RaggedIterator


def test_importing_feedline_or_the_plugin_does_not_import_torch() -> None:
    code = (
        "import sys, feedline, feedline.plugins.pytorch, feedline.plugins.jax\n"
        "print('torch' in sys.modules, 'jax' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_missing_torch_is_reported_when_an_iterator_is_created() -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from feedline.plugins.pytorch import GenericIterator\n"
        "try:\n"
        "    GenericIterator(None, ['x'])\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'feedline[torch]'" in out.stdout


# ------------------------------------------------------------------------- feed_ndarray


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float16, np.float64, np.bool_])
def test_feed_ndarray_copies_tensors_and_dense_batches(dtype: type) -> None:
    values = (np.arange(12).reshape(2, 2, 3) % 2).astype(dtype)
    batch = TensorListCPU(values)
    for source, expected in [(batch, values), (batch[1], values[1])]:
        target = torch.zeros(expected.shape, dtype=torch.from_numpy(expected).dtype)
        assert pt.feed_ndarray(source, target) is target
        np.testing.assert_array_equal(target.numpy(), expected)


def test_feed_ndarray_refuses_another_dtype_or_shape() -> None:
    batch = TensorListCPU(np.ones((2, 3), np.float32))
    with pytest.raises(AssertionError, match="element type .* doesn't match .* PyTorch Tensor"):
        pt.feed_ndarray(batch, torch.empty((2, 3), dtype=torch.float64))
    with pytest.raises(pt.FeedError, match=r"Shapes do not match.*\[2, 3\].*\[3, 2\]"):
        pt.feed_ndarray(batch, torch.empty((3, 2), dtype=torch.float32))
