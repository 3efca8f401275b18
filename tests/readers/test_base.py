"""Tests of the Reader base class: common arguments, loader thread, errors, meta, checkpoints."""

from __future__ import annotations

import gc
import json
import mmap
import threading
import time
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from feedline import fn, pipeline_def
from feedline.core.errors import OperatorError
from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import Batch, KernelContext
from feedline.core.pipeline import Pipeline
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.core.schema import ArgSpec
from feedline.readers.base import READER_ARGS, Reader, read_bytes, reader_schema
from feedline.readers.sampler import Sampler, SamplerConfig

LOADS: list[tuple[int, str]] = []


class RangeReader(Reader):
    """Sample i is ``[i]``; item ``fail_at`` raises; every load is logged with its thread."""

    parallel_load = True

    def index(self) -> Sequence[int]:
        if self.args["fail_index"]:
            raise FileNotFoundError("index of /nonexistent/data failed")
        return range(self.args["n"])

    def load(self, item: int) -> tuple[np.ndarray, ...]:
        LOADS.append((item, threading.current_thread().name))
        if item == self.args["fail_at"]:
            raise ValueError(f"cannot decode item {item}")
        if self.args["bad_arity"]:
            return (np.array([item]), np.array([item]))
        return (np.array([item], dtype=np.int64),)

    def source_info(self, item: int) -> str:
        return f"item-{item}"


RANGE_SCHEMA = reader_schema(
    "testing.range",
    "Integers 0..n-1.",
    (
        ArgSpec("n", "int", 10, "Number of samples."),
        ArgSpec("fail_at", "int", -1, "Item whose load fails."),
        ArgSpec("fail_index", "bool", False, "Make index() fail."),
        ArgSpec("bad_arity", "bool", False, "Return two outputs instead of one."),
    ),
    outputs=("data",),
)


class RangePlugin:
    @staticmethod
    @hookimpl
    def feedline_register_operators(registry: Any) -> None:
        registry.add_operator(RANGE_SCHEMA, kernels={"cpu": RangeReader})


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    LOADS.clear()
    system = PluginSystem(autoload=False)
    system.register(RangePlugin, "testing-range")
    with use_plugin_system(system):
        yield


def make_pipe(bs: int = 2, threads: int = 1, seed: int | None = None, **kwargs: Any) -> Pipeline:
    """A pipeline of one testing.range reader named "R" (``seed`` is the reader's op seed)."""

    @pipeline_def(batch_size=bs, num_threads=threads, device_id=None, seed=7)
    def pipe() -> Any:
        return fn.testing.range(name="R", seed=seed, **kwargs)

    return pipe()


def values(tl: Any) -> list[int]:
    return [int(np.asarray(tl[i])[0]) for i in range(len(tl))]


def stream(pipe: Pipeline, batches: int) -> list[list[int]]:
    pipe.build()
    return [values(pipe.run()[0]) for _ in range(batches)]


def test_outputs_source_info_and_meta() -> None:
    pipe = make_pipe(bs=4, num_shards=3, shard_id=1, pad_last_batch=True)
    pipe.build()
    (data,) = pipe.run()
    assert values(data) == [3, 4, 5, 5]
    assert [data[i].source_info() for i in range(4)] == ["item-3", "item-4", "item-5", "item-5"]
    assert data.dtype == np.int64 or data.dtype.name == "INT64"
    meta = pipe.reader_meta("R")
    assert meta == {
        "epoch_size": 10,
        "epoch_size_padded": 12,
        "number_of_shards": 3,
        "shard_id": 1,
        "pad_last_batch": 1,
        "stick_to_shard": 0,
    }
    assert all(type(v) is int for v in meta.values())
    assert pipe.epoch_size("R") == 12
    pipe.close()


def test_shuffle_after_epoch_reports_stick_to_shard() -> None:
    pipe = make_pipe(shuffle_after_epoch=True)
    pipe.build()
    assert pipe.reader_meta("R")["stick_to_shard"] == 1
    pipe.close()


def test_stream_matches_sampler_for_every_queue_depth_and_thread_count() -> None:
    kwargs = {"n": 13, "num_shards": 3, "shard_id": 2, "random_shuffle": True, "initial_fill": 5,
              "pad_last_batch": True}  # fmt: skip
    config = SamplerConfig(
        num_samples=13,
        batch_size=3,
        num_shards=3,
        shard_id=2,
        random_shuffle=True,
        initial_fill=5,
        pad_last_batch=True,
        seed=99,
    )
    sampler = Sampler(config)
    want = [sampler.next_batch().indices for _ in range(12)]
    for depth in (1, 3):
        for threads in (1, 3):
            # An explicit op seed makes the sampler above an oracle for the order.
            LOADS.clear()
            pipe = make_pipe(bs=3, threads=threads, seed=99, prefetch_queue_depth=depth, **kwargs)
            assert stream(pipe, 12) == want
            pipe.close()
            helpers = {name for _, name in LOADS} - {"feedline-R"}
            assert bool(helpers) == (threads > 1)  # parallel_load spreads a batch over threads


def test_pipeline_seed_drives_shuffle_buffer() -> None:
    def run(seed: int) -> list[list[int]]:
        @pipeline_def(batch_size=5, num_threads=1, device_id=None, seed=seed)
        def pipe_fn() -> Any:
            return fn.testing.range(name="R", random_shuffle=True, initial_fill=4)

        pipe = pipe_fn()
        out = stream(pipe, 6)
        pipe.close()
        return out

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_batches_are_prepared_ahead_on_the_reader_thread() -> None:
    reader = RangeReader(kernel_context(batch_size=2, prefetch_queue_depth=3))
    reader.setup()
    assert LOADS == []
    first = reader.run(batch(0))
    assert values(first[0]) == [0, 1]
    deadline = time.monotonic() + 5
    while len(LOADS) < 2 * (1 + 3) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    # 1 delivered + 3 queued + at most 1 being prepared
    assert 2 * 4 <= len(LOADS) <= 2 * 5
    assert {name for _, name in LOADS} == {"feedline-R"}
    reader.close()


def kernel_context(batch_size: int = 2, threads: int = 1, seed: int = 5, **kwargs: Any) -> Any:
    static, _ = RANGE_SCHEMA.validate(kwargs)
    return KernelContext(
        "R", RANGE_SCHEMA, static, frozenset(), "cpu", batch_size, threads, seed, None
    )


def batch(iteration: int) -> Batch:
    return Batch([], {}, iteration, 0, 0, lambda f, n: [f(i) for i in range(n)])


def _settled(count: int) -> None:
    """Wait until the loader thread has made ``count`` loads and then made no more."""
    deadline = time.monotonic() + 5
    while len(LOADS) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)


def test_a_waited_for_batch_loads_on_every_thread() -> None:
    reader = RangeReader(kernel_context(batch_size=8, threads=2, n=100, prefetch_queue_depth=1))
    reader.setup()
    assert values(reader.run(batch(0))[0]) == list(range(8))
    reader.close()
    first = {name for item, name in LOADS if item < 8}
    assert len(first) == 2 and "feedline-R" in first  # nothing was ready: both threads load


def test_while_the_loader_keeps_ahead_it_loads_alone() -> None:
    reader = RangeReader(kernel_context(batch_size=8, threads=2, n=100, prefetch_queue_depth=1))
    reader.setup()
    reader.run(batch(0))
    _settled(3 * 8)  # batch 1 waits in the queue, batch 2 for room in it
    LOADS.clear()
    assert values(reader.run(batch(1))[0]) == list(range(8, 16))
    _settled(8)  # batch 3, prepared after a get() that found a batch ready
    reader.close()
    assert sorted(item for item, _ in LOADS) == list(range(24, 32))
    assert {name for _, name in LOADS} == {"feedline-R"}


def test_load_error_names_operator_sample_and_source_and_repeats_on_retry() -> None:
    reader = RangeReader(kernel_context(batch_size=4, fail_at=6, prefetch_queue_depth=2))
    reader.setup()
    assert values(reader.run(batch(0))[0]) == [0, 1, 2, 3]
    for attempt in range(2):
        with pytest.raises(OperatorError) as info:
            reader.run(batch(1 + attempt))
        message = str(info.value)
        assert "operator 'R'" in message and f"iteration {1 + attempt}" in message
        assert "sample 2" in message and "(item-6)" in message
        assert "ValueError: cannot decode item 6" in message
        assert info.value.source_info == "item-6"
    state = reader.state_dict()
    assert state["emitted"] == 4  # the failed batch was not consumed
    reader.close()


def test_load_error_reaches_pipeline_caller() -> None:
    pipe = make_pipe(bs=4, fail_at=5)
    pipe.build()
    assert values(pipe.run()[0]) == [0, 1, 2, 3]
    with pytest.raises(OperatorError, match=r"operator 'R'.*sample 1 \(item-5\).*cannot decode"):
        pipe.run()
    pipe.close()


def test_wrong_number_of_loaded_outputs() -> None:
    pipe = make_pipe(bad_arity=True)
    pipe.build()
    with pytest.raises(OperatorError, match=r"RangeReader\.load\(\) must return a tuple of 1"):
        pipe.run()
    pipe.close()


class BatchRangeReader(RangeReader):
    """RangeReader loading whole batches as one dense column; ``mode`` picks a misbehaviour."""

    mode = ""

    def load_batch(self, items: Sequence[int]) -> Sequence[np.ndarray]:
        if self.mode == "flaky" or self.args["fail_at"] in items:
            raise RuntimeError("the whole batch failed")
        column = np.array(items, dtype=np.int64).reshape(-1, 1)
        if self.mode == "short":
            return (column[1:],)
        return (column, column) if self.mode == "two" else (column,)


def test_load_batch_override_gives_the_same_stream_as_load() -> None:
    plain = RangeReader(kernel_context(batch_size=4, n=7))
    batched = BatchRangeReader(kernel_context(batch_size=4, n=7))
    for reader in (plain, batched):
        reader.setup()
    for iteration in range(4):
        want, got = plain.run(batch(iteration))[0], batched.run(batch(iteration))[0]
        assert values(got) == values(want)
        assert [got[i].source_info() for i in range(4)] == [want[i].source_info() for i in range(4)]
        assert got.as_array().shape == (4, 1) and got.dtype == want.dtype
    plain.close()
    batched.close()


def test_load_batch_failure_is_named_by_load() -> None:
    reader = BatchRangeReader(kernel_context(batch_size=4, fail_at=6))
    reader.setup()
    assert values(reader.run(batch(0))[0]) == [0, 1, 2, 3]
    with pytest.raises(OperatorError, match=r"sample 2 \(item-6\).*cannot decode item 6"):
        reader.run(batch(1))
    reader.close()


@pytest.mark.parametrize(
    ("mode", "match"),
    [
        ("flaky", r"iteration 0: RuntimeError: the whole batch failed"),
        ("two", r"BatchRangeReader\.load_batch\(\) must return 1 outputs of 4 samples each"),
        ("short", r"BatchRangeReader\.load_batch\(\) must return 1 outputs of 4 samples each"),
    ],
)
def test_load_batch_errors_without_a_failing_sample(
    mode: str, match: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(BatchRangeReader, "mode", mode)
    reader = BatchRangeReader(kernel_context(batch_size=4))
    reader.setup()
    with pytest.raises(OperatorError, match=match) as info:
        reader.run(batch(0))
    assert info.value.sample_index is None
    reader.close()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"shuffle_after_epoch": True, "random_shuffle": True}, "random_shuffle"),
        ({"shuffle_after_epoch": True, "stick_to_shard": True}, "stick_to_shard"),
        ({"num_shards": 3, "shard_id": 3}, "num_shards needs to be greater than shard_id"),
        ({"shard_id": -1}, "shard_id must not be negative"),
        ({"num_shards": 0}, "num_shards must be at least 1"),
        ({"initial_fill": 0}, "initial_fill must be at least 1"),
        ({"prefetch_queue_depth": 0}, "prefetch_queue_depth must be at least 1"),
        ({"tensor_init_bytes": -1}, "tensor_init_bytes must not be negative"),
        ({"bytes_per_sample_hint": [0, -4]}, "bytes_per_sample_hint must not be negative"),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_argument_conflicts_fail_at_build(kwargs: dict, match: str, lazy: bool) -> None:
    pipe = make_pipe(lazy_init=lazy, **kwargs)
    with pytest.raises(ValueError, match=match):
        pipe.build()


def test_too_many_shards_at_build_or_first_use_with_lazy_init() -> None:
    with pytest.raises(
        ValueError,
        match="input samples: 10, needs to be at least equal to the requested number of shards: 11",
    ):
        make_pipe(num_shards=11).build()
    pipe = make_pipe(num_shards=11, lazy_init=True)
    pipe.build()
    with pytest.raises(ValueError, match="number of shards"):
        pipe.reader_meta("R")
    pipe.close()


def test_lazy_init_defers_indexing_and_its_errors() -> None:
    with pytest.raises(FileNotFoundError, match="/nonexistent/data"):
        make_pipe(fail_index=True).build()
    pipe = make_pipe(fail_index=True, lazy_init=True)
    pipe.build()
    with pytest.raises(FileNotFoundError, match="/nonexistent/data"):
        pipe.reader_meta()
    pipe.close()
    pipe = make_pipe(fail_index=True, lazy_init=True)
    pipe.build()
    with pytest.raises(OperatorError, match="/nonexistent/data"):
        pipe.run()
    pipe.close()
    reader = RangeReader(kernel_context(lazy_init=True))
    calls: list[int] = []
    original = reader.index
    reader.index = lambda: calls.append(1) or original()  # type: ignore[method-assign]
    reader.setup()
    assert calls == []
    assert reader.reader_meta()["epoch_size"] == 10
    reader.run(batch(0))
    assert calls == [1]
    reader.close()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"random_shuffle": True, "initial_fill": 6, "num_shards": 3, "shard_id": 1},
        {"pad_last_batch": True, "num_shards": 4, "shard_id": 3},
        {"shuffle_after_epoch": True, "num_shards": 2},
        {"stick_to_shard": True, "num_shards": 3, "shard_id": 2, "prefetch_queue_depth": 3},
    ],
)
def test_checkpoint_resumes_mid_epoch(kwargs: dict) -> None:
    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=11, enable_checkpointing=True)
    def pipe_fn() -> Any:
        return fn.testing.range(name="R", n=17, **kwargs)

    original = pipe_fn()
    head = stream(original, 5)
    saved = json.loads(original.checkpoint())
    tail = stream(original, 9)
    original.close()
    assert len(head) == 5
    resumed = pipe_fn()
    resumed.build()
    resumed.load_state_dict(saved)
    assert stream(resumed, 9) == tail
    resumed.close()
    from_constructor = pipe_fn(checkpoint=json.dumps(saved))
    assert stream(from_constructor, 9) == tail
    assert from_constructor.state_dict()["iteration"] == saved["iteration"] + 9
    from_constructor.close()


def test_reader_state_round_trip_and_mismatch() -> None:
    reader = RangeReader(kernel_context(batch_size=3, random_shuffle=True, initial_fill=4))
    reader.setup()
    for i in range(3):
        reader.run(batch(i))
    state = json.loads(json.dumps(reader.state_dict()))
    expected = [values(reader.run(batch(3 + i))[0]) for i in range(4)]
    reader.load_state_dict(state)  # rewinds, discarding what the loader prepared
    assert [values(reader.run(batch(3 + i))[0]) for i in range(4)] == expected
    reader.close()
    other = RangeReader(kernel_context(batch_size=3, random_shuffle=True, initial_fill=4, n=11))
    other.setup()
    with pytest.raises(ValueError, match=r"num_samples=10.*num_samples=11"):
        other.load_state_dict(state)
    other.close()


def test_close_and_garbage_collection_end_the_loader_thread() -> None:
    def loader_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "feedline-R"]

    reader = RangeReader(kernel_context(prefetch_queue_depth=2))
    reader.setup()
    reader.run(batch(0))
    assert len(loader_threads()) == 1 and loader_threads()[0].daemon
    reader.close()
    assert loader_threads() == []
    dropped = RangeReader(kernel_context(prefetch_queue_depth=2))
    dropped.setup()
    dropped.run(batch(0))
    del dropped
    gc.collect()
    deadline = time.monotonic() + 5
    while loader_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert loader_threads() == []


def test_schema_documents_every_common_argument() -> None:
    names = [a.name for a in RANGE_SCHEMA.args]
    assert names[:4] == ["n", "fail_at", "fail_index", "bad_arity"]
    assert names[4:] == [a.name for a in READER_ARGS]
    assert {a.name for a in READER_ARGS} >= {
        "num_shards", "shard_id", "random_shuffle", "initial_fill", "shuffle_after_epoch",
        "shuffle_after_epoch_seed", "stick_to_shard", "pad_last_batch", "lazy_init",
        "prefetch_queue_depth", "read_ahead", "dont_use_mmap", "bytes_per_sample_hint",
        "tensor_init_bytes", "skip_cached_images",
    }  # fmt: skip
    assert all(a.doc for a in READER_ARGS)
    doc = RANGE_SCHEMA.docstring()
    assert "Sharding and epochs:" in doc and "epoch_size_padded = ceil(N/S)*S" in doc


def test_read_bytes(tmp_path: Path) -> None:
    payload = bytes(range(256)) * 5
    (tmp_path / "f.bin").write_bytes(payload)
    (tmp_path / "empty.bin").write_bytes(b"")
    for use_mmap in (True, False):
        for ahead in (True, False):
            data = read_bytes(str(tmp_path / "f.bin"), use_mmap=use_mmap, read_ahead=ahead)
            assert data.dtype == np.uint8 and data.shape == (len(payload),)
            assert data.tobytes() == payload
            assert data.flags.writeable is not use_mmap
            empty = read_bytes(str(tmp_path / "empty.bin"), use_mmap=use_mmap)
            assert empty.shape == (0,) and empty.dtype == np.uint8
    with pytest.raises(FileNotFoundError, match=r"cannot open '.*missing\.bin'"):
        read_bytes(str(tmp_path / "missing.bin"))
    with pytest.raises(IsADirectoryError, match=r"cannot read '.*': not a regular file"):
        read_bytes(str(tmp_path))


DOCS = Path(__file__).resolve().parents[2] / "docs" / "readers.md"


def test_custom_reader_example_from_docs(tmp_path: Path) -> None:
    text = DOCS.read_text()
    start = text.index("# my_team/readers.py")
    code = text[start : text.index("```", start)]
    plugin = types.ModuleType("my_team_readers")
    exec(compile(code, str(DOCS), "exec"), plugin.__dict__)
    lines = [json.dumps({"id": i, "x": [i, i + 0.5], "y": 10 * i}) for i in range(6)]
    (tmp_path / "train.jsonl").write_text("\n".join(lines) + "\n")
    system = PluginSystem(autoload=False)
    system.register(plugin, "my-readers")
    seen: list[int] = []
    with use_plugin_system(system):
        for rank in (0, 1):

            @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
            def pipe(rank: int) -> Any:
                x, y = fn.my_team.jsonl(path=str(tmp_path / "train.jsonl"), random_shuffle=True,
                                        num_shards=2, shard_id=rank, name="J")  # fmt: skip
                return x, y

            p = pipe(rank)
            p.build()
            assert p.reader_meta("J")["epoch_size"] == 6
            x, y = p.run()
            assert x.shape() == [(2,)] * 3 and y.dtype.name == "INT32"
            for i in range(3):
                ident = int(y.at(i)[0]) // 10
                assert x.at(i).tolist() == [ident, ident + 0.5]
                assert x[i].source_info().endswith(f"train.jsonl#{ident}")
                seen.append(ident)
            p.close()
    assert sorted(seen) == list(range(6))  # two shards, disjoint and complete


def test_readers_that_decode_files_read_small_ones_instead_of_mapping_them(
    tmp_path: Path,
) -> None:
    class DecodingRangeReader(RangeReader):
        decodes_files = True

    path = tmp_path / "small.bin"
    path.write_bytes(b"\x01" * 1000)
    for cls, mapped in ((RangeReader, True), (DecodingRangeReader, False)):
        reader = cls(kernel_context())
        data = reader.read_bytes(str(path))
        base = data.base
        while isinstance(base, np.ndarray):
            base = base.base
        assert isinstance(getattr(base, "obj", None), mmap.mmap) is mapped
        assert not data.flags.writeable
        reader.close()
