"""How the objects a pipeline owns refer back to it: weakly, so that a dropped pipeline is freed
by its reference count alone and closes its threads, worker processes and files at once (a
reference cycle would keep them until the garbage collector runs, maybe never before the next
pipeline is made)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["weak_method"]


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
