"""Family ``python``: schemas and registration of the operators that run the user's Python code.

``external_source`` (data fed from Python) and ``python_function`` (a function run in the
pipeline). Kernels (imported on first use): :mod:`.external_source` and :mod:`.function`
(which also holds the :func:`~feedline.operators.cpu.python.function.operator` decorator).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "CYCLE_MODES",
    "EXTERNAL_SOURCE",
    "KERNELS",
    "PYTHON_FUNCTION",
    "SCHEMAS",
    "accepted_arg_count",
    "check_external_source",
    "classify_source",
    "feedline_register_operators",
    "python_function_outputs",
]


# What an ``external_source`` source is, and DALI's rules for it, checked when the operator is
# called (before any pipeline is built), as DALI checks them. Kinds: ``callable``,
# ``generator_function``, ``iterable`` (``iter()`` is called again when it cycles) and ``push``
# (no source: ``feed_input``).

CYCLE_MODES = {
    None: "no",
    False: "no",
    "no": "no",
    True: "quiet",
    "quiet": "quiet",
    "raise": "raise",
}
"""``cycle`` values → the mode: ``no`` (stop at the end), ``quiet`` (restart), ``raise`` (raise
StopIteration at the end, then restart)."""

_REFUSED_KINDS = {
    inspect.Parameter.VAR_POSITIONAL: "var-positional argument `*{}`",
    inspect.Parameter.VAR_KEYWORD: "var-keyword argument `**{}`",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only argument `{}`",
}

_ARITY_MESSAGE = (
    "The `source` callable must accept either 0 or 1 positional arguments to indicate whether it "
    "accepts the batch or sample indexing information."
)


def accepted_arg_count(source: Any) -> int:
    """How many arguments ``source`` takes (0 or 1), with DALI's rules.

    Raises:
        TypeError: it takes ``*args``, ``**kwargs``, a keyword-only parameter, or more than one
            parameter.
    """
    function = source
    if not (inspect.isfunction(source) or inspect.ismethod(source)) and callable(source):
        function = source.__call__
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return 1
    for p in parameters:
        refused = _REFUSED_KINDS.get(p.kind)
        if refused is not None:
            found = refused.format(p.name)
            raise TypeError(f"{_ARITY_MESSAGE} Found {found} which is not allowed.")
    if len(parameters) > 1:
        raise TypeError(
            f"{_ARITY_MESSAGE} Found more than one positional argument, which is not allowed."
        )
    return len(parameters)


def _is_generator_function(source: Any) -> bool:
    """A generator function, a partial of one, or an object whose ``__call__`` is one."""
    if inspect.isgeneratorfunction(source):
        return True
    if isinstance(source, functools.partial):
        return _is_generator_function(source.func)
    if source is None or inspect.isfunction(source) or inspect.ismethod(source):
        return False
    return callable(source) and inspect.isgeneratorfunction(source.__call__)


def classify_source(source: Any, cycle: Any, what: str) -> tuple[str, int]:
    """The kind of a source (see the module docstring) and, for a callable, its arity.

    Raises:
        TypeError: a bad callable signature, a generator object to cycle, or a source that is
            neither callable nor iterable.
        ValueError: an unknown ``cycle`` value, or ``cycle`` given for a callable.
    """
    if cycle not in CYCLE_MODES:
        raise ValueError(
            f"{what}: Invalid value {cycle!r} for the argument `cycle`: use 'no', False or None "
            "(no cycling), 'quiet' or True (rewind quietly), 'raise' (StopIteration at each "
            "rewind)"
        )
    if source is None:
        return "push", 0
    if _is_generator_function(source):
        return "generator_function", 0
    if inspect.isgenerator(source) and CYCLE_MODES[cycle] != "no":
        raise TypeError(
            f"{what}: Cannot cycle through a generator - if the generator is a result of calling "
            "a generator function, pass that function instead as `source`."
        )
    if hasattr(source, "__iter__"):
        return "iterable", 0
    if not callable(source):
        raise TypeError(
            f"{what}: The `source` must be callable, iterable or a parameterless generator "
            f"function, got {type(source).__name__}"
        )
    if cycle is not None:
        raise ValueError(
            f"{what}: The argument `cycle` can only be specified if `source` is iterable."
        )
    return "callable", accepted_arg_count(source)


def check_external_source(args: Mapping[str, Any]) -> None:
    """DALI's checks of an ``external_source`` call's arguments, made when it is called.

    Raises:
        TypeError: a bad source for its mode (see :func:`classify_source`; a parallel source
            that takes no argument, or a parallel iterable or generator function without
            ``batch=True``).
        ValueError: ``prefetch_queue_depth`` or ``bytes_per_sample_hint`` without ``parallel``,
            or below 1.
    """
    what = "external_source"
    kind, arity = classify_source(args["source"], args["cycle"], what)
    depth, hint = args["prefetch_queue_depth"], args["bytes_per_sample_hint"]
    if not args["parallel"]:
        for value, name in ((depth, "prefetch_queue_depth"), (hint, "bytes_per_sample_hint")):
            if value is not None:
                raise ValueError(
                    f"{what}: The argument `{name}` is valid only for parallel external sources "
                    "(when ``parallel`` is True)."
                )
        return
    if hint is not None and min(hint, default=1) < 1:
        raise ValueError(
            f"{what}: ``bytes_per_sample_hint`` must be a positive integer, got {hint}."
        )
    if depth is not None and depth < 1:
        raise ValueError(
            f"{what}: ``prefetch_queue_depth`` must be a positive integer, got {depth}."
        )
    if kind == "callable" and arity == 0:
        raise TypeError(
            f"{what}: Callable passed to External Source in parallel mode (when `parallel=True`) "
            "must accept exactly one argument: `feedline.types.SampleInfo` if run with "
            "`batch=False` or either `feedline.types.BatchInfo` or integer that represents the "
            "index of the batch within the epoch if `batch=True`. Got a callable that does not "
            "accept arguments instead."
        )
    if kind in ("iterable", "generator_function") and not args["batch"]:
        source = "an iterable" if kind == "iterable" else "a generator function"
        raise TypeError(
            f"{what}: Parallel external source with {source} must be run in a batch mode "
            "(specify `batch=True` in the external source definition and make sure your source "
            "returns batches)"
        )


def _es_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    count = args.get("num_outputs")
    return ("output",) if count is None else tuple(f"output{i}" for i in range(count))


EXTERNAL_SOURCE = OpSchema(
    "external_source",
    """Feed data from Python: a callable, an iterable, a generator function, or `feed_input`.

    Source kinds (``source`` may also be the first positional argument): a callable with no
    argument is called once per iteration; with one argument it receives the iteration index
    (``batch=True``), a ``BatchInfo`` (``batch_info=True``) or, with ``batch=False``, a
    ``SampleInfo`` once per sample (a callable without arguments is then called once per
    sample). An iterable is iterated once (``next`` per iteration, or per sample with
    ``batch=False``); with ``cycle`` it is iterated again with a new ``iter()`` (so an object
    whose ``__iter__`` restarts it cycles); a generator function is called to get a fresh
    iterator on each cycle. Without a source, data is pushed with
    ``Pipeline.feed_input(name, data)``. Bad sources are refused when the operator is called, as
    in DALI: a callable taking more than one parameter, or a keyword-only one, ``*args`` or
    ``**kwargs`` (TypeError); ``prefetch_queue_depth`` without ``parallel`` (ValueError).

    Raising StopIteration ends the epoch: the iteration is dropped, already prefetched iterations
    are still delivered, then ``Pipeline.outputs()`` raises StopIteration until ``reset()``;
    counters (``iteration``, ``idx_in_epoch``) restart at 0 and ``epoch_idx`` increments.
    A batch may be smaller than the pipeline's batch size (variable batch size), never larger.""",
    outputs=_es_outputs,
    output_list=lambda args: args.get("num_outputs") is not None,
    args=(
        ArgSpec("source", "any", None, "The data source (see above); None for push mode."),
        ArgSpec("num_outputs", "int", None, "Outputs per call; the source returns a tuple."),
        ArgSpec(
            "batch",
            "bool",
            None,
            "Whether the source returns whole batches (default True; False with parallel).",
        ),
        ArgSpec("batch_info", "bool", False, "Pass a BatchInfo instead of the iteration index."),
        ArgSpec(
            "cycle",
            "any",
            None,
            "For iterables: None/False/'no' stop at the end, True/'quiet' restart silently, "
            "'raise' raise StopIteration then restart.",
        ),
        ArgSpec("layout", "any", None, "Layout of the data, or one per output."),
        ArgSpec("dtype", "any", None, "Expected data type (checked), or one per output."),
        ArgSpec("ndim", "any", None, "Expected sample ndim (checked), or one per output."),
        ArgSpec(
            "no_copy",
            "bool",
            False,
            "Keep references to the source's arrays instead of copying them.",
        ),
        ArgSpec(
            "parallel",
            "bool",
            False,
            "Run the source in the pipeline's Python worker processes (py_num_workers).",
        ),
        ArgSpec(
            "prefetch_queue_depth",
            "int",
            None,
            "With parallel: batches computed ahead per source (default 1; an error without "
            "parallel).",
        ),
        ArgSpec(
            "bytes_per_sample_hint",
            "int_vec",
            None,
            "With parallel: DALI's initial shared-memory size per sample. Checked (positive) "
            "but not needed: feedline sizes each shared-memory segment from the batch it holds.",
        ),
        ArgSpec(
            "repeat_last",
            "bool",
            False,
            "Push mode: reuse the last fed batch when nothing new was fed.",
        ),
    ),
    random=False,
    positional_args=("source",),
    check=check_external_source,
)


def python_function_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Output names of ``python_function``: one per ``num_outputs``.

    Raises:
        ValueError: ``num_outputs`` is negative.
    """
    count = args["num_outputs"]
    if count < 0:
        raise ValueError(f"python_function: num_outputs must be non-negative, got {count}")
    return tuple(f"output_{i}" for i in range(count))


PYTHON_FUNCTION = OpSchema(
    name="python_function",
    doc=(
        "Runs a Python function on the inputs (NumPy arrays, writable copies of its own).\n\n"
        "Per sample (default) the function is mapped over the batch on the pipeline's thread "
        "pool, in parallel; with ``batch_processing=True`` it is called once per batch with "
        "one list of arrays per input and returns lists (or arrays with the batch as outer "
        "dimension). With ``num_outputs > 1`` it returns a tuple. Never pruned; pipelines "
        "using it cannot be serialized."
    ),
    inputs=(InputSpec("input", "Inputs passed to the function.", optional=True, variadic=True),),
    outputs=python_function_outputs,
    args=(
        ArgSpec("function", "callable", REQUIRED, "The function to run."),
        ArgSpec("num_outputs", "int", 1, "Number of outputs (0 for side effects only)."),
        ArgSpec("batch_processing", "bool", False, "Call once per batch instead of per sample."),
        ArgSpec(
            "output_layouts",
            "str_vec",
            None,
            "Layout of each output; missing entries mean no layout.",
        ),
    ),
    no_prune=True,
    serializable=False,
    random=False,
)

SCHEMAS = (EXTERNAL_SOURCE, PYTHON_FUNCTION)

_KERNELS = "feedline.operators.cpu.python"
KERNELS = {
    "external_source": f"{_KERNELS}.external_source:ExternalSourceKernel",
    "python_function": f"{_KERNELS}.function:python_function_kernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the Python operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
