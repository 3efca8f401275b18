"""``experimental.inputs.video``: videos fed from Python come back as consecutive sequences, a
batch at a time, one video after another (needs PyAV)."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import fn, pipeline_def
from feedline.core.plugins import PluginSystem
from tests.operators.cpu.families import use_families
from tests.operators.cpu.video.grey_videos import encode, levels

av = pytest.importorskip("av")

TEN = encode(10)
SEVEN = encode(7, size=(32, 48))


@pytest.fixture(autouse=True)
def _video_plugins(empty_plugin_system: PluginSystem) -> Iterator[None]:
    use_families(empty_plugin_system, "python", "video")
    yield


def streaming(batch_size: int = 2, num_threads: int = 1, **kwargs: Any) -> Any:
    """A built pipeline whose only output is ``experimental.inputs.video`` named ``V``."""

    @pipeline_def(batch_size=batch_size, num_threads=num_threads, device_id=None)
    def graph() -> Any:
        return fn.experimental.inputs.video(name="V", **kwargs)

    pipe = graph()
    pipe.build()
    return pipe


def next_batch(pipe: Any) -> list[np.ndarray]:
    (out,) = pipe.run()
    assert out.layout() == "FHWC"
    return [np.array(s) for s in out]


def test_sequences_in_order_and_the_last_batch_of_a_video_is_short() -> None:
    pipe = streaming(batch_size=2, sequence_length=3)
    pipe.feed_input("V", [TEN])
    first, second = next_batch(pipe), next_batch(pipe)
    assert [levels(s) for s in first] == [[0, 1, 2], [3, 4, 5]]
    assert [levels(s) for s in second] == [[6, 7, 8], [9]]


def test_pad_fills_the_last_sequence_with_black_frames() -> None:
    pipe = streaming(batch_size=4, sequence_length=4, last_sequence_policy="pad")
    pipe.feed_input("V", [TEN])
    batch = next_batch(pipe)
    assert [s.shape[0] for s in batch] == [4, 4, 4]
    assert levels(batch[2][:2]) == [8, 9]
    assert not batch[2][2:].any()


def test_queued_videos_never_share_a_batch() -> None:
    pipe = streaming(batch_size=3, sequence_length=2)
    pipe.feed_input("V", np.array([TEN]))
    pipe.feed_input("V", [SEVEN])
    sizes = [[s.shape for s in next_batch(pipe)] for _ in range(4)]
    assert sizes == [
        [(2, 48, 64, 3)] * 3,
        [(2, 48, 64, 3)] * 2,
        [(2, 32, 48, 3)] * 3,
        [(1, 32, 48, 3)],
    ]


def test_a_video_that_fills_its_batches_exactly_leaves_no_empty_batch() -> None:
    pipe = streaming(batch_size=5, sequence_length=2)
    pipe.feed_input("V", [TEN])
    pipe.feed_input("V", [SEVEN])
    assert len(next_batch(pipe)) == 5
    assert levels(next_batch(pipe)[0]) == [0, 1]


def test_running_with_nothing_queued_is_an_error() -> None:
    pipe = streaming(sequence_length=10)
    pipe.feed_input("V", [TEN])
    next_batch(pipe)
    with pytest.raises(RuntimeError, match="No data was provided"):
        pipe.run()


def test_blocking_waits_for_a_video() -> None:
    pipe = streaming(sequence_length=5, blocking=True)
    timer = threading.Timer(0.3, pipe.feed_input, ("V", [TEN]))
    start = time.monotonic()
    timer.start()
    batch = next_batch(pipe)
    assert time.monotonic() - start >= 0.25
    assert [levels(s) for s in batch] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


@pytest.mark.parametrize("how", ["close", "drop"])
def test_a_pipeline_waiting_for_a_video_closes_at_once(how: str) -> None:
    """After the only video, the pipeline already computes the next batch ahead and blocks
    waiting for a video that never comes: closing or dropping it must not wait for it."""
    pipe = streaming(sequence_length=5, blocking=True)
    pipe.feed_input("V", [TEN])
    next_batch(pipe)
    time.sleep(0.2)  # the next iteration is now waiting for a video

    def finish() -> None:
        nonlocal pipe
        if how == "close":
            pipe.close()
        else:
            del pipe
            gc.collect()

    closer = threading.Thread(target=finish, daemon=True)
    closer.start()
    closer.join(timeout=20)
    assert not closer.is_alive(), f"{how} waited for a video that will never be fed"


def test_the_fed_buffer_is_copied_unless_no_copy() -> None:
    buffer = TEN.copy()
    pipe = streaming(sequence_length=10)
    pipe.feed_input("V", [buffer])
    buffer[:] = 0
    assert levels(next_batch(pipe)[0]) == list(range(10))


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        ([TEN, TEN], ValueError, "one video at a time"),
        ([TEN.astype(np.float32)], TypeError, "uint8"),
        ("video.mp4", TypeError, "unsupported batch type"),
    ],
)
def test_bad_feeds_are_refused(data: Any, error: type, message: str) -> None:
    pipe = streaming(sequence_length=2)
    with pytest.raises(error, match=f"inputs.video 'V'.*{message}"):
        pipe.feed_input("V", data)


def test_corrupt_video_error_names_the_operator() -> None:
    pipe = streaming(sequence_length=2)
    pipe.feed_input("V", [np.frombuffer(b"no video here" * 30, np.uint8)])
    with pytest.raises(RuntimeError, match="inputs.video 'V'.*cannot decode"):
        pipe.run()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sequence_length": 0}, "sequence_length must be positive"),
        ({"sequence_length": 2, "last_sequence_policy": "drop"}, "must be one of"),
        ({}, "sequence_length"),
    ],
)
def test_argument_errors(kwargs: dict, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        streaming(**kwargs)


def test_same_output_for_any_thread_count() -> None:
    def everything(num_threads: int) -> list[np.ndarray]:
        pipe = streaming(batch_size=2, num_threads=num_threads, sequence_length=3)
        pipe.feed_input("V", [TEN])
        pipe.feed_input("V", [SEVEN])
        return [s for _ in range(4) for s in next_batch(pipe)]

    one, three = everything(1), everything(3)
    assert len(one) == len(three) == 7
    assert all(np.array_equal(a, b) for a, b in zip(one, three, strict=True))


@settings(max_examples=15, deadline=None)
@given(length=st.integers(1, 12), batch_size=st.integers(1, 5), pad=st.booleans())
def test_batches_cut_the_video_into_consecutive_sequences(
    length: int, batch_size: int, pad: bool
) -> None:
    policy = "pad" if pad else "partial"
    pipe = streaming(batch_size, sequence_length=length, last_sequence_policy=policy)
    pipe.feed_input("V", [TEN])
    sequences_left = -(-10 // length)
    frames: list[int] = []
    while sequences_left:
        batch = next_batch(pipe)
        assert len(batch) == min(batch_size, sequences_left)
        sequences_left -= len(batch)
        for sequence in batch:
            assert sequence.shape[0] == (length if pad else min(length, 10 - len(frames)))
            frames += levels(sequence[: 10 - len(frames)])
    assert frames == list(range(10))
    with pytest.raises(RuntimeError, match="No data was provided"):
        pipe.run()


@pytest.mark.parametrize(
    ("fed", "layout"),
    [
        (TEN, None),
        (TEN, ""),
        (TEN, "B"),
        (TEN, "X"),
        (TEN[: TEN.size // 2 * 2].reshape(2, -1), "AB"),
    ],
)
def test_a_layout_describing_the_fed_bytes_is_accepted_and_the_output_stays_fhwc(
    fed: np.ndarray, layout: str | None
) -> None:
    pipe = streaming(sequence_length=5)
    pipe.feed_input("V", [fed], layout=layout)
    assert [levels(s) for s in next_batch(pipe)] == [list(range(5)), list(range(5, 10))]


@pytest.mark.parametrize("layout", ["FHWC", "HWC", "BB"])
def test_a_layout_that_cannot_describe_the_fed_bytes_is_refused(layout: str) -> None:
    pipe = streaming(sequence_length=5)
    with pytest.raises(ValueError, match=f"inputs.video 'V'.*layout '{layout}'.*1-dimensional"):
        pipe.feed_input("V", [TEN], layout=layout)
