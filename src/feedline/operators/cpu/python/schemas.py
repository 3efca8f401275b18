"""Family ``python``: schemas and registration of the operators that run the user's Python code.

``external_source`` (data fed from Python) and ``python_function`` (a function run in the
pipeline). Kernels (imported on first use): :mod:`.external_source` and :mod:`.function`
(which also holds the :func:`~feedline.operators.cpu.python.function.operator` decorator).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators
from feedline.operators.cpu.python.sources import check_external_source

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "EXTERNAL_SOURCE",
    "KERNELS",
    "PYTHON_FUNCTION",
    "SCHEMAS",
    "feedline_register_operators",
    "python_function_outputs",
]


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
            "repeat_last",
            "bool",
            False,
            "Push mode: reuse the last fed batch when nothing new was fed.",
        ),
    ),
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
        "Runs a Python function on the inputs (NumPy arrays, read-only).\n\n"
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
