"""Conditionals: ``if``/``elif``/``else``, ``and``/``or``/``not`` on per-sample DataNodes in a
pipeline function decorated with ``@pipeline_def(enable_conditionals=True)``.

The function is transformed (:mod:`.transform`, :mod:`.convert`) so that Python's decisions go
through :mod:`.runtime`: a DataNode condition traces both branches, each on the samples that take
it (:mod:`.scopes` splits the batches), and merges the variables they assign back in sample
order; any other condition runs as plain Python.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from feedline.core.graph.hooks import graph_hook
from feedline.core.pipeline.conditionals.convert import converted, do_not_convert, is_converted
from feedline.core.pipeline.conditionals.explain import explained
from feedline.core.pipeline.conditionals.scopes import ConditionStack

__all__ = ["do_not_convert", "is_converted", "trace_conditionally"]


def trace_conditionally(
    func: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> Any:
    """Run the pipeline function ``func`` transformed, tracing its conditionals.

    An error raised inside is raised again with the user's frames in its message (see
    :mod:`.explain`). (``@pipeline_def`` refuses a function marked with :func:`do_not_convert`.)
    """
    function = converted(func, force=True)
    try:
        with graph_hook(ConditionStack()):
            return function(*args, **kwargs)
    except Exception as error:
        rebuilt = explained(error)
        if rebuilt is error:
            raise
        raise rebuilt from error
