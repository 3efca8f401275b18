"""Worker processes for ``external_source(parallel=True)`` callbacks, results via shared memory.

``pool`` (the :class:`WorkerPool` and its scheduling), ``tasks`` (tasks and errors),
``process`` (the worker side), ``handles`` (the parent's records of its processes),
``segments`` (the shared-memory transport). Nothing here knows of graphs or plugins.
"""

from feedline.core.workers.pool import WorkerPool
from feedline.core.workers.tasks import (
    BatchTask,
    CallbackError,
    SampleBatchTask,
    WorkerDiedError,
    WorkerError,
)

__all__ = [
    "BatchTask",
    "CallbackError",
    "SampleBatchTask",
    "WorkerDiedError",
    "WorkerError",
    "WorkerPool",
]
