""":func:`check_operator`: what every operator must satisfy, built-in or third-party."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from feedline.core.plugins import get_plugin_system
from feedline.core.registry import OperatorEntry
from feedline.testing.gpu import has_gpu
from feedline.testing.runner import RunResult, run_operator

__all__ = ["OperatorExample", "check_operator"]


@dataclass
class OperatorExample:
    """A call of an operator that :func:`check_operator` runs.

    Attributes:
        inputs: one batch (list of samples) per positional input.
        layouts: the layout of each input.
        args: keyword arguments.
        arg_inputs: per-sample argument inputs, one batch each.
        batch_size: needed when there are no inputs (default 4).
        gpu_atol: the largest difference allowed between the CPU and GPU kernels' outputs.
    """

    inputs: Sequence[Sequence[np.ndarray]] = ()
    layouts: Sequence[str | None] = ()
    args: Mapping[str, Any] = field(default_factory=dict)
    arg_inputs: Mapping[str, Sequence[np.ndarray]] = field(default_factory=dict)
    batch_size: int | None = None
    gpu_atol: float = 0.0


def _fail(name: str, message: str) -> AssertionError:
    return AssertionError(f"operator {name!r}: {message}")


def _check_schema(name: str, entry: OperatorEntry) -> None:
    schema = entry.schema
    if schema.name != name:
        raise _fail(name, f"registered under another name than its schema's ({schema.name!r})")
    summary = schema.doc.strip().splitlines()[0].strip() if schema.doc.strip() else ""
    if not summary:
        raise _fail(name, "the schema has no doc (its first line is the summary)")
    undocumented = [a.name for a in schema.args if not a.doc.strip()]
    undocumented += [i.name for i in schema.inputs if not i.doc.strip()]
    if undocumented:
        raise _fail(name, f"undocumented arguments or inputs: {', '.join(undocumented)}")
    if not entry.kernels:
        raise _fail(name, "no kernel is registered for any device")
    for device in entry.kernels:
        try:
            entry.kernel_class(device)
        except Exception as error:
            raise _fail(name, f"its {device} kernel cannot be imported: {error}") from error


def _check_docs(name: str, entry: OperatorEntry) -> None:
    schema = entry.schema
    docstring = entry.docstring()
    signature = str(schema.signature())
    for item in (*schema.args, *schema.inputs):
        if item.name not in docstring or item.name not in signature:
            raise _fail(name, f"{item.name!r} is missing from the generated docs or signature")
    from feedline import fn

    target: Any = fn
    for part in name.split("."):
        target = getattr(target, part)
    if target.__doc__ != docstring:
        raise _fail(name, f"fn.{name}.__doc__ is not the schema's generated docstring")
    for device, owner in entry.kernel_owners.items():
        if f"``{device}`` ({owner})" not in docstring:
            raise _fail(name, f"the docs do not list the {device} kernel of plugin {owner!r}")


def _check_outputs(name: str, result: RunResult) -> None:
    """Every output's samples agree with each other and with the output's layout."""
    for iteration in result:
        for index, (samples, layout) in enumerate(iteration):
            if not samples:
                continue
            first = samples[0]
            for position, sample in enumerate(samples):
                if sample.dtype != first.dtype or sample.ndim != first.ndim:
                    raise _fail(
                        name,
                        f"output {index}: sample {position} is {sample.ndim}-D "
                        f"{sample.dtype}, sample 0 {first.ndim}-D {first.dtype}",
                    )
            if layout and len(layout) != first.ndim:
                raise _fail(
                    name,
                    f"output {index} declares layout {layout!r} but its samples are {first.ndim}-D",
                )


def _assert_same(name: str, what: str, a: RunResult, b: RunResult, atol: float = 0.0) -> None:
    for it, (out_a, out_b) in enumerate(zip(a, b, strict=True)):
        for index, ((sa, la), (sb, lb)) in enumerate(zip(out_a, out_b, strict=True)):
            if la != lb:
                raise _fail(name, f"{what}: output {index} layout {la!r} vs {lb!r}")
            for position, (x, y) in enumerate(zip(sa, sb, strict=True)):
                where = f"{what}: iteration {it}, output {index}, sample {position}"
                if x.shape != y.shape or x.dtype != y.dtype:
                    raise _fail(name, f"{where}: {x.shape} {x.dtype} vs {y.shape} {y.dtype}")
                if atol:
                    np.testing.assert_allclose(x, y, atol=atol, err_msg=f"{name}: {where}")
                elif not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
                    raise _fail(name, f"{where}: the values differ")


def check_operator(
    name: str,
    example: OperatorExample | None = None,
    *,
    thread_counts: Sequence[int] = (1, 3),
    seed: int = 1234,
) -> list[str]:
    """Check the operator ``name`` of the active registry; raise AssertionError on a defect.

    Always checked: the schema is complete (a summary, every argument and input documented, at
    least one kernel, every kernel importable) and the generated docs render, name every
    argument and input, and list each device with the plugin providing its kernel. With an
    ``example`` (or for an operator that needs no input and no argument and is not a reader:
    readers have :func:`~feedline.testing.check_reader`), the operator also runs: every
    output's samples share a dtype and a dimensionality that matches its layout; the outputs
    are the same for every ``thread_counts`` and again for the same seed; and when it has a
    ``gpu`` or ``mixed`` kernel besides the CPU one and a GPU is present, both kernels agree
    within ``example.gpu_atol``.

    Returns:
        The names of the checks that ran (``schema``, ``docs``, ``outputs``, ``threads``,
        ``seed``, ``gpu``).
    """
    registry = get_plugin_system().ensure_loaded()
    entry = registry.operators.get(name)
    if entry is None:
        raise _fail(name, "not registered" + get_plugin_system().missing_operator_hint())
    _check_schema(name, entry)
    _check_docs(name, entry)
    done = ["schema", "docs"]
    schema = entry.schema
    runnable = (
        schema.min_inputs == 0
        and not any(a.required for a in schema.args)
        and not any(getattr(entry.kernel_class(d), "is_reader", False) for d in entry.kernels)
    )
    if example is None and not runnable:
        return done
    example = example or OperatorExample()

    def run(threads: int, device: str = "cpu") -> RunResult:
        return run_operator(
            name,
            example.inputs,
            example.layouts,
            example.args,
            example.arg_inputs,
            batch_size=example.batch_size,
            num_threads=threads,
            seed=seed,
            device=device,
        )

    first = run(thread_counts[0])
    _check_outputs(name, first)
    done.append("outputs")
    for threads in thread_counts[1:]:
        _assert_same(name, f"num_threads={threads} vs {thread_counts[0]}", first, run(threads))
    done.append("threads")
    _assert_same(name, "a second run with the same seed", first, run(thread_counts[0]))
    done.append("seed")
    accelerated = [d for d in ("gpu", "mixed") if d in entry.kernels]
    if "cpu" in entry.kernels and accelerated and has_gpu():
        _assert_same(
            name,
            f"{accelerated[0]} vs cpu kernel",
            first,
            run(thread_counts[0], accelerated[0]),
            example.gpu_atol,
        )
        done.append("gpu")
    return done
