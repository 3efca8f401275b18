"""The thread that watches the worker processes of a :class:`~feedline.core.workers.WorkerPool`.

A worker only ever exits on its own when something went wrong (a crash, a signal, the OOM
killer): the parent stops workers by closing the observer first. So the first worker process
that ends while the observer runs is a failure, and the pool cannot be used any longer. The
observer then records which worker it was and stops the others at once, as DALI's pool does,
so that no worker keeps computing, or holding memory, for a pool that can only be closed. The
pool reads :attr:`PoolObserver.first_exit` to name the worker that failed first, whichever
process end it notices first itself.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import suppress
from multiprocessing.connection import Pipe, wait
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from feedline.core.workers.handles import WorkerHandle

__all__ = ["PoolObserver"]


class PoolObserver:
    """Watches worker processes from a daemon thread until :meth:`close`.

    Args:
        workers: the started workers (their processes' sentinels are watched).

    Attributes:
        thread: the watching thread (DALI's pool has the same attribute; it is alive from
            construction until :meth:`close`, or until a worker ended and the others were
            stopped).
        first_exit: the worker whose process ended first while watched, or None.
    """

    def __init__(self, workers: Sequence[WorkerHandle]) -> None:
        self._wake_reader, self._wake_writer = Pipe(duplex=False)
        self._workers = list(workers)
        self.first_exit: WorkerHandle | None = None
        self.thread: threading.Thread | None = threading.Thread(
            target=self._watch, name="feedline-pool-observer", daemon=True
        )
        self.thread.start()

    def _watch(self) -> None:
        by_sentinel = {worker.process.sentinel: worker for worker in self._workers}
        ready = wait([*by_sentinel, self._wake_reader])
        if self._wake_reader in ready:
            return
        ended = [by_sentinel[sentinel] for sentinel in ready]
        self.first_exit = min(ended, key=lambda worker: worker.index)
        for worker in self._workers:
            if worker not in ended:
                with suppress(OSError, ValueError):
                    worker.process.terminate()

    def close(self) -> None:
        """Stop watching (before the workers are told to exit) and join the thread; idempotent.

        A call from the observer thread itself (a garbage collection that ran the pool's
        finalizer there) only wakes it.
        """
        thread, self.thread = self.thread, None
        if thread is None:
            return
        with suppress(OSError):
            self._wake_writer.send(None)
        if thread is not threading.current_thread():
            thread.join()
            self._wake_reader.close()
        self._wake_writer.close()
