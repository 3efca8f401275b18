"""A pipeline's resources end with it: dropped pipelines are freed without ``close()``, and
``close()``, Ctrl-C and interpreter exit cancel queued work instead of running it to the end.

Each scenario runs in a fresh interpreter (threads, descriptors, child processes and ``/dev/shm``
are process-wide), under a watchdog: the subprocess timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

#: A pipeline whose python_function sleeps ``SLOW`` seconds per call, three iterations ahead.
SLOW_PIPELINE = """
import time, numpy as np
from feedline import fn, pipeline_def

SLOW = {slow}

def slow(x):
    time.sleep(SLOW)
    return x

@pipeline_def(batch_size=2, num_threads=2, device_id=None, prefetch_queue_depth=3, seed=1)
def graph():
    x = fn.external_source(source=lambda i: [np.zeros(1, np.float32)] * 2, batch=True)
    return fn.python_function(x, function=slow)
"""

RESOURCES = """
import gc, os, threading, time

def settled(expected, timeout=5.0):
    # Threads of collected pipelines end asynchronously (within a poll interval): wait for them.
    deadline = time.monotonic() + timeout
    while resources() != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return resources()

def quiet(timeout=10.0):
    # What stays once the collected pipelines' threads and workers have ended.
    deadline = time.monotonic() + timeout
    readings = [resources()]
    while len(readings) < 4 or len({repr(r) for r in readings[-4:]}) > 1:
        assert time.monotonic() < deadline, ("resources never settled", readings[-4:])
        time.sleep(0.1)
        readings.append(resources())
    return readings[-1]

def resources():
    gc.collect()
    shm = sorted(n for n in os.listdir("/dev/shm") if n.startswith(("psm_", "feedline")))
    children = [line for line in open("/proc/self/task/%d/children" % os.getpid()).read().split()]
    return {
        "threads": threading.active_count(),
        "fds": len(os.listdir("/proc/self/fd")),
        "children": len(children),
        "shm": len(shm),
    }
"""


def _run(script: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
@pytest.mark.parametrize("parallel", [False, True], ids=["plain", "parallel_external_source"])
def test_fifty_dropped_pipelines_leave_nothing_behind(tmp_path, parallel: bool) -> None:
    for i in range(8):
        (tmp_path / f"{i}.bin").write_bytes(bytes([i]) * 64)
    script = (
        RESOURCES
        + f"""
import numpy as np
from feedline import fn, pipeline_def

FILES = {sorted(str(p) for p in tmp_path.iterdir())!r}
PARALLEL = {parallel!r}

def source(info):
    return np.full(4, info.idx_in_epoch, np.float32)

@pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1, prefetch_queue_depth=2,
              py_num_workers=2)
def graph():
    data, label = fn.readers.file(files=FILES)
    if PARALLEL:
        extra = fn.external_source(source=source, parallel=True, batch=False)
        return data, label, extra
    return data, label

def once():
    p = graph()
    p.build()
    p.run()
    p.run()

once()  # imports, caches, plugin loading and helper processes happen here, not in the loop
start = quiet()
for _ in range(50):
    once()
end = settled(start)
print(start, end)
assert end == start, (start, end)
"""
    )
    result = _run(script, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-1000:]


@pytest.mark.slow
def test_a_pipeline_is_a_context_manager() -> None:
    script = (
        RESOURCES
        + SLOW_PIPELINE.format(slow=0)
        + """
start = resources()
with graph() as pipe:
    pipe.build()
    pipe.run()
    assert resources() != start
assert settled(start) == start, (start, resources())
print("ok")
"""
    )
    result = _run(script, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


@pytest.mark.slow
def test_close_waits_only_for_running_tasks() -> None:
    script = (
        SLOW_PIPELINE.format(slow=2)
        + """
pipe = graph()
pipe.build()
pipe.run()  # three more iterations are now queued behind a running one
start = time.perf_counter()
pipe.close()
print(f"{time.perf_counter() - start:.2f}")
"""
    )
    result = _run(script, timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    # At most the call already running (2 s); the queued iterations would take 6 s more.
    assert float(result.stdout.strip()) < 3.0


@pytest.mark.slow
def test_interpreter_exit_cancels_queued_work() -> None:
    script = (
        SLOW_PIPELINE.format(slow=2)
        + """
pipe = graph()
pipe.build()
pipe.run()
print(time.time(), flush=True)
"""
    )
    result = _run(script, timeout=60)
    exited = time.time()
    assert result.returncode == 0, result.stderr[-3000:]
    # Timed from the end of the first run (not from the interpreter's start, which a loaded
    # machine slows): exit waits at most for the 2 s call running, not for 3 more iterations.
    exit_took = exited - float(result.stdout.split()[-1])
    assert exit_took < 3.5, f"exit took {exit_took:.1f} s after the first run"


@pytest.mark.slow
def test_ctrl_c_interrupts_a_waiting_run_and_exit_drops_queued_work() -> None:
    script = (
        SLOW_PIPELINE.format(slow=4)
        + """
pipe = graph()
pipe.build()
print("built", flush=True)
try:
    pipe.run()
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "built"
        time.sleep(1.0)
        os.kill(proc.pid, signal.SIGINT)
        start = time.perf_counter()
        line = proc.stdout.readline().strip()
        interrupted = time.perf_counter() - start
        _, err = proc.communicate(timeout=60)
        exited = time.perf_counter() - start
    finally:
        proc.kill()
    assert line == "interrupted", err[-3000:]
    assert interrupted < 1.0, f"run() took {interrupted:.1f} s to raise KeyboardInterrupt"
    # Exit waits at most for the calls running (4 s), not for three queued iterations (12 s).
    assert exited < 6.0, f"the interpreter took {exited:.1f} s to exit after Ctrl-C"


@pytest.mark.parametrize("parallel", [False, True], ids=["plain", "parallel_external_source"])
def test_a_dropped_pipeline_is_freed_at_once_without_the_garbage_collector(
    tmp_path, parallel: bool
) -> None:
    for i in range(4):
        (tmp_path / f"{i}.bin").write_bytes(bytes([i]) * 16)
    script = f"""
import gc, os, threading, time, weakref
import numpy as np
from feedline import fn, pipeline_def

gc.disable()  # nothing may wait for a collection: the last reference frees the pipeline

def resources():
    return threading.active_count(), len(os.listdir("/proc/self/fd"))

def source(info):
    return np.full(2, info.idx_in_epoch, np.float32)

@pipeline_def(batch_size=2, num_threads=3, device_id=None, py_num_workers=1)
def graph():
    data, label = fn.readers.file(files={sorted(str(p) for p in tmp_path.iterdir())!r})
    if {parallel!r}:
        return data, fn.external_source(source=source, parallel=True, batch=False)
    return data, label

def drop_one():
    pipe = graph()
    pipe.build()
    pipe.run()
    assert resources() != before
    ref = weakref.ref(pipe)
    del pipe
    # Freed by its reference count alone, once the iteration computing ahead ends.
    deadline = time.monotonic() + 2.0
    while (ref() is not None or resources() != before) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ref() is None, "the pipeline outlived its last reference"

before = resources()
drop_one()  # process-wide helpers (multiprocessing's resource tracker) start here and stay
time.sleep(0.2)
before = resources()
drop_one()
assert resources() == before, (before, resources())
"""
    result = _run(script, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-1000:]
