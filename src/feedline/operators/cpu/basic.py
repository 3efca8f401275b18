"""Built-in plugin: ``external_source``, ``constant``, ``cast``, ``reshape`` and ``copy``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from feedline.core.hookspecs import hookimpl
from feedline.core.registry import Registry
from feedline.core.schema import ArgSpec, InputSpec, OpSchema

_KERNELS = "feedline.operators.cpu.basic_kernels"


def _es_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    count = args.get("num_outputs")
    return ("output",) if count is None else tuple(f"output{i}" for i in range(count))


EXTERNAL_SOURCE = OpSchema(
    "external_source",
    """Feed data from Python: a callable, an iterable, a generator function, or `feed_input`.

    Source kinds: a callable with no argument is called once per iteration; with one argument it
    receives the iteration index (``batch=True``), a ``BatchInfo`` (``batch_info=True``) or, with
    ``batch=False``, a ``SampleInfo`` once per sample. An iterable is iterated once (``next`` per
    iteration); a generator function is called to get a fresh iterator on each cycle. Without a
    source, data is pushed with ``Pipeline.feed_input(name, data)``.

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
            "prefetch_queue_depth", "int", 1, "With parallel: batches computed ahead per source."
        ),
        ArgSpec(
            "repeat_last",
            "bool",
            False,
            "Push mode: reuse the last fed batch when nothing new was fed.",
        ),
    ),
)

CONSTANT = OpSchema(
    "constant",
    """Produce the same constant sample in every iteration.

    Give ``fdata`` (floats) or ``idata`` (ints) with an optional ``shape`` (a single value is
    broadcast), or ``value`` (any array-like).""",
    args=(
        ArgSpec("value", "any", None, "The sample as an array-like (feedline extension)."),
        ArgSpec("fdata", "float_vec", None, "Float values (row-major)."),
        ArgSpec("idata", "int_vec", None, "Integer values (row-major)."),
        ArgSpec("shape", "int_vec", None, "Shape of the sample."),
        ArgSpec(
            "dtype",
            "dtype",
            None,
            "Output type (default FLOAT for fdata, INT32 for idata, value's own type).",
        ),
        ArgSpec("layout", "layout", "", "Layout of the sample."),
    ),
)

CAST = OpSchema(
    "cast",
    """Convert the element type.

    Float to integer rounds half away from zero and saturates to the target range; float to bool
    rounds first (0.4 → False, 0.6 → True); integer to integer saturates.""",
    inputs=(InputSpec("input", "Data to convert."),),
    args=(ArgSpec("dtype", "dtype", doc="The target type."),),
)

RESHAPE = OpSchema(
    "reshape",
    """Reinterpret each sample with a new shape (no data is moved).

    ``shape`` may contain one -1 (inferred) and 0 (keep the input extent); ``rel_shape`` scales
    input extents; ``src_dims`` picks input dimensions (-1 inserts a unit dimension). The element
    count must not change.""",
    inputs=(
        InputSpec("input", "Data to reshape."),
        InputSpec("shape_input", "Per-sample shapes as a 1-D integer input.", optional=True),
    ),
    args=(
        ArgSpec("shape", "int_vec", None, "The output shape.", tensor=True),
        ArgSpec(
            "rel_shape", "float_vec", None, "Output extents relative to the input's.", tensor=True
        ),
        ArgSpec("src_dims", "int_vec", None, "Input dimensions to keep, in order (-1 = new 1)."),
        ArgSpec("layout", "layout", None, "The output layout (default: dropped unless kept)."),
    ),
)

COPY = OpSchema(
    "copy",
    "Copy the input (a new buffer with the same content, layout and source info).",
    inputs=(InputSpec("input", "Data to copy."),),
)


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the basic operators."""
    registry.add_operator(
        EXTERNAL_SOURCE, {"cpu": "feedline.operators.cpu.external_source:ExternalSourceKernel"}
    )
    registry.add_operator(CONSTANT, {"cpu": f"{_KERNELS}:ConstantKernel"})
    registry.add_operator(CAST, {"cpu": f"{_KERNELS}:CastKernel"})
    registry.add_operator(RESHAPE, {"cpu": f"{_KERNELS}:ReshapeKernel"})
    registry.add_operator(COPY, {"cpu": f"{_KERNELS}:CopyKernel"})


__all__ = ["CAST", "CONSTANT", "COPY", "EXTERNAL_SOURCE", "RESHAPE"]
