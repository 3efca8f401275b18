"""What a pipeline's readers report, and checkpoints: where the consumer stands, saved as JSON
and restored before the first iteration (every reader's position, the epoch, the iteration)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from feedline.core.execution.executor import Executor
from feedline.core.execution.prefetch import IterationQueue
from feedline.core.graph import OpNode
from feedline.core.kernel import Kernel

__all__ = ["ReaderState", "parse_checkpoint"]


def parse_checkpoint(checkpoint: str | Mapping[str, Any]) -> dict[str, Any]:
    """A checkpoint given as JSON text or a dict, validated."""
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
    _epoch_idx: int
    _reader_states: dict[str, Any]

    def build(self) -> None:
        """Build the pipeline (implemented by ``Pipeline``)."""
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
            "readers": dict(self._reader_states),
        }

    def checkpoint(self, filename: str | None = None) -> str:
        """The :meth:`state_dict` as JSON (also written to ``filename`` if given)."""
        if not self._enable_checkpointing:
            raise RuntimeError("checkpointing is disabled; pass enable_checkpointing=True")
        text = json.dumps(self.state_dict())
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as handle:
                handle.write(text)
        return text

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resume from :meth:`state_dict` (before the first iteration)."""
        if self._built and (not self._queue.empty() or self._consumed):
            raise RuntimeError("a checkpoint can only be restored before the first iteration")
        if self._built:
            self._apply_checkpoint(dict(state))
        else:
            self._restore_from = dict(state)
            self._enable_checkpointing = True

    def _apply_checkpoint(self, state: Mapping[str, Any]) -> None:
        readers = self._readers()
        for name, reader_state in state.get("readers", {}).items():
            if name not in readers:
                raise RuntimeError(f"checkpoint names reader {name!r}, absent from this pipeline")
            readers[name].load_state_dict(reader_state)  # type: ignore[attr-defined]
        self._restored_iteration = int(state.get("iteration", 0))
        self._queue.restart_at(self._restored_iteration)
        self._epoch_idx = int(state.get("epoch_idx", 0))
        self._reader_states = dict(state.get("readers", {}))
