"""WorkerPool: parallel external_source workers, shared memory, errors, cleanup."""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline.core.types import BatchInfo, SampleInfo
from feedline.core.workers import (
    BatchTask,
    CallbackError,
    SampleBatchTask,
    WorkerDiedError,
    WorkerError,
    WorkerPool,
)

SHM = Path("/dev/shm")
TIMEOUT = 20.0  # generous bound; every receive() in these tests must return well before it


# --------------------------------------------------------------- callbacks (module level: spawn)


def shaped(info: SampleInfo) -> np.ndarray:
    return np.full((info.idx_in_epoch % 3 + 1, 2), info.idx_in_epoch, np.int32)


def two_outputs(info: SampleInfo) -> tuple[np.ndarray, float]:
    return np.arange(info.idx_in_epoch, dtype=np.int16), info.idx_in_epoch * 0.5


def worker_pid(info: SampleInfo) -> np.ndarray:
    return np.array(os.getpid())


def dense_batch(info: BatchInfo) -> np.ndarray:
    return np.arange(6, dtype=np.float64).reshape(3, 2) + 10 * info.iteration + info.epoch_idx


def ragged_batch(iteration: int) -> list[np.ndarray]:
    return [np.arange(size, dtype=np.uint8) for size in range(iteration + 1)]


def pair_batch(iteration: int) -> tuple[np.ndarray, list[str]]:
    return np.zeros((2, iteration)), [f"a{iteration}", "b"]


def echo(task: Any) -> Any:
    return task


def rebuild(task: list[tuple[str, tuple[int, ...], bytes]]) -> list[np.ndarray]:
    """Arrays made in the worker (pickling arrays may not keep a non-native byte order)."""
    return [np.frombuffer(raw, np.dtype(descr)).reshape(shape) for descr, shape, raw in task]


def three_batches() -> Iterator[list[np.ndarray]]:
    for value in range(3):
        yield [np.array([value])]


def stop_from_5(info: SampleInfo) -> np.ndarray:
    if info.idx_in_epoch >= 5:
        raise StopIteration
    return np.array(info.idx_in_epoch)


def fail_at_3(info: SampleInfo) -> np.ndarray:
    if info.idx_in_epoch == 3:
        raise ValueError(f"bad sample {info.idx_in_epoch}")
    return np.array(info.idx_in_epoch)


def exit_at_1(info: SampleInfo) -> np.ndarray:
    if info.idx_in_epoch == 1:
        os._exit(3)
    return np.array(info.idx_in_epoch)


def sleepy(info: SampleInfo) -> np.ndarray:
    time.sleep(60)
    return np.array(0)


def object_sample(info: SampleInfo) -> np.ndarray:
    return np.array([object()])


def scalar_batch(iteration: int) -> int:
    return iteration


def _refuse_to_load() -> None:
    raise RuntimeError("this callback only unpickles in the parent")


class LoadsOnlyInParent:
    """Pickles fine, fails to unpickle (in a spawned worker)."""

    def __call__(self, info: SampleInfo) -> np.ndarray:
        return np.array(0)

    def __reduce__(self) -> tuple[Callable[[], None], tuple[()]]:
        return _refuse_to_load, ()


class PlainPickler:
    """A callback_pickler object (not a module): must itself travel to spawned workers."""

    def dumps(self, obj: Any) -> bytes:
        return pickle.dumps(obj)

    def loads(self, data: bytes) -> Any:
        return pickle.loads(data)


# --------------------------------------------------------------------------------- helpers


def infos(first: int, count: int, iteration: int = 0, epoch: int = 0) -> SampleBatchTask:
    return SampleBatchTask([SampleInfo(first + i, i, iteration, epoch) for i in range(count)])


def segments(prefix: str) -> list[str]:
    return sorted(name for name in os.listdir(SHM) if name.startswith(prefix))


def assert_closed_cleanly(pool: WorkerPool) -> None:
    pids, prefix = pool.pids(), pool.segment_prefix
    pool.close()
    pool.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not [p for p in mp.active_children() if p.pid in pids]
    if prefix is not None and SHM.is_dir():
        assert segments(prefix) == []


@pytest.fixture
def make_pool() -> Iterator[Callable[..., WorkerPool]]:
    pools: list[WorkerPool] = []

    def make(*sources: tuple, workers: int = 2, method: str = "fork", **kwargs: Any) -> WorkerPool:
        pool = WorkerPool(workers, method, **kwargs)
        pools.append(pool)
        for source_id, callback, options in sources:
            pool.add_source(source_id, callback, **options)
        pool.start()
        return pool

    yield make
    for pool in pools:
        assert_closed_cleanly(pool)


def equal_samples(got: list[np.ndarray], expected: list[Any]) -> None:
    assert len(got) == len(expected)
    for array, want in zip(got, expected, strict=True):
        want = np.asarray(want)
        assert array.dtype == want.dtype and array.shape == want.shape
        np.testing.assert_array_equal(array, want)


# ------------------------------------------------------------------------------ behaviour


def test_sample_mode_keeps_order_across_workers(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, shaped, {"kind": "sample", "prefetch": 3}), workers=3)
    tasks = [infos(7 * it, 7, iteration=it) for it in range(3)]
    for task in tasks:
        pool.schedule(0, task)
    for task in tasks:
        equal_samples(pool.receive(0, timeout=TIMEOUT), [shaped(i) for i in task.samples])


def test_sample_batches_are_split_over_workers(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, worker_pid, {"kind": "sample"}), workers=2)
    pool.schedule(0, infos(0, 8))
    pids = [int(a) for a in pool.receive(0, timeout=TIMEOUT)]
    assert pids[:4] == [pids[0]] * 4 and pids[4:] == [pids[4]] * 4
    assert sorted({pids[0], pids[4]}) == sorted(pool.pids())


def test_num_outputs_gives_one_list_per_output(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool(
        (0, two_outputs, {"kind": "sample", "num_outputs": 2}),
        (1, pair_batch, {"kind": "batch", "num_outputs": 2}),
    )
    pool.schedule(0, infos(0, 5))
    first, second = pool.receive(0, timeout=TIMEOUT)
    equal_samples(first, [two_outputs(i)[0] for i in infos(0, 5).samples])
    equal_samples(second, [two_outputs(i)[1] for i in infos(0, 5).samples])
    pool.schedule(1, BatchTask(3))
    zeros, names = pool.receive(1, timeout=TIMEOUT)
    equal_samples(zeros, list(np.zeros((2, 3))))
    equal_samples(names, ["a3", "b"])


def test_batch_mode_dense_and_ragged(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool(
        (0, dense_batch, {"kind": "batch", "prefetch": 2}), (1, ragged_batch, {"kind": "batch"})
    )
    pool.schedule(0, BatchTask(BatchInfo(0, 0)))
    pool.schedule(0, BatchTask(BatchInfo(1, 2)))
    equal_samples(pool.receive(0, timeout=TIMEOUT), list(dense_batch(BatchInfo(0, 0))))
    equal_samples(pool.receive(0, timeout=TIMEOUT), list(dense_batch(BatchInfo(1, 2))))
    for iteration in (0, 4):
        pool.schedule(1, BatchTask(iteration))
        equal_samples(pool.receive(1, timeout=TIMEOUT), ragged_batch(iteration))


def _drain(pool: WorkerPool, source_id: int, requests: int) -> list[int | None]:
    seen: list[int | None] = []
    for _ in range(requests):
        pool.schedule(source_id, BatchTask())
        try:
            seen.append(int(pool.receive(source_id, timeout=TIMEOUT)[0][0]))
        except StopIteration:
            seen.append(None)
    return seen


@pytest.mark.parametrize(
    ("cycle", "epoch0", "epoch1"),
    [
        ("no", [0, 1, 2, None, None], [None, None]),
        ("quiet", [0, 1, 2, 0, 1], [2, 0]),
        ("raise", [0, 1, 2, None, None], [0, 1]),
    ],
)
def test_iterable_cycle_modes(
    make_pool: Callable[..., WorkerPool], cycle: str, epoch0: list, epoch1: list
) -> None:
    pool = make_pool(
        (0, three_batches, {"kind": "iterable", "cycle": cycle}),
        (1, [[np.array([0])], [np.array([1])]], {"kind": "iterable"}),
    )
    assert _drain(pool, 0, 5) == epoch0
    assert _drain(pool, 1, 3) == [0, 1, None]
    pool.reset()
    assert _drain(pool, 0, 2) == epoch1
    assert _drain(pool, 1, 1) == [None]  # a plain iterable stays exhausted after reset()


def test_stop_iteration_drops_the_batch_and_reset_restarts(
    make_pool: Callable[..., WorkerPool],
) -> None:
    pool = make_pool((0, stop_from_5, {"kind": "sample", "prefetch": 2}))
    pool.schedule(0, infos(0, 2, iteration=0))
    pool.schedule(0, infos(2, 2, iteration=1))
    equal_samples(pool.receive(0, timeout=TIMEOUT), [0, 1])
    pool.schedule(0, infos(4, 2, iteration=2))
    equal_samples(pool.receive(0, timeout=TIMEOUT), [2, 3])
    pool.schedule(0, infos(6, 2, iteration=3))  # past the end: keeps raising StopIteration
    with pytest.raises(StopIteration):
        pool.receive(0, timeout=TIMEOUT)
    pool.reset()
    pool.schedule(0, infos(0, 2, epoch=1))
    equal_samples(pool.receive(0, timeout=TIMEOUT), [0, 1])


def test_reset_drops_scheduled_batches(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, shaped, {"kind": "sample", "prefetch": 3}), workers=1)
    for iteration in range(3):
        pool.schedule(0, infos(10 * iteration + 100, 3, iteration=iteration))
    pool.reset(0)
    pool.schedule(0, infos(0, 3, epoch=1))
    equal_samples(pool.receive(0, timeout=TIMEOUT), [shaped(i) for i in infos(0, 3).samples])
    with pytest.raises(RuntimeError, match="nothing is scheduled"):
        pool.receive(0)


def test_callback_exception_carries_traceback_and_sample(
    make_pool: Callable[..., WorkerPool],
) -> None:
    pool = make_pool((0, fail_at_3, {"kind": "sample"}))
    pool.schedule(0, infos(0, 6))
    with pytest.raises(CallbackError) as caught:
        pool.receive(0, timeout=TIMEOUT)
    error = caught.value
    assert isinstance(error, RuntimeError) and error.sample_index == 3
    message = str(error)
    for part in ("sample 3 of the batch", "fail_at_3", "Traceback", "ValueError: bad sample 3"):
        assert part in message
    assert error.pid in pool.pids() and "fail_at_3" in error.remote_traceback
    assert isinstance(error.__cause__, ValueError)
    pool.schedule(0, infos(6, 4, iteration=1))  # the pool keeps working after a callback error
    equal_samples(pool.receive(0, timeout=TIMEOUT), [6, 7, 8, 9])


@pytest.mark.parametrize(
    ("callback", "kind", "match"),
    [
        (object_sample, "sample", "dtype object"),
        (two_outputs, "sample", "tuple of 3"),
        (scalar_batch, "batch", "outer sample dimension"),
    ],
)
def test_bad_callback_results_are_reported(
    make_pool: Callable[..., WorkerPool], callback: Callable, kind: str, match: str
) -> None:
    num_outputs = 3 if callback is two_outputs else None
    pool = make_pool((0, callback, {"kind": kind, "num_outputs": num_outputs}), workers=1)
    pool.schedule(0, infos(0, 2) if kind == "sample" else BatchTask(1))
    with pytest.raises(CallbackError, match=match):
        pool.receive(0, timeout=TIMEOUT)


def test_worker_exit_raises_instead_of_hanging(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, exit_at_1, {"kind": "sample"}))
    pool.schedule(0, infos(0, 4))
    start = time.monotonic()
    with pytest.raises(WorkerDiedError, match="exit code 3") as caught:
        pool.receive(0, timeout=TIMEOUT)
    assert time.monotonic() - start < TIMEOUT / 2
    assert caught.value.exitcode == 3 and f"worker {caught.value.worker}" in str(caught.value)
    assert "exit_at_1" in str(caught.value)
    with pytest.raises(RuntimeError, match="exit code 3"):
        pool.schedule(0, infos(4, 4))


def test_killed_worker_is_named(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, sleepy, {"kind": "sample"}), workers=1)
    pool.schedule(0, infos(0, 1))
    os.kill(pool.pids()[0], signal.SIGKILL)
    with pytest.raises(WorkerDiedError, match="SIGKILL"):
        pool.receive(0, timeout=TIMEOUT)


def test_timeout_then_close_terminates_a_busy_worker(
    make_pool: Callable[..., WorkerPool],
) -> None:
    pool = make_pool((0, sleepy, {"kind": "sample"}), workers=1)
    pool.schedule(0, infos(0, 1))
    with pytest.raises(TimeoutError):
        pool.receive(0, timeout=0.2)
    start = time.monotonic()
    assert_closed_cleanly(pool)
    assert time.monotonic() - start < 10


@pytest.mark.skipif(not SHM.is_dir(), reason="needs /dev/shm to list segments")
def test_segments_grow_and_are_replaced(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, echo, {"kind": "batch"}), workers=1)
    rng = np.random.default_rng(0)
    capacities = []
    for size in (10, 3_000_000, 12_000_000, 1_000):  # the slot starts at 1 MiB
        batch = [rng.integers(0, 255, size, dtype=np.uint8), rng.random(size // 8 + 1)]
        pool.schedule(0, BatchTask(batch))
        equal_samples(pool.receive(0, timeout=TIMEOUT), batch)
        (capacity,) = pool.shm_statistics()["capacities"]
        assert capacity >= sum(a.nbytes for a in batch)
        capacities.append(capacity)
        assert len(segments(pool.segment_prefix)) == 1  # a grown slot replaced the old one
    assert capacities[0] < capacities[1] < capacities[2] == capacities[3]


def test_large_tasks_do_not_block_the_parent(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool((0, echo, {"kind": "batch", "prefetch": 4}), workers=1)
    batches = [[np.full(300_000, i, np.int32)] for i in range(4)]  # 1.2 MB pickled each
    for batch in batches:
        pool.schedule(0, BatchTask(batch))
    for batch in batches:
        equal_samples(pool.receive(0, timeout=TIMEOUT), batch)


def test_unreferenced_pool_is_finalized() -> None:
    pool = WorkerPool(2)
    pool.add_source(0, shaped, kind="sample")
    pool.start()
    pool.schedule(0, infos(0, 4))
    pool.receive(0, timeout=TIMEOUT)
    pids, prefix = pool.pids(), pool.segment_prefix
    del pool
    gc.collect()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    if SHM.is_dir():
        assert segments(prefix) == []


@pytest.fixture(scope="module")
def rebuild_pool() -> Iterator[WorkerPool]:
    pool = WorkerPool(2)
    pool.add_source(0, rebuild, kind="batch")
    pool.start()
    yield pool
    assert_closed_cleanly(pool)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        hnp.arrays(
            dtype=st.one_of(
                hnp.scalar_dtypes(), hnp.byte_string_dtypes(), hnp.unicode_string_dtypes()
            ),
            shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
        ),
        max_size=5,
    )
)
def test_any_arrays_round_trip(rebuild_pool: WorkerPool, batch: list[np.ndarray]) -> None:
    task = [(a.dtype.str, a.shape, np.ascontiguousarray(a).tobytes()) for a in batch]
    rebuild_pool.schedule(0, BatchTask(task))
    got = rebuild_pool.receive(0, timeout=TIMEOUT)
    assert len(got) == len(batch)
    for array, sent in zip(got, batch, strict=True):
        assert array.dtype == sent.dtype and array.shape == sent.shape
        assert array.tobytes() == np.ascontiguousarray(sent).tobytes()  # NaN-safe equality
        assert array.flags.writeable and array.flags.c_contiguous


# ------------------------------------------------------------------------------------ spawn


def test_spawn_runs_every_kind(make_pool: Callable[..., WorkerPool]) -> None:
    pool = make_pool(
        (0, shaped, {"kind": "sample", "prefetch": 2}),
        (1, dense_batch, {"kind": "batch"}),
        (2, three_batches, {"kind": "iterable"}),
        (3, fail_at_3, {"kind": "sample"}),
        method="spawn",
        callback_pickler=(pickle, {"protocol": 4}, {}),
    )
    pool.schedule(0, infos(0, 5))
    pool.schedule(0, infos(5, 5, iteration=1))
    equal_samples(pool.receive(0, timeout=TIMEOUT), [shaped(i) for i in infos(0, 5).samples])
    equal_samples(pool.receive(0, timeout=TIMEOUT), [shaped(i) for i in infos(5, 5).samples])
    pool.schedule(1, BatchTask(BatchInfo(2, 1)))
    equal_samples(pool.receive(1, timeout=TIMEOUT), list(dense_batch(BatchInfo(2, 1))))
    assert _drain(pool, 2, 4) == [0, 1, 2, None]
    pool.schedule(3, infos(2, 2))
    with pytest.raises(CallbackError, match="sample 1 of the batch"):
        pool.receive(3, timeout=TIMEOUT)


def test_spawn_sends_local_functions_and_lambdas_by_value() -> None:
    offset = 7

    def local_callback(info: SampleInfo) -> np.ndarray:
        return np.array(info.idx_in_epoch + offset)

    pool = WorkerPool(1, "spawn")
    pool.add_source(0, local_callback, kind="sample")
    pool.add_source(1, lambda info: np.array(-info.idx_in_epoch), kind="sample")
    try:
        pool.start()
        pool.schedule(0, infos(0, 3))
        pool.schedule(1, infos(0, 3))
        equal_samples(pool.receive(0, timeout=TIMEOUT), [np.array(i + 7) for i in range(3)])
        equal_samples(pool.receive(1, timeout=TIMEOUT), [np.array(-i) for i in range(3)])
    finally:
        pool.close()


class HoldsALock:
    """A callback no pickler can send: it holds a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, info: SampleInfo) -> np.ndarray:
        return np.array(0)


def test_spawn_unpicklable_callback_is_named() -> None:
    pool = WorkerPool(2, "spawn")
    pool.add_source(7, HoldsALock(), kind="sample")
    with pytest.raises(TypeError, match=r"HoldsALock.*source 7.*cannot be pickled"):
        pool.start()
    assert pool.pids() == []
    pool.close()


def test_spawn_worker_that_cannot_load_the_callback() -> None:
    pool = WorkerPool(1, "spawn", callback_pickler=PlainPickler())
    pool.add_source(0, LoadsOnlyInParent(), kind="sample")
    with pytest.raises(WorkerError, match="(?s)could not load.*only unpickles in the parent"):
        pool.start()
    assert_closed_cleanly(pool)


# ------------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((0,), {}, ValueError, "num_workers"),
        ((True,), {}, ValueError, "num_workers"),
        ((1, "forkserver"), {}, ValueError, "start_method"),
        ((1, "fork"), {"callback_pickler": pickle}, ValueError, "only used with start_method"),
        ((1, "spawn"), {"callback_pickler": object()}, TypeError, "dumps"),
        ((1, "spawn"), {"callback_pickler": (pickle, {})}, TypeError, "dumps_kwargs"),
    ],
)
def test_constructor_rejects(args: tuple, kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        WorkerPool(*args, **kwargs)


@pytest.mark.parametrize(
    ("source", "error", "match"),
    [
        (("0", shaped, {"kind": "sample"}), TypeError, "source_id"),
        ((1, shaped, {"kind": "sample"}), ValueError, "already added"),
        ((2, shaped, {"kind": "samples"}), ValueError, "kind of source 2"),
        ((2, 42, {"kind": "batch"}), TypeError, "callback of source 2"),
        ((2, 42, {"kind": "iterable"}), TypeError, "iterable or a generator"),
        ((2, shaped, {"kind": "sample", "prefetch": 0}), ValueError, "prefetch of source 2"),
        ((2, shaped, {"kind": "sample", "num_outputs": 0}), ValueError, "num_outputs of source"),
        ((2, shaped, {"kind": "sample", "cycle": "quiet"}), ValueError, "cycle of source 2"),
        ((2, three_batches, {"kind": "iterable", "cycle": True}), ValueError, "cycle of source"),
    ],
)
def test_add_source_rejects(source: tuple, error: type, match: str) -> None:
    pool = WorkerPool(1)
    pool.add_source(1, shaped, kind="sample")
    source_id, callback, options = source
    with pytest.raises(error, match=match):
        pool.add_source(source_id, callback, **options)
    pool.close()


def test_call_order_is_enforced(make_pool: Callable[..., WorkerPool]) -> None:
    idle = WorkerPool(1)
    with pytest.raises(RuntimeError, match="no source"):
        idle.start()
    idle.add_source(0, shaped, kind="sample")
    with pytest.raises(RuntimeError, match="not started"):
        idle.schedule(0, infos(0, 1))
    idle.close()
    with pytest.raises(RuntimeError, match="closed"):
        idle.receive(0)

    pool = make_pool((0, shaped, {"kind": "sample"}), (1, echo, {"kind": "batch"}))
    with pytest.raises(RuntimeError, match="already started"):
        pool.add_source(2, shaped, kind="sample")
    with pytest.raises(RuntimeError, match="already started"):
        pool.start()
    with pytest.raises(KeyError, match="unknown source_id 5"):
        pool.schedule(5, infos(0, 1))
    with pytest.raises(TypeError, match="takes a SampleBatchTask"):
        pool.schedule(0, BatchTask(0))
    with pytest.raises(TypeError, match="takes a BatchTask"):
        pool.schedule(1, infos(0, 1))
    with pytest.raises(TypeError, match="the task cannot be pickled"):
        pool.schedule(1, BatchTask(lambda: None))
    pool.schedule(0, infos(0, 1))
    with pytest.raises(RuntimeError, match="prefetch=1"):
        pool.schedule(0, infos(1, 1))
    equal_samples(pool.receive(0, timeout=TIMEOUT), [shaped(infos(0, 1).samples[0])])
    pool.schedule(0, SampleBatchTask([]))
    assert pool.receive(0, timeout=TIMEOUT) == []
