"""What a pipeline's readers report, and checkpoints: where the consumer stands, saved as JSON
and restored before the first iteration (every reader's position, the epoch, the iteration and
the operators' seeds: random draws depend only on the seed, the iteration and the sample)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from feedline.core.execution.executor import Executor
from feedline.core.execution.prefetch import IterationQueue
from feedline.core.graph import OpNode
from feedline.core.kernel import Kernel

__all__ = ["ReaderState", "parse_checkpoint"]


def parse_checkpoint(checkpoint: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """A checkpoint given as JSON text (``str``, or UTF-8 ``bytes`` as read from a file opened
    in binary mode, DALI's way) or a dict, validated."""
    if isinstance(checkpoint, bytes | bytearray | memoryview):
        try:
            checkpoint = bytes(checkpoint).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(
                "checkpoint is not UTF-8 JSON text (a checkpoint written by DALI cannot be "
                "restored here)"
            ) from None
    if isinstance(checkpoint, str):
        try:
            checkpoint = json.loads(checkpoint)
        except json.JSONDecodeError as exc:
            raise ValueError(f"checkpoint is not valid JSON: {exc}") from None
    if not isinstance(checkpoint, Mapping) or checkpoint.get("version") != 1:
        raise ValueError("not a feedline checkpoint (expected a dict with version 1)")
    return dict(checkpoint)


class ReaderState:
    """Reader queries and checkpoints; mixed into ``Pipeline``, which sets the attributes."""

    _built: bool
    _built_ops: list[OpNode]
    _executor: Executor | None
    _queue: IterationQueue
    _enable_checkpointing: bool
    _restore_from: dict[str, Any] | None
    _restored_iteration: int
    _consumed: int
    _iteration_in_epoch: int
    _is_restored: bool
    _iterator_data: str
    _epoch_idx: int
    _reader_states: dict[str, Any]
    _seeds: dict[str, int]

    def build(self) -> None:
        """Build the pipeline (implemented by ``Pipeline``)."""
        raise NotImplementedError

    def _all_kernels(self) -> list[Kernel]:
        """Every built kernel, in order (implemented by ``Pipeline``)."""
        raise NotImplementedError

    def _readers(self) -> dict[str, Kernel]:
        self.build()
        assert self._executor is not None
        return {
            op.name: self._executor.kernel_of(op)
            for op in self._built_ops
            if self._executor.kernel_of(op).is_reader
        }

    def reader_meta(self, name: str | None = None) -> dict[str, Any]:
        """Reader metadata (docs/readers.md): of reader ``name``, or ``{name: meta}`` for all."""
        readers = self._readers()
        if name is None:
            return {n: k.reader_meta() for n, k in readers.items()}  # type: ignore[attr-defined]
        if name not in readers:
            raise RuntimeError(
                f"no reader named {name!r} in the pipeline "
                f"(readers: {', '.join(readers) or 'none'})"
            )
        return readers[name].reader_meta()  # type: ignore[attr-defined]

    def epoch_size(self, name: str | None = None) -> int | dict[str, int]:
        """``epoch_size_padded`` of reader ``name``, or ``{name: size}`` for all readers."""
        if name is not None:
            return int(self.reader_meta(name)["epoch_size_padded"])
        return {n: int(m["epoch_size_padded"]) for n, m in self.reader_meta().items()}

    def state_dict(self) -> dict[str, Any]:
        """Where the consumer stands: iterations consumed, epoch and every reader's position."""
        self.build()
        return {
            "version": 1,
            "iteration": self._restored_iteration + self._consumed,
            "epoch_idx": self._epoch_idx,
            "iteration_in_epoch": self._iteration_in_epoch,
            "readers": dict(self._reader_states),
            "seeds": dict(self._seeds),
        }

    def checkpoint(self, filename: str | None = None) -> str:
        """The :meth:`state_dict` as JSON (also written to ``filename`` if given)."""
        text = self._get_checkpoint()
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as handle:
                handle.write(text)
        return text

    def _get_checkpoint(self, iterator_data: str = "") -> str:
        """The checkpoint text, with ``iterator_data`` (a framework iterator's counters, as
        DALI's iterators store them) kept for the iterator that wraps the restored pipeline."""
        if not self._enable_checkpointing:
            raise RuntimeError(
                "Cannot save the checkpoint. The `enable_checkpointing` was not specified when "
                "creating the pipeline (pass enable_checkpointing=True)"
            )
        return json.dumps(self.state_dict() | {"iterator_data": iterator_data})

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resume from :meth:`state_dict` (before the first iteration)."""
        if self._built and (not self._queue.empty() or self._consumed):
            raise RuntimeError("a checkpoint can only be restored before the first iteration")
        if self._built:
            self._apply_checkpoint(dict(state))
        else:
            self._restore_from = dict(state)
            self._enable_checkpointing = True

    def _initial_reader_states(self) -> None:
        """Record where the readers start, so that a checkpoint taken before the first
        iteration restores their order (their shuffling draws from their own seeds)."""
        if self._enable_checkpointing:
            for name, kernel in self._readers().items():
                self._reader_states.setdefault(name, kernel.state_dict())  # type: ignore[attr-defined]

    def _apply_checkpoint(self, state: Mapping[str, Any]) -> None:
        readers = self._readers()
        for name, reader_state in state.get("readers", {}).items():
            if name not in readers:
                raise RuntimeError(f"checkpoint names reader {name!r}, absent from this pipeline")
            readers[name].load_state_dict(reader_state)  # type: ignore[attr-defined]
        seeds = state.get("seeds", {})
        absent = sorted(set(seeds) - set(self._seeds))
        if absent:
            raise RuntimeError(
                f"checkpoint names operator(s) {', '.join(map(repr, absent))}, absent from this "
                "pipeline"
            )
        # in place: the executor reads the same mapping at every iteration
        self._seeds.update({name: int(seed) for name, seed in seeds.items()})
        self._restored_iteration = int(state.get("iteration", 0))
        self._queue.restart_at(self._restored_iteration)
        self._epoch_idx = int(state.get("epoch_idx", 0))
        self._iteration_in_epoch = int(state.get("iteration_in_epoch", 0))
        for kernel in self._all_kernels():
            restore = getattr(kernel, "restore_position", None)
            if restore is not None:
                restore(self._epoch_idx, self._iteration_in_epoch)
        self._iterator_data = str(state.get("iterator_data", ""))
        self._is_restored = True
        self._reader_states.update(state.get("readers", {}))
