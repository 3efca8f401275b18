"""How the objects a pipeline owns refer back to it: weakly, so that a dropped pipeline is freed
by its reference count alone and closes its threads, worker processes and files at once (a
reference cycle would keep them until the garbage collector runs, maybe never before the next
pipeline is made)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["iteration_runner", "weak_method"]


def weak_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (bound to the pipeline) for the objects the pipeline owns, held weakly: what a
    pipeline owns must not refer back to it, so that a dropped pipeline is freed, and closes its
    threads and files, at once (a reference cycle would wait for the garbage collector).

    Raises:
        ReferenceError: called after the pipeline was dropped.
    """
    ref = weakref.WeakMethod(method)  # type: ignore[arg-type]

    def call(*args: Any, **kwargs: Any) -> Any:
        target = ref()
        if target is None:
            raise ReferenceError("the pipeline was dropped")
        return target(*args, **kwargs)

    return call


def iteration_runner(pipeline: Any) -> Callable[[int], Any]:
    """How the background thread runs an iteration of ``pipeline``: it holds the pipeline only
    to look up its executor and to check the outputs, not while the executor runs. So a
    pipeline dropped while an iteration runs in the background is freed at once, on the thread
    that dropped it, with its worker processes, instead of when that iteration ends.

    Raises:
        ReferenceError: called after the pipeline was dropped.
    """
    ref = weakref.ref(pipeline)

    def alive() -> Any:
        target = ref()
        if target is None:
            raise ReferenceError("the pipeline was dropped")
        return target

    def run(iteration: int) -> Any:
        executor = alive()._executor
        if executor is None:
            raise RuntimeError("the pipeline is not built")
        result = executor.run_iteration(iteration)
        del executor  # an error below must not keep it (its threads) alive in a traceback
        if result.pending is None:
            alive()._validate_outputs(result.outputs)
        return result

    return run
