"""DALI's ``nvidia.dali._multiproc`` path: its worker pool's interface (``pool.WorkerPool``,
``messages.TaskArgs``, ``messages.SampleRange``), over feedline's
:class:`~feedline.core.workers.WorkerPool`, for programs and tests that drive the pool directly."""
