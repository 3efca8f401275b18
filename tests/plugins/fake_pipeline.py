"""A stand-in for ``feedline.Pipeline`` that emits DALI's reader streams (or a finite
external source), with the scheduled API (schedule_run / share_outputs / release_outputs) the
iterators use. Lets the iterator tests reproduce DALI's tables without real readers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from feedline.core.tensor import TensorListCPU


def reader_stream(
    n: int, num_shards: int, shard_id: int, batch_size: int, pad: bool, stick: bool
) -> Iterator[int]:
    """Sample indices a reader emits forever (DALI's shard rotation, padding)."""
    per_shard = -(-n // num_shards)
    shard, emitted = shard_id, 0
    while True:
        returned = 0
        last = -1
        for last in range(shard * n // num_shards, (shard + 1) * n // num_shards):
            yield last
            returned += 1
            emitted += 1
        while pad and (returned < per_shard or emitted % batch_size):
            yield last
            returned += 1
            emitted += 1
        if not stick:
            shard = (shard + 1) % num_shards


def reader_meta(n: int, num_shards: int, shard_id: int, pad: bool, stick: bool) -> dict:
    """What ``Pipeline.reader_meta`` reports for such a reader."""
    return {
        "epoch_size": n,
        "epoch_size_padded": -(-n // num_shards) * num_shards if pad else n,
        "number_of_shards": num_shards,
        "shard_id": shard_id,
        "pad_last_batch": int(pad),
        "stick_to_shard": int(stick),
    }


class FakePipeline:
    """Batches from ``make_source()`` (an iterator of lists of ints; StopIteration ends an epoch).

    Outputs: ``num_outputs`` copies of the batch; by default int32 samples of shape ``(1,)`` holding
    the sample index + 1 (so that file ``k`` of DALI's ``1..7`` data set reads as ``k``), else
    ``make_sample(index)``.
    """

    def __init__(
        self,
        make_source: Callable[[], Iterator[list[int]]],
        batch_size: int,
        meta: dict | None = None,
        reader_name: str = "Reader",
        num_outputs: int = 1,
        prefetch_queue_depth: int = 2,
        make_sample: Callable[[int], np.ndarray] | None = None,
    ) -> None:
        self.max_batch_size = batch_size
        self.device_id = None
        self.num_outputs = num_outputs
        self._make_source = make_source
        self._source = make_source()
        self._meta = meta
        self._reader_name = reader_name
        self._depth = prefetch_queue_depth
        self._queue: deque[tuple[TensorListCPU, ...]] = deque()
        self._shared = False
        self._stopped = False
        self._first_of_epoch = True
        self._built = False
        self._delivered = 0
        self._make_sample = make_sample or (lambda s: np.array([s + 1], dtype=np.int32))
        self.build_calls = 0
        self.last_shared: tuple[TensorListCPU, ...] = ()

    @classmethod
    def reader(
        cls,
        n: int,
        batch_size: int,
        num_shards: int = 1,
        shard_id: int = 0,
        pad: bool = False,
        stick: bool = False,
        **kwargs: Any,
    ) -> FakePipeline:
        """A pipeline around one reader over samples ``0..n-1``."""

        def source() -> Iterator[list[int]]:
            stream = reader_stream(n, num_shards, shard_id, batch_size, pad, stick)
            while True:
                yield [next(stream) for _ in range(batch_size)]

        return cls(source, batch_size, reader_meta(n, num_shards, shard_id, pad, stick), **kwargs)

    def build(self) -> None:
        self.build_calls += 1
        self._built = True

    def schedule_run(self) -> None:
        assert self._built, "schedule_run() before build()"
        count = self._depth if self._first_of_epoch else 1
        self._first_of_epoch = False
        for _ in range(count):
            if self._stopped:
                return
            try:
                samples = next(self._source)
            except StopIteration:
                self._stopped = True
                return
            data = [self._make_sample(s) for s in samples]
            self._queue.append(
                tuple(TensorListCPU.from_samples(data) for _ in range(self.num_outputs))
            )

    def share_outputs(self) -> tuple[TensorListCPU, ...]:
        assert not self._shared, "share_outputs() twice without release_outputs()"
        if not self._queue:
            raise StopIteration
        self._shared = True
        self._delivered += 1
        self.last_shared = self._queue.popleft()
        return self.last_shared

    def release_outputs(self) -> None:
        self._shared = False

    def reset(self) -> None:
        if self._stopped:
            self._stopped = False
            self._first_of_epoch = True
            self._source = self._make_source()

    def empty(self) -> bool:
        return not self._queue

    def reader_meta(self, name: str) -> dict:
        if self._meta is None or name != self._reader_name:
            raise RuntimeError(f"no reader named {name!r}")
        return dict(self._meta)

    def state_dict(self) -> dict:
        return {"delivered": self._delivered}

    def load_state_dict(self, state: dict) -> None:
        assert not self._queue and not self._delivered, "restored after the first iteration"
        for _ in range(state["delivered"]):
            next(self._source)
        self._delivered = state["delivered"]


class OneBatch:
    """A pipeline (no reader) that gives the same outputs every iteration."""

    def __init__(self, *outputs: Any) -> None:
        self.max_batch_size = len(outputs[0])
        self._outputs = outputs

    def build(self) -> None:
        """Nothing to build."""

    def schedule_run(self) -> None:
        """Nothing to schedule: the outputs are fixed."""

    def release_outputs(self) -> None:
        """Nothing to release."""

    def state_dict(self) -> dict:
        return {}

    def share_outputs(self) -> tuple:
        return self._outputs
