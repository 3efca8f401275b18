"""DALI's ``nvidia.dali._multiproc.messages``: the work a pool is asked to do."""

from __future__ import annotations

from typing import Any

from feedline.core.types import SampleInfo

__all__ = ["SampleRange", "TaskArgs"]


class SampleRange:
    """Consecutive samples of one batch of a per-sample source.

    Args:
        sample_start: index in the epoch of the batch's first sample.
        sample_end: one past the index in the epoch of its last sample.
        iteration: the batch's iteration in the epoch.
        epoch_idx: the epoch.
        slice_start: first sample of the range to compute, relative to ``sample_start``.
        slice_end: one past the last one (None: to the end).
    """

    def __init__(
        self,
        sample_start: int,
        sample_end: int,
        iteration: int,
        epoch_idx: int,
        *,
        slice_start: int = 0,
        slice_end: int | None = None,
    ) -> None:
        self.sample_start = sample_start
        self.sample_end = sample_end
        self.iteration = iteration
        self.epoch_idx = epoch_idx
        self.slice_start = slice_start
        self.slice_end = sample_end - sample_start if slice_end is None else slice_end

    def __len__(self) -> int:
        return self.slice_end - self.slice_start

    def sample_infos(self) -> list[SampleInfo]:
        """The ``SampleInfo`` of each sample of the range, in order."""
        return [
            SampleInfo(self.sample_start + i, i, self.iteration, self.epoch_idx)
            for i in range(self.slice_start, self.slice_end)
        ]


class TaskArgs:
    """One batch to compute: a :class:`SampleRange` (per-sample sources) or the arguments of
    a batch callback (``()`` for iterables)."""

    def __init__(
        self,
        minibatch_i: int,
        sample_range: SampleRange | None = None,
        batch_args: tuple[Any, ...] | None = None,
    ) -> None:
        if (sample_range is None) == (batch_args is None):
            raise ValueError("TaskArgs takes either a sample_range or batch_args")
        self.minibatch_i = minibatch_i
        self.sample_range = sample_range
        self.batch_args = batch_args

    @classmethod
    def make_sample(cls, sample_range: SampleRange) -> TaskArgs:
        """The task of a per-sample source.

        Raises:
            RuntimeError: the range is empty.
        """
        if len(sample_range) <= 0:
            raise RuntimeError("Cannot schedule empty batch")
        return cls(0, sample_range=sample_range)

    @classmethod
    def make_batch(cls, batch_args: tuple[Any, ...]) -> TaskArgs:
        """The task of a batch callback (called with ``*batch_args``) or an iterable."""
        return cls(0, batch_args=tuple(batch_args))

    def is_sample_mode(self) -> bool:
        """Whether it is a per-sample task."""
        return self.sample_range is not None
