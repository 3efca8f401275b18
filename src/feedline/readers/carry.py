"""A reader's carry under ``on_error="skip"``: its stream of samples, handed out in any count.

Normally a reader hands out each prepared batch as it is. When samples must be replaced (a
sample it failed to load, or one that failed further down the pipeline), the reader takes the
replacements from the front of its next prepared batches and keeps the rest here; later batches
are served from the carry first, so the stream shifts without reordering.

A reader's position with a carry is the position *before* the oldest batch in the carry plus the
number of samples of the stream used since (``{"carry": {"base": ..., "skip": k}}``): restoring
it prepares the batches again from ``base`` and drops the first ``k`` samples. Samples the reader
fails to load are left out of the stream, and loading is deterministic, so the same ``k``
samples are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from feedline.core.errors import OperatorError, SkippedSample

__all__ = ["CARRY_KEY", "Carry", "LoadFailure", "load_each"]

CARRY_KEY = "carry"
"""The key of a reader state that has a carry."""

LoadFailure = tuple[int, str, BaseException]
"""A sample a reader failed to load: its index in the prepared batch, its source, the error."""


def load_each(
    items: Sequence[Any], load: Callable[[Any], tuple[np.ndarray, ...]], info: Callable[[Any], str]
) -> tuple[list[tuple[np.ndarray, ...]], list[str], list[LoadFailure]]:
    """Load ``items`` one by one, leaving out those that fail.

    Returns:
        The loaded samples, their sources, and the failures.
    """
    samples: list[tuple[np.ndarray, ...]] = []
    infos: list[str] = []
    failures: list[LoadFailure] = []
    for index, item in enumerate(items):
        try:
            sample = load(item)
        except Exception as exc:
            failures.append((index, info(item), exc))
            continue
        samples.append(sample)
        infos.append(info(item))
    return samples, infos, failures


class Carry:
    """Samples of prepared batches not handed out yet.

    Args:
        base: the reader position before the first batch pushed here.
        num_outputs: the reader's number of outputs.
        drop: samples to discard first (restoring a position with ``skip``); the reader's load
            failures among them were recorded before the position was saved.
    """

    def __init__(self, base: dict[str, Any], num_outputs: int, drop: int = 0) -> None:
        self.base = base
        self.taken = 0
        self.drop = drop
        self._silent = drop
        self.columns: list[list[np.ndarray]] = [[] for _ in range(num_outputs)]
        self.infos: list[str] = []
        self.bad_streak = 0

    def __len__(self) -> int:
        return len(self.infos)

    def push(
        self,
        columns: Sequence[Sequence[np.ndarray]],
        infos: Sequence[str],
        failures: Sequence[LoadFailure],
        reader: str,
        iteration: int,
    ) -> list[SkippedSample]:
        """Append a prepared batch; the records of its load failures not recorded before."""
        records = []
        for position, (index, source, error) in enumerate(failures):
            stream_position = self.taken + len(self.infos) + index - position
            if stream_position >= self._silent:
                text = (
                    SkippedSample.from_error(error).error
                    if isinstance(error, OperatorError)
                    else f"{type(error).__name__}: {error}"
                )
                records.append(SkippedSample(reader, iteration, index, source, text))
        self.bad_streak = self.bad_streak + len(failures) if not infos else 0
        for column, samples in zip(self.columns, columns, strict=True):
            column.extend(samples)
        self.infos.extend(infos)
        self.drop_pending()
        return records

    def drop_pending(self) -> None:
        """Discard what is still to be dropped, as far as the carry holds samples."""
        count = min(self.drop, len(self.infos))
        if count:
            self._pop(count)
            self.drop -= count

    def take(self, count: int) -> tuple[list[list[np.ndarray]], list[str]]:
        """The first ``count`` samples (the carry must hold them), per output, and sources."""
        return self._pop(count)

    def _pop(self, count: int) -> tuple[list[list[np.ndarray]], list[str]]:
        columns = [column[:count] for column in self.columns]
        for column in self.columns:
            del column[:count]
        infos = self.infos[:count]
        del self.infos[:count]
        self.taken += count
        return columns, infos

    def empty(self) -> bool:
        """Whether nothing is carried nor still to be dropped."""
        return not self.infos and not self.drop

    def position(self) -> dict[str, Any]:
        """The reader state: the base position and the samples used since."""
        return {CARRY_KEY: {"base": self.base, "skip": self.taken + self.drop}}
