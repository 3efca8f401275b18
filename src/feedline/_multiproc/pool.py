"""DALI's ``nvidia.dali._multiproc.pool.WorkerPool``: a pool made from external-source groups,
scheduled and received by context index, over feedline's
:class:`~feedline.core.workers.WorkerPool`.

As DALI's pool does, it refuses a per-sample callback's result that is not an array (a NumPy
array, or an object with ``__array__`` or ``__dlpack__``) or a tuple or list of them, with
DALI's "Unsupported callback return type" error.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from feedline._multiproc.messages import TaskArgs
from feedline._utils.external_source_impl import SourceDescription, SourceKind
from feedline.core.workers import WorkerPool as _Pool
from feedline.core.workers.tasks import BatchTask, SampleBatchTask

__all__ = ["CallbackContext", "WorkerPool"]


@dataclass(frozen=True)
class CallbackContext:
    """One source of the pool.

    Attributes:
        source_desc: the source's description.
        dedicated_worker_id: the worker that runs an iterable or generator (they keep state,
            so one worker runs all their batches); None for callables.
    """

    source_desc: SourceDescription
    dedicated_worker_id: int | None


_SAMPLE_TYPE_ERROR = (
    "Unsupported callback return type. Expected NumPy array, PyTorch or MXNet cpu tensors, DALI "
    "TensorCPU, or list or tuple of them representing sample. Got `{}` instead."
)


def _check_sample(sample: Any) -> None:
    """DALI's pool rule for a sample: an array-like object (NumPy, DLPack or ``__array__``),
    or a tuple or list of them (one per output)."""
    parts = sample if isinstance(sample, (tuple, list)) else (sample,)
    for part in parts:
        if not hasattr(part, "__array__") and not hasattr(part, "__dlpack__"):
            raise TypeError(_SAMPLE_TYPE_ERROR.format(type(part)))


class _CheckedSampleCallback:
    """A per-sample callback whose results must be of the types DALI's pool accepts
    (picklable whenever the callback is, so that it can go to spawned workers)."""

    def __init__(self, callback: Any) -> None:
        self.callback = callback

    def __call__(self, *args: Any) -> Any:
        sample = self.callback(*args)
        _check_sample(sample)
        return sample


class _ProcessesView:
    """The started pool's processes as DALI's process pool shows them (``_processes`` with a
    ``pid`` each, the ``_observer`` whose ``thread`` watches them)."""

    def __init__(self, pool: _Pool) -> None:
        resources = pool.pool
        self._processes = [] if resources is None else list(resources.workers)
        self._observer = None if resources is None else resources._observer

    def pids(self) -> list[int]:
        """Process ids of the workers."""
        return [process.pid for process in self._processes]


class WorkerPool:
    """Worker processes running the callbacks of parallel external sources (DALI's interface).

    Made with :meth:`from_groups`; ``schedule_batch``/``receive_batch`` take the index of the
    source (its context) in the groups given.
    """

    def __init__(self, contexts: Sequence[CallbackContext], pool: _Pool) -> None:
        self.contexts = list(contexts)
        self._pool = pool

    @classmethod
    def from_groups(
        cls,
        groups: Sequence[Any],
        keep_alive_queue_size: int,
        batch_size: int | None = None,
        start_method: str = "fork",
        num_workers: int = 1,
        min_initial_chunk_size: int = 1024 * 1024,
        py_callback_pickler: Any = None,
    ) -> WorkerPool:
        """Start a pool for ``groups`` (objects with ``source_desc``, ``batch`` and
        ``prefetch_queue_depth``, one per parallel external source).

        Args:
            groups: the sources.
            keep_alive_queue_size: batches received and still in use; with a group's
                ``prefetch_queue_depth``, the most batches of a source scheduled at once.
            batch_size: the most samples of a batch (sizes the shared memory at start).
            start_method: ``"fork"`` or ``"spawn"``.
            num_workers: worker processes; only as many as there are sources when every
                source is an iterable or generator (with a warning, as DALI gives).
            min_initial_chunk_size: the least bytes of a result slot at start.
            py_callback_pickler: ``"spawn"`` only: the pickler of the callbacks.

        Raises:
            RuntimeError: no group, ``num_workers`` below 1, or an iterable or generator
                source not in batch mode.
        """
        if not groups:
            raise RuntimeError(
                "Cannot create Python workers pool because there are no callbacks provided"
            )
        if num_workers < 1:
            raise RuntimeError(
                "Number of Python workers for parallel ExternalSource must be positive"
            )
        iterable = [g.source_desc.kind is not SourceKind.CALLABLE for g in groups]
        if any(it and not g.batch for it, g in zip(iterable, groups, strict=True)):
            raise RuntimeError(
                "Parallel external source with iterator or generator must run in batch mode"
            )
        if all(iterable) and num_workers > len(groups):
            warnings.warn(
                f"There will be run only {len(groups)} python worker(s), even though "
                f"{num_workers} were specified to run: every callback is stateful (an iterator "
                "or generator) and there are fewer of them than ``py_num_workers``",
                Warning,
                stacklevel=2,
            )
            num_workers = len(groups)
        pickler = py_callback_pickler if start_method == "spawn" else None
        pool = _Pool(num_workers, start_method, callback_pickler=pickler)
        contexts = []
        for index, (group, is_iterable) in enumerate(zip(groups, iterable, strict=True)):
            desc = group.source_desc
            kind = "iterable" if is_iterable else ("batch" if group.batch else "sample")
            dedicated = sum(iterable[:index]) % num_workers if is_iterable else None
            callback = _CheckedSampleCallback(desc.source) if kind == "sample" else desc.source
            pool.add_source(
                index,
                callback,
                kind=kind,
                prefetch=max(1, keep_alive_queue_size + (group.prefetch_queue_depth or 0)),
                cycle=desc.cycle or "no",
                batch_size=batch_size,
                bytes_per_sample=None
                if batch_size is None
                else -(-min_initial_chunk_size // batch_size),
            )
            contexts.append(CallbackContext(desc, dedicated))
        try:
            pool.start()
        except BaseException:
            pool.close()
            raise
        return cls(contexts, pool)

    @property
    def pool(self) -> _ProcessesView:
        """The worker processes."""
        return _ProcessesView(self._pool)

    def pids(self) -> list[int]:
        """Process ids of the workers."""
        return self._pool.pids()

    def schedule_batch(self, context_i: int, work_batch: TaskArgs) -> None:
        """Ask for a batch of source ``context_i``.

        Raises:
            ValueError: a batch callback's task does not carry exactly one argument.
        """
        if work_batch.sample_range is not None:
            task: SampleBatchTask | BatchTask = SampleBatchTask(
                work_batch.sample_range.sample_infos()
            )
        else:
            args = work_batch.batch_args or ()
            iterable = self.contexts[context_i].source_desc.kind is not SourceKind.CALLABLE
            if not iterable and len(args) != 1:
                raise ValueError(
                    f"a batch callback takes one argument (the iteration or BatchInfo), the task "
                    f"carries {len(args)}"
                )
            task = BatchTask(args[0] if args else None)
        self._pool.schedule(context_i, task)

    def receive_batch(self, context_i: int) -> Any:
        """The oldest batch scheduled for source ``context_i`` (its samples)."""
        return self._pool.receive(context_i)

    def reset(self) -> None:
        """Drop what is scheduled, for every source (a new epoch)."""
        self._pool.reset()

    def reset_context(self, context_i: int) -> None:
        """Drop what is scheduled for source ``context_i``."""
        self._pool.reset(context_i)

    def close(self) -> None:
        """Stop the workers and release the shared memory."""
        self._pool.close()
