"""The resumable position of an iterator: ``state_dict()`` and ``load_state_dict()``.

:class:`ResumableState` is a mixin of :class:`~feedline.plugins.iterator.base.BaseIterator`: it
saves and restores the epoch counters the base keeps, with the states of its pipelines.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ResumableState"]

_STATE_FORMAT = "feedline.iterator/1"


class ResumableState:
    """``state_dict()`` / ``load_state_dict()`` over the counters of a ``BaseIterator``."""

    _pipes: list[Any]
    _reader_name: str | None
    _counter: int
    _size: int
    _counter_per_gpu: np.ndarray
    _shard_sizes_per_gpu: np.ndarray
    _shards_id: np.ndarray
    _first_batch: Any
    _initial_state: dict[str, Any]
    _ever_scheduled: bool
    _consumed: bool

    def _counters(self) -> dict[str, Any]:
        counters: dict[str, Any] = {"counter": int(self._counter), "size": int(self._size)}
        if self._reader_name is not None:
            counters.update(
                counter_per_gpu=self._counter_per_gpu.tolist(),
                shard_sizes_per_gpu=self._shard_sizes_per_gpu.tolist(),
                shards_id=self._shards_id.tolist(),
            )
        return counters

    def _capture_state(self) -> dict[str, Any]:
        return {
            "format": _STATE_FORMAT,
            "iterator": self._counters(),
            "pipelines": [pipe.state_dict() for pipe in self._pipes],
        }

    def state_dict(self) -> dict[str, Any]:
        """The position after the last batch handed out: epoch counters and pipeline states.

        JSON-able. Batches the pipelines computed ahead are not counted, so
        :meth:`load_state_dict` resumes exactly after the last batch the caller received.
        """
        if self._first_batch is not None:
            return copy.deepcopy(self._initial_state)
        return self._capture_state()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resume from :meth:`state_dict` of an iterator with the same arguments and pipelines.

        Call it before the first batch, on an iterator created with
        ``prepare_first_batch=False``; the next batch is the one that followed the saved state.

        Raises:
            RuntimeError: the iterator already fetched a batch.
            ValueError: the state is malformed or was saved with another configuration.
        """
        if self._ever_scheduled:
            raise RuntimeError(
                "load_state_dict() must come before the first batch: create the iterator with "
                "prepare_first_batch=False, load the state, then iterate"
            )
        if not isinstance(state, Mapping) or state.get("format") != _STATE_FORMAT:
            found = state.get("format") if isinstance(state, Mapping) else type(state).__name__
            raise ValueError(
                f"not an iterator state (expected format {_STATE_FORMAT!r}, got {found!r})"
            )
        counters, pipe_states = state.get("iterator"), state.get("pipelines")
        shapes = {key: np.shape(value) for key, value in (counters or {}).items()}
        if shapes != {key: np.shape(value) for key, value in self._counters().items()}:
            raise ValueError(
                f"the state's iterator counters {shapes} do not match this iterator's: it was "
                "saved with another reader_name, size or number of shards"
            )
        if not isinstance(pipe_states, Sequence) or len(pipe_states) != len(self._pipes):
            raise ValueError(
                f"the state holds {len(pipe_states or ())} pipeline states but the iterator has "
                f"{len(self._pipes)} pipelines"
            )
        for pipe, pipe_state in zip(self._pipes, pipe_states, strict=True):
            pipe.load_state_dict(pipe_state)
        self._counter = int(counters["counter"])
        self._size = int(counters["size"])
        if self._reader_name is not None:
            self._counter_per_gpu = np.array(counters["counter_per_gpu"], dtype=np.int64)
            self._shard_sizes_per_gpu = np.array(counters["shard_sizes_per_gpu"], dtype=np.int64)
            self._shards_id = np.array(counters["shards_id"], dtype=np.int64)
        # A `for` loop over the resumed iterator starts a new epoch only if the saved one ended.
        self._consumed = 0 < self._size <= self._counter
