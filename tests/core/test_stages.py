"""GPU stages without a GPU: placement and build errors, the cpu → mixed → gpu split, the
device-stage thread and its bounded queues, transfers through the pipeline's stream. The device
is the stand-in of ``fake_device`` (NumPy arrays, a stream that records what was done on it)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future

import numpy as np
import pytest

from feedline import Pipeline, fn, pipeline_def, types
from feedline.core.errors import OperatorError, PipelineError
from feedline.core.execution.device import use_device
from feedline.core.execution.executor import Executor, IterationResult
from feedline.core.execution.stages import DeviceStageRunner, StagedExecutor
from feedline.core.graph import split_stages
from feedline.core.kernel import Kernel
from feedline.core.plugins import PluginSystem
from feedline.core.tensor import TensorListCPU

from .fake_device import FakeDeviceBatch, FakeStream, current_stream

IMAGES = [np.arange(12, dtype=np.uint8).reshape(2, 2, 3) + i for i in range(3)]


class FakeGpuFlip(Kernel):
    """A ``gpu`` flip (vertical) that checks it runs with the pipeline's stream current and
    holds its iteration until :attr:`gate` allows it."""

    gate: dict[int, threading.Event] = {}  # noqa: RUF012
    log: list[tuple[str, int, float]] = []  # noqa: RUF012

    def run(self, batch):
        stream = self.ctx.stream
        assert stream is not None and current_stream() is stream
        assert stream.is_device_batch(batch.inputs[0])
        FakeGpuFlip.log.append(("gpu-start", batch.iteration, time.monotonic()))
        gate = FakeGpuFlip.gate.get(batch.iteration)
        if gate is not None:
            assert gate.wait(10), "the gate was never opened"
        if batch.iteration == 99:
            raise ValueError("device stage failure")
        out = [np.ascontiguousarray(s[::-1]) for s in batch.inputs[0].samples()]
        FakeGpuFlip.log.append(("gpu-end", batch.iteration, time.monotonic()))
        return [stream.batch(out, batch.inputs[0].layout(), batch.inputs[0].source_infos())]


@pytest.fixture
def gpu_system(plugin_system: PluginSystem) -> Iterator[PluginSystem]:
    """The installed plugins (with the real transfer kernels) and a fake ``gpu`` flip, over
    the fake device."""
    registry = plugin_system.ensure_loaded()
    registry.add_kernel("flip", "gpu", FakeGpuFlip, override=True, owner="tests")
    FakeGpuFlip.gate.clear()
    FakeGpuFlip.log.clear()
    FakeStream.instances.clear()
    with use_device(FakeStream):
        yield plugin_system


def _source(log: list[tuple[str, int, float]] | None = None):
    calls = iter(range(10**6))

    def source():
        index = next(calls)
        if log is not None:
            log.append(("cpu", index, time.monotonic()))
        return [im + index for im in IMAGES]

    return source


def test_gpu_and_cpu_insert_transfers_and_place_outputs(gpu_system: PluginSystem) -> None:
    pipe = Pipeline(
        batch_size=3,
        num_threads=1,
        device_id=0,
        prefetch_queue_depth=1,
        default_cuda_stream_priority=-1,
    )
    with pipe:
        data = fn.external_source(source=_source(), layout="HWC")
        on_gpu = data.gpu()
        assert on_gpu.device == "gpu" and on_gpu.gpu() is on_gpu
        back = fn.flip(on_gpu, horizontal=0, vertical=1).cpu()
        assert back.device == "cpu" and back.cpu() is back
        after = fn.flip(back, horizontal=0, vertical=1)  # a CPU operator reading data copied back
        assert after.device == "cpu"
        pipe.set_outputs(back, after, on_gpu)
    pipe.build()
    cpu, device = split_stages(pipe._built_ops)
    assert [op.schema.name for op in cpu] == ["external_source"]
    assert [(op.schema.name, op.device) for op in device] == [
        ("_transfer_to_gpu", "mixed"),
        ("flip", "gpu"),
        ("_transfer_to_cpu", "gpu"),
        ("flip", "cpu"),
    ]
    flipped, again, raw = pipe.run()
    assert isinstance(flipped, TensorListCPU) and not isinstance(flipped, FakeDeviceBatch)
    assert isinstance(raw, FakeDeviceBatch)
    for i, image in enumerate(IMAGES):
        np.testing.assert_array_equal(flipped.at(i), image[::-1])
        np.testing.assert_array_equal(again.at(i), image)
        np.testing.assert_array_equal(raw.as_cpu().at(i), image)
    stages = {s["stage"] for s in pipe.executor_statistics().values()}
    assert stages == {"CPU", "MIXED", "GPU"}
    (stream,) = FakeStream.instances
    assert stream.priority == -1
    ops = [op for op, _, _ in stream.ops]
    assert ops.count("h2d") == 1, "one host-to-device copy per batch"
    assert ops.count("d2h") == 3 and "synchronize" in ops
    pipe.close()
    assert stream.closed


def test_a_cpu_operator_given_a_gpu_input_says_to_insert_cpu(gpu_system: PluginSystem) -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=0)
    with (
        pipe,
        pytest.raises(ValueError, match=r"stored on incompatible device gpu; call \.cpu\(\)"),
    ):
        fn.flip(fn.external_source(source=_source()).gpu(), device="cpu")


def test_a_gpu_operator_given_a_cpu_input_says_to_insert_gpu(gpu_system: PluginSystem) -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=0)
    with pipe, pytest.raises(ValueError, match=r"incompatible device cpu; call \.gpu\(\)"):
        fn.flip(fn.external_source(source=_source()), device="gpu")


def test_gpu_operators_in_a_cpu_only_pipeline_fail_at_build(gpu_system: PluginSystem) -> None:
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def graph():
        return fn.flip(fn.external_source(source=_source(), layout="HWC").gpu(), name="gflip")

    with pytest.raises(PipelineError, match=r"'__TransferToGpu_\d+'.*device_id=None"):
        graph().build()
    assert FakeStream.instances == []


def test_sources_and_constants_on_the_gpu_are_copied_there(gpu_system: PluginSystem) -> None:
    @pipeline_def(batch_size=3, num_threads=1, device_id=0)
    def graph():
        data = fn.external_source(source=_source(), layout="HWC", device="gpu", name="src")
        const = types.Constant(np.arange(4, dtype=np.int32), device="gpu")
        assert data.device == "gpu" and const.device == "gpu"
        return data, const

    pipe = graph()
    data, const = pipe.run()
    assert isinstance(data, FakeDeviceBatch) and isinstance(const, FakeDeviceBatch)
    np.testing.assert_array_equal(data.as_cpu().at(2), IMAGES[2])
    np.testing.assert_array_equal(const.as_cpu().at(0), np.arange(4, dtype=np.int32))
    cpu, _ = split_stages(pipe._built_ops)
    assert ("src", "gpu") in {(op.name, op.device) for op in cpu}, "a source runs in the CPU stage"
    pipe.close()


def test_a_gpu_external_source_takes_device_data_without_a_copy(gpu_system: PluginSystem) -> None:
    pipe = Pipeline(batch_size=3, num_threads=1, device_id=0, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(name="src", layout="HWC", device="gpu"))
    pipe.build()
    pipe.feed_input("src", FakeDeviceBatch.from_samples(IMAGES[::-1], "HWC"))
    pipe.feed_input("src", IMAGES[::-1])
    (stream,) = FakeStream.instances
    assert sum(op == "h2d" for op, _, _ in stream.ops) == 1, "only the host data is copied"
    for _ in range(2):
        (data,) = pipe.run()
        assert isinstance(data, FakeDeviceBatch)
        np.testing.assert_array_equal(data.as_cpu().at(0), IMAGES[2])
    with pytest.raises(ValueError, match="GPU batch has 4 samples"):
        pipe.feed_input("src", FakeDeviceBatch.from_samples([*IMAGES, IMAGES[0]], "HWC"))
    pipe.close()


def test_a_cpu_only_pipeline_opens_no_stream_and_keeps_the_plain_executor(
    gpu_system: PluginSystem,
) -> None:
    @pipeline_def(batch_size=3, num_threads=1, device_id=0)
    def graph():
        return fn.flip(fn.external_source(source=_source(), layout="HWC"), vertical=1)

    pipe = graph()
    pipe.run()
    assert type(pipe._executor) is Executor
    assert FakeStream.instances == []
    pipe.close()


def test_cpu_and_gpu_stages_of_consecutive_iterations_overlap(gpu_system: PluginSystem) -> None:
    log: list[tuple[str, int, float]] = []
    FakeGpuFlip.gate[0] = gate = threading.Event()

    @pipeline_def(batch_size=3, num_threads=1, device_id=0, prefetch_queue_depth=3)
    def graph():
        return fn.flip(fn.external_source(source=_source(log), layout="HWC").gpu(), vertical=1)

    pipe = graph()
    pipe.schedule_run()
    # The GPU stage holds iteration 0 while the CPU stage goes on with 1 and 2.
    deadline = time.monotonic() + 10
    while len([e for e in log if e[0] == "cpu"]) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [e[1] for e in log if e[0] == "cpu"] == [0, 1, 2]
    assert not any(e[0] == "gpu-end" for e in FakeGpuFlip.log)
    gate.set()
    for index in range(3):
        (out,) = pipe.share_outputs()
        np.testing.assert_array_equal(out.as_cpu().at(0), (IMAGES[0] + index)[::-1])
        pipe.release_outputs()
    pipe.close()
    (stream,) = FakeStream.instances
    records = [p for p, (op, _, _) in enumerate(stream.ops, 1) if op == "record"]
    synced = [detail for op, detail, _ in stream.ops if op == "sync"]
    assert len(synced) == 3 and set(synced) <= set(records) and synced == sorted(synced), (
        "the consumer waits for each iteration's event, in order"
    )
    assert {thread for op, _, thread in stream.ops if op in ("h2d", "record")} == {
        "feedline-gpu-stage"
    }


class Stage:
    """A device stage computing with ``fn`` (the runner holds a bound method, weakly)."""

    def __init__(self, fn) -> None:
        self.fn = fn

    def run(self, iteration: int, cpu: IterationResult) -> IterationResult:
        return self.fn(iteration, cpu)


def _result(n: int) -> IterationResult:
    return IterationResult((TensorListCPU(np.full((1, 1), n)),), {})


def test_the_runner_honours_cpu_size_and_gpu_size() -> None:
    """cpu_size=2: the CPU stage waits while two of its results wait for the device stage;
    gpu_size=1: the device stage waits while one of its results waits for the consumer."""
    started: list[int] = []
    hold = threading.Event()

    def run(iteration: int, cpu: IterationResult) -> IterationResult:
        started.append(iteration)
        if iteration == 0:
            assert hold.wait(10)
        return cpu

    stage = Stage(run)
    runner = DeviceStageRunner(stage.run, FakeStream(0), cpu_size=2, gpu_size=1, background=True)
    futures = [runner.submit(0, _result(0))]
    while started != [0]:
        time.sleep(0.005)
    futures += [runner.submit(1, _result(1)), runner.submit(2, _result(2))]
    late: list[Future] = []
    blocked = threading.Thread(target=lambda: late.append(runner.submit(3, _result(3))))
    blocked.start()
    time.sleep(0.2)
    assert blocked.is_alive(), "a third waiting CPU result exceeds cpu_size=2"
    hold.set()
    time.sleep(0.2)
    assert started == [0], "a second finished result exceeds gpu_size=1"
    assert blocked.is_alive()
    first = runner.collect(futures[0])
    assert first.outputs[0].at(0)[0] == 0
    blocked.join(5)
    assert not blocked.is_alive() and late
    results = [runner.collect(f).outputs[0].at(0)[0] for f in [*futures[1:], late[0]]]
    assert results == [1, 2, 3] and started == [0, 1, 2, 3]
    runner.close()


def test_the_runner_keeps_nothing_alive() -> None:
    class Owner:
        def run(self, iteration: int, cpu: IterationResult) -> IterationResult:
            return cpu

    owner = Owner()
    runner = DeviceStageRunner(owner.run, FakeStream(0), 1, 1, background=True)
    runner.collect(runner.submit(0, _result(0)))
    thread = runner._thread
    assert thread is not None
    del owner
    thread.join(3)
    assert not thread.is_alive()


def test_closing_unblocks_a_waiting_cpu_stage() -> None:
    hold = threading.Event()

    def run(iteration: int, cpu: IterationResult) -> IterationResult:
        hold.wait(10)
        return cpu

    stage = Stage(run)
    runner = DeviceStageRunner(stage.run, FakeStream(0), cpu_size=1, gpu_size=1, background=True)
    runner.submit(0, _result(0))
    runner.submit(1, _result(1))
    errors: list[BaseException] = []

    def submit() -> None:
        try:
            runner.submit(2, _result(2))
        except BaseException as exc:
            errors.append(exc)

    waiting = threading.Thread(target=submit)
    waiting.start()
    time.sleep(0.1)
    hold.set()
    runner.close()
    waiting.join(5)
    assert not waiting.is_alive() and errors and "closed" in str(errors[0])


@pytest.mark.parametrize("exec_async", [True, False])
def test_a_device_stage_failure_reaches_the_consumer(
    gpu_system: PluginSystem, exec_async: bool
) -> None:
    @pipeline_def(
        batch_size=3, num_threads=1, device_id=0, prefetch_queue_depth=1, exec_async=exec_async
    )
    def graph():
        return fn.flip(fn.external_source(source=_source(), layout="HWC").gpu(), name="gflip")

    pipe = graph()
    pipe.build()
    assert isinstance(pipe._executor, StagedExecutor)
    pipe._queue.restart_at(99)
    with pytest.raises(OperatorError, match="gflip.*device stage failure"):
        pipe.run()
    with pytest.raises(PipelineError, match="earlier error"):
        pipe.run()
    pipe.close()


def test_epochs_end_and_restart_through_the_device_stage(gpu_system: PluginSystem) -> None:
    def batches(index: int):
        if index >= 3:
            raise StopIteration
        return [im + index for im in IMAGES]

    @pipeline_def(
        batch_size=3,
        num_threads=2,
        device_id=0,
        prefetch_queue_depth={"cpu_size": 2, "gpu_size": 1},
    )
    def graph():
        data = fn.external_source(source=batches, layout="HWC")
        return fn.flip(data.gpu(), horizontal=0, vertical=1).cpu()

    pipe = graph()
    for _ in range(2):
        seen = []
        while True:
            try:
                (out,) = pipe.run()
            except StopIteration:
                break
            seen.append(out.at(0))
        assert len(seen) == 3
        for index, image in enumerate(seen):
            np.testing.assert_array_equal(image, (IMAGES[0] + index)[::-1])
        pipe.reset()
    pipe.close()
