"""The resumable position of an iterator: ``state_dict()`` and ``load_state_dict()``.

:class:`ResumableState` is a mixin of :class:`~feedline.plugins.iterator.base.BaseIterator`: it
saves and restores the epoch counters the base keeps, with the states of its pipelines.
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ResumableState"]

_STATE_FORMAT = "feedline.iterator/1"
#: The key of a pipeline checkpoint (from :meth:`ResumableState.checkpoints`) that holds the
#: iterator's counters, as DALI's ``iterator_data``.
ITERATOR_DATA_KEY = "iterator_data"


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

    def checkpoints(self) -> list[str]:
        """DALI's checkpoints: one JSON checkpoint per pipeline, as of the last batch handed out.

        Each is the pipeline's checkpoint with the iterator's counters added
        (``iterator_data``); pipelines created with ``checkpoint=`` one of them (in the same
        order) give an iterator that continues where this one stands.

        Raises:
            ValueError: the pipelines were created without ``enable_checkpointing=True``.
        """
        if not all(getattr(pipe, "enable_checkpointing", False) for pipe in self._pipes):
            raise ValueError(
                "Cannot access checkpoints with checkpointing disabled: create the pipelines "
                "with enable_checkpointing=True"
            )
        state = self.state_dict()
        return [
            json.dumps({**pipe_state, ITERATOR_DATA_KEY: state["iterator"]})
            for pipe_state in state["pipelines"]
        ]

    def _restore_from_checkpoints(self) -> bool:
        """Take the counters saved in the checkpoints the pipelines were created from.

        Returns:
            Whether any pipeline was restored from a checkpoint.
        """
        restored = [getattr(pipe, "restored_checkpoint", None) for pipe in self._pipes]
        if not any(restored):
            return False
        saved = [(cp or {}).get(ITERATOR_DATA_KEY) for cp in restored]
        if not all(saved) or any(data != saved[0] for data in saved):
            warnings.warn(
                "the pipelines were not all restored from checkpoints of one iterator (some "
                "lack iterator data or hold different data): the iterator starts its epoch "
                "counters from the first pipeline's and may produce unexpected results",
                UserWarning,
                stacklevel=4,
            )
        data = next((d for d in saved if d), None)
        if data is not None:
            self._load_counters(data)
        return True

    def _check_counters(self, counters: Mapping[str, Any]) -> None:
        shapes = {key: np.shape(value) for key, value in counters.items()}
        if shapes != {key: np.shape(value) for key, value in self._counters().items()}:
            raise ValueError(
                f"the state's iterator counters {shapes} do not match this iterator's: it was "
                "saved with another reader_name, size or number of shards"
            )

    def _load_counters(self, counters: Mapping[str, Any]) -> None:
        self._check_counters(counters)
        self._counter = int(counters["counter"])
        self._size = int(counters["size"])
        if self._reader_name is not None:
            self._counter_per_gpu = np.array(counters["counter_per_gpu"], dtype=np.int64)
            self._shard_sizes_per_gpu = np.array(counters["shard_sizes_per_gpu"], dtype=np.int64)
            self._shards_id = np.array(counters["shards_id"], dtype=np.int64)

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
        if not isinstance(counters, Mapping):
            raise ValueError("the state holds no iterator counters ('iterator')")
        self._check_counters(counters)
        if not isinstance(pipe_states, Sequence) or len(pipe_states) != len(self._pipes):
            raise ValueError(
                f"the state holds {len(pipe_states or ())} pipeline states but the iterator has "
                f"{len(self._pipes)} pipelines"
            )
        for pipe, pipe_state in zip(self._pipes, pipe_states, strict=True):
            pipe.load_state_dict(pipe_state)
        self._load_counters(counters)
        # A `for` loop over the resumed iterator starts a new epoch only if the saved one ended.
        self._consumed = 0 < self._size <= self._counter
