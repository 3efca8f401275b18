"""Family ``python``: schemas and registration of the operators that run the user's Python code.

``external_source`` (data fed from Python), ``python_function`` (a function run in the
pipeline), ``dl_tensor_python_function`` (the same on DLPack capsules) and
``experimental.numba_function`` (a Numba-compiled function). Kernels (imported on first use):
:mod:`.external_source`, :mod:`.function` (which also holds the
:func:`~feedline.operators.cpu.python.function.operator` decorator), :mod:`.dlpack_function` and
:mod:`.numba_function`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from feedline.core.hookspecs import hookimpl
from feedline.core.pipeline.conditionals.markers import is_converted
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "CYCLE_MODES",
    "DL_TENSOR_PYTHON_FUNCTION",
    "EXTERNAL_SOURCE",
    "KERNELS",
    "NUMBA_FUNCTION",
    "NUMBA_MAX_ARRAYS",
    "PYTHON_FUNCTION",
    "SCHEMAS",
    "accepted_arg_count",
    "as_list",
    "check_external_source",
    "check_numba_function",
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
            or below 1; a parallel source transformed for conditionals (it could not be sent
            to the workers as the user wrote it).
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
    if is_converted(args["source"]):
        raise ValueError(
            f"{what}: The `source` parameter that was passed to external source was created in a "
            "scope that was converted for conditionals (`enable_conditionals=True`). To allow the "
            "`source` to be correctly used with parallel external source, it must remain "
            "unconverted: define the `source` (or the factory that creates it) at module level, "
            "outside the pipeline function, and decorate a factory called inside the pipeline "
            "function with `@feedline.pipeline.do_not_convert`."
        )


def _es_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    count = args.get("num_outputs")
    return ("output",) if count is None else tuple(f"output{i}" for i in range(count))


EXTERNAL_SOURCE = OpSchema(
    "external_source",
    """Feed data from Python: a callable, an iterable, a generator function, or `feed_input`.

    ``source`` and ``num_outputs`` may also be given positionally, in that order. Source kinds:
    a callable with no argument is called once per iteration; with one argument it receives the
    iteration index (``batch=True``), a ``BatchInfo`` (``batch_info=True``) or, with
    ``batch=False``, a ``SampleInfo`` once per sample (a callable without arguments is then
    called once per sample). An iterable is iterated once (``next`` per iteration, or per sample
    with ``batch=False``); with ``cycle`` it is iterated again with a new ``iter()`` (so an
    object whose ``__iter__`` restarts it cycles); a generator function is called to get a fresh
    iterator on each cycle. Without a source, data is pushed with ``Pipeline.feed_input(name,
    data)``. Bad sources are refused when the operator is called, as in DALI: a callable taking
    more than one parameter, or a keyword-only one, ``*args`` or ``**kwargs`` (TypeError);
    ``prefetch_queue_depth`` without ``parallel`` (ValueError).

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
            "With parallel: the expected bytes of one sample (a list: per output, added up). "
            "The workers start with shared memory for a task's share of the batch at this size "
            "(at least 1 MiB), so that the first batches need no new segment; memory grows "
            "later when a result does not fit.",
        ),
        ArgSpec(
            "repeat_last",
            "bool",
            False,
            "Push mode: reuse the last fed batch when nothing new was fed.",
        ),
        ArgSpec(
            "blocking",
            "bool",
            False,
            "Push mode: an iteration with nothing fed waits for ``feed_input`` (from another "
            "thread) instead of failing; closing the pipeline ends the wait.",
        ),
    ),
    random=False,
    positional_args=("source", "num_outputs"),
    check=check_external_source,
    debug_unused=("parallel", "prefetch_queue_depth", "bytes_per_sample_hint"),
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
            "layouts",
            None,
            "Layout of each output (missing entries mean no layout), or one layout string for "
            "every output.",
        ),
    ),
    no_prune=True,
    serializable=False,
    random=False,
    input_sets=False,
)

DL_TENSOR_PYTHON_FUNCTION = OpSchema(
    name="dl_tensor_python_function",
    doc=(
        "Runs a Python function on DLPack tensors: ``python_function`` whose function receives "
        "each input as a DLPack capsule and returns DLPack capsules (or objects with "
        "``__dlpack__``, such as NumPy arrays or torch tensors).\n\n"
        "With ``batch_processing`` (the default of DALI's ``fn`` call) it is called once per "
        "batch with one list of capsules per input and returns one list per output; otherwise "
        "once per sample, on the pipeline's thread pool. Capsules share the input's memory "
        "where it is writable (a copy otherwise); the function must not modify them. Never "
        "pruned; pipelines using it cannot be serialized."
    ),
    inputs=(InputSpec("input", "Inputs passed to the function.", optional=True, variadic=True),),
    outputs=python_function_outputs,
    args=(
        *PYTHON_FUNCTION.args[:2],
        ArgSpec(
            "batch_processing",
            "bool",
            True,
            "Call once per batch with lists of capsules (DALI's fn call passes True unless told "
            "otherwise, whatever its documentation says) instead of once per sample.",
        ),
        *PYTHON_FUNCTION.args[3:],
        ArgSpec(
            "synchronize_stream",
            "bool",
            True,
            "For GPU data, wait for the pipeline's stream before calling the function. CPU "
            "inputs are complete when the function is called, so on the CPU it changes nothing.",
        ),
    ),
    no_prune=True,
    serializable=False,
    random=False,
    input_sets=False,
)

#: The most inputs and outputs DALI's ``numba_function`` passes to ``run_fn``.
NUMBA_MAX_ARRAYS = 6


def as_list(value: Any) -> list[Any]:
    """A ``numba_function`` type or ndim argument as a list (DALI accepts one bare value)."""
    return list(value) if isinstance(value, list | tuple) else [value]


def check_numba_function(args: Mapping[str, Any]) -> None:
    """DALI's checks of a ``numba_function`` call's arguments, made when it is called.

    Raises:
        ValueError: type and ndim lists of different lengths, more than six inputs or outputs,
            a type that is not a :class:`DataType`, FLOAT16, or bad ``blocks``/
            ``threads_per_block``.
    """
    for kind in ("in", "out"):
        types, ndims = as_list(args[f"{kind}_types"]), as_list(args[f"{kind}s_ndim"])
        where = "input" if kind == "in" else "output"
        if len(types) != len(ndims):
            raise ValueError(
                f"numba_function: Number of {where} types and {where} dimensions should match "
                f"({len(types)} {kind}_types, {len(ndims)} {kind}s_ndim)."
            )
        if len(types) > NUMBA_MAX_ARRAYS:
            raise ValueError(
                f"numba_function: at most {NUMBA_MAX_ARRAYS} {where}s, got {len(types)}"
            )
        for dtype in types:
            if not isinstance(dtype, DataType):
                raise ValueError(f"numba_function: {kind}_types holds {dtype!r}, not a DALI type")
            if dtype == DataType.FLOAT16:
                raise ValueError("numba_function: Numba does not support float16")
        if any(not isinstance(n, int) or n < 0 for n in ndims):
            raise ValueError(f"numba_function: {kind}s_ndim must be non-negative ints: {ndims}")
    for name in ("blocks", "threads_per_block"):
        value = args[name]
        if value is not None and (len(value) != 3 or min(value) <= 0):
            raise ValueError(f"numba_function: {name} needs 3 positive numbers, got {value}")


def _numba_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(f"output_{i}" for i in range(len(as_list(args["out_types"]))))


NUMBA_FUNCTION = OpSchema(
    name="experimental.numba_function",
    doc=(
        "Runs a Numba-compiled function (DALI's ``numba_function``; needs the ``numba`` extra)."
        "\n\n"
        "``run_fn(out0, ..., in0, ...)`` gets the output arrays to fill (uninitialised) and "
        "the inputs; it is compiled with ``numba.njit`` when the pipeline is built and runs "
        "per sample on the thread pool without the GIL, or once per batch with lists of "
        "arrays (``batch_processing``). Output shapes are the inputs' unless "
        "``setup_fn(out_shapes, in_shapes)`` writes them: one ``(samples, ndim)`` int64 array "
        "per output and per input. Inputs must have the declared types and dimensions."
    ),
    inputs=(InputSpec("input", "Inputs of run_fn (up to six).", variadic=True),),
    outputs=_numba_outputs,
    args=(
        ArgSpec("run_fn", "callable", REQUIRED, "The function, ``run_fn(*outputs, *inputs)``."),
        ArgSpec("out_types", "any", REQUIRED, "DALI type of each output (or one type)."),
        ArgSpec("in_types", "any", REQUIRED, "DALI type of each input (or one type)."),
        ArgSpec("outs_ndim", "any", REQUIRED, "Dimensions of each output (or one number)."),
        ArgSpec("ins_ndim", "any", REQUIRED, "Dimensions of each input (or one number)."),
        ArgSpec(
            "setup_fn",
            "callable",
            None,
            "``setup_fn(out_shapes, in_shapes)`` fills the output shapes (per batch).",
        ),
        ArgSpec(
            "batch_processing",
            "bool",
            False,
            "Call ``run_fn`` once per batch with a list of arrays per output and input.",
        ),
        ArgSpec(
            "blocks",
            "int_vec",
            None,
            "CUDA grid (3 numbers) for device='gpu'; checked, and not used on the CPU (as in "
            "DALI, so one set of arguments serves both devices).",
        ),
        ArgSpec(
            "threads_per_block",
            "int_vec",
            None,
            "CUDA block (3 numbers) for device='gpu'; checked, and not used on the CPU.",
        ),
    ),
    no_prune=True,
    serializable=False,
    random=False,
    check=check_numba_function,
)

SCHEMAS = (EXTERNAL_SOURCE, PYTHON_FUNCTION, DL_TENSOR_PYTHON_FUNCTION, NUMBA_FUNCTION)

_KERNELS = "feedline.operators.cpu.python"
KERNELS = {
    "external_source": f"{_KERNELS}.external_source:ExternalSourceKernel",
    "python_function": f"{_KERNELS}.function:python_function_kernel",
    "dl_tensor_python_function": f"{_KERNELS}.dlpack_function:dl_tensor_function_kernel",
    "experimental.numba_function": f"{_KERNELS}.numba_function:NumbaFunctionKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the Python operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
