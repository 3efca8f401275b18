"""The ``@pipeline_def`` decorator: a graph-defining function becomes a pipeline factory."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from feedline.core.pipeline.debug import DebugPipeline
from feedline.core.pipeline.pipeline import Pipeline

__all__ = ["pipeline_def"]

_PIPELINE_PARAMS = set(inspect.signature(Pipeline.__init__).parameters) - {"self"}
DO_NOT_CONVERT_MARK = "_feedline_do_not_convert"
"""Attribute that :func:`~feedline.pipeline.do_not_convert` sets on the functions it marks."""


def pipeline_def(fn: Callable[..., Any] | None = None, **pipeline_kwargs: Any) -> Any:
    """Turn a graph-defining function into a pipeline factory.

    Calling the decorated function creates a :class:`~feedline.core.pipeline.Pipeline` and runs
    the function inside it. A keyword argument named like a parameter of the function goes to
    the function (shadowing a Pipeline argument of the same name, with a warning); any other
    keyword goes to the Pipeline constructor and overrides the decorator's values. A returned
    tuple means several outputs; anything else is one output. With ``debug=True`` the function
    runs again in every iteration, with the batches (see :mod:`~feedline.core.pipeline.debug`).

    Raises:
        TypeError: (when the factory is called) the function takes ``**kwargs``, which could
            not be told apart from Pipeline arguments.
        ValueError: the function is marked with ``@do_not_convert``.

    ``enable_conditionals=True`` (given to the decorator or to the call) transforms the function
    so that ``if``/``and``/``or``/``not`` on per-sample DataNodes run each branch on the samples
    that take it (see ``docs/conditionals.md``); in debug mode too, where each branch then shows
    the batch of the samples that take it.
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        if getattr(func, DO_NOT_CONVERT_MARK, False):
            raise ValueError("Pipeline definition cannot be marked with @do_not_convert.")
        signature = inspect.signature(func)
        var_keyword = next(
            (p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None
        )
        func_params = set(signature.parameters)

        @functools.wraps(func)
        def create(*args: Any, **kwargs: Any) -> Any:
            if var_keyword is not None:
                raise TypeError(
                    f"Using variadic keyword argument `**{var_keyword}` in a graph-defining "
                    f"function is not allowed ({func.__name__} cannot tell its own keywords "
                    "from Pipeline arguments; name its parameters explicitly)."
                )
            ctor_params = _PIPELINE_PARAMS
            fn_kwargs = {k: v for k, v in kwargs.items() if k in func_params}
            pipe_kwargs = {**pipeline_kwargs}
            for key, value in kwargs.items():
                if key in func_params:
                    if key in ctor_params:
                        warnings.warn(
                            f"argument {key!r} of {func.__name__} shadows the Pipeline "
                            "argument of the same name; it is passed to the function",
                            UserWarning,
                            stacklevel=2,
                        )
                    continue
                pipe_kwargs[key] = value
            conditionals = "enable_conditionals" not in func_params and bool(
                pipe_kwargs.pop("enable_conditionals", False)
            )
            if "debug" not in func_params and pipe_kwargs.pop("debug", False):
                run = functools.partial(_run_function, func, conditionals, args, fn_kwargs)
                return DebugPipeline(run, **pipe_kwargs)
            pipe_kwargs.pop("debug", None)
            pipe = Pipeline(**pipe_kwargs)
            with pipe:
                result = _run_function(func, conditionals, args, fn_kwargs)
            outputs = result if isinstance(result, tuple) else (() if result is None else (result,))
            pipe.set_outputs(*outputs)
            return pipe

        create._is_pipeline_def = True  # type: ignore[attr-defined]
        return create

    return decorate(fn) if fn is not None else decorate


def _run_function(
    func: Callable[..., Any], conditionals: bool, args: Any, kwargs: dict[str, Any]
) -> Any:
    """Call the pipeline function, transformed for conditionals when they are enabled."""
    if not conditionals:
        return func(*args, **kwargs)
    # The AST transformation loads with the first conditional pipeline.
    from feedline.core.pipeline.conditionals import trace_conditionally

    return trace_conditionally(func, args, kwargs)
