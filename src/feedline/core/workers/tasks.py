"""What a :class:`~feedline.core.workers.WorkerPool` is given and gives back: the tasks a
caller schedules, the source description a worker receives, and the errors ``receive`` raises."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "BatchTask",
    "CallbackError",
    "Cycle",
    "Kind",
    "SampleBatchTask",
    "Spec",
    "WorkerDiedError",
    "WorkerError",
]

Kind = Literal["sample", "batch", "iterable"]
Cycle = Literal["no", "quiet", "raise"]
Spec = tuple[str, Any, int | None, str]
"""A source as a worker sees it: ``(kind, callback or iterable, num_outputs, cycle)``."""


class WorkerError(RuntimeError):
    """A worker of a :class:`WorkerPool` failed; ``worker`` is its index, ``pid`` its process."""

    def __init__(self, message: str, *, worker: int, pid: int | None) -> None:
        super().__init__(message)
        self.worker = worker
        self.pid = pid


class CallbackError(WorkerError):
    """A callback raised in a worker; the message holds the worker's formatted traceback.

    Attributes:
        source_id: the source whose callback raised.
        sample_index: index of the failing sample in its batch (None in batch/iterable mode).
        remote_traceback: the traceback as formatted in the worker.
    """

    def __init__(
        self,
        message: str,
        *,
        worker: int,
        pid: int | None,
        source_id: int,
        sample_index: int | None,
        remote_traceback: str,
    ) -> None:
        super().__init__(message, worker=worker, pid=pid)
        self.source_id = source_id
        self.sample_index = sample_index
        self.remote_traceback = remote_traceback


class WorkerDiedError(WorkerError):
    """A worker process ended unexpectedly; ``exitcode`` < 0 means killed by that signal."""

    def __init__(self, message: str, *, worker: int, pid: int | None, exitcode: int | None):
        super().__init__(message, worker=worker, pid=pid)
        self.exitcode = exitcode


@dataclass(frozen=True)
class SampleBatchTask:
    """One batch of a per-sample source: the ``SampleInfo`` of each sample, in batch order."""

    samples: Sequence[Any]


@dataclass(frozen=True)
class BatchTask:
    """One batch of a batch or iterable source.

    ``info`` (an iteration number or ``BatchInfo``) is the argument of a batch callback; an
    iterable source takes no argument and ``info`` only names the batch in error messages.
    """

    info: Any = None
