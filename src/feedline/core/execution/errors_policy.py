"""The ``on_error="skip"`` policy: which failures may be skipped, the record of skipped samples
and the budget, and replacing samples in a batch.

Under ``skip`` a sample that fails in an operator fed by a reader is dropped from the readers'
batches, the readers' next samples fill them up again, and the iteration's non-source operators
run again on the repaired batch (the executor does that; see :meth:`Executor.run_iteration`):
the batch is the one the readers would have produced had the failed samples not been in their
streams. Random draws depend only on (seed, iteration, sample index), so the samples before the
first failed one come out the same. A reader's own load
failures are replaced inside the reader. This module holds the parts that know nothing of the
plan: the policy check, :class:`ErrorLog` and the helpers the executor calls.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from feedline.core.errors import OperatorError, PipelineError, SkippedSample
from feedline.core.graph import OpNode
from feedline.core.registry import Registry
from feedline.core.schema import ON_ERROR_POLICIES
from feedline.core.tensor import TensorListCPU

__all__ = [
    "ErrorLog",
    "SampleFailed",
    "SampleFailures",
    "check_policy",
    "check_samples",
    "error_policies",
    "guard",
    "resolve_policies",
    "substitute",
]

logger = logging.getLogger("feedline")


def check_policy(on_error: Any, max_errors: Any) -> tuple[str, int | None]:
    """The pipeline's ``on_error`` and ``max_errors``, checked.

    Raises:
        ValueError: an unknown policy or a negative budget.
        TypeError: ``max_errors`` is not an int or None.
    """
    if on_error not in ON_ERROR_POLICIES:
        raise ValueError(
            f"Pipeline: on_error must be one of {', '.join(ON_ERROR_POLICIES)}, got {on_error!r}"
        )
    if max_errors is not None:
        if isinstance(max_errors, bool) or not isinstance(max_errors, int):
            raise TypeError(
                f"Pipeline: max_errors must be an int or None, got {type(max_errors).__name__}"
            )
        if max_errors < 0:
            raise ValueError(f"Pipeline: max_errors must not be negative, got {max_errors}")
    return on_error, max_errors


def error_policies(ops: Sequence[OpNode], registry: Registry, default: str) -> dict[str, str]:
    """:func:`resolve_policies` for operators whose kernels come from ``registry``.

    Raises:
        PipelineError: see :func:`resolve_policies`, or a reader under ``skip`` cannot hand out
            replacement samples.
    """
    if default == "raise" and all(op.on_error is None for op in ops):
        return dict.fromkeys((op.name for op in ops), "raise")
    readers: dict[int, OpNode] = {}
    for op in ops:
        entry = registry.entry(op.schema.name)
        if entry is None or op.device not in entry.devices:
            continue  # the build reports it
        if entry.kernel_class(op.device).is_reader:
            readers[id(op)] = op
    policies = resolve_policies(ops, set(readers), default)
    if "skip" in policies.values():
        for op in readers.values():
            kernel = registry.entry(op.schema.name).kernel_class(op.device)  # type: ignore[union-attr]
            if not all(hasattr(kernel, method) for method in ("replacement", "take_skipped")):
                raise PipelineError(
                    f'on_error="skip": reader {op.name!r} ({op.schema.name}) cannot hand out '
                    "replacement samples (its kernel lacks replacement() or take_skipped(); "
                    "derive it from feedline.readers.base.Reader)"
                )
    return policies


def resolve_policies(ops: Sequence[OpNode], readers: set[int], default: str) -> dict[str, str]:
    """Each operator's effective policy: its own ``on_error``, else the pipeline's ``default``.

    Only a sample that comes from a reader can be replaced, so ``skip`` applies to readers and
    to the operators that read (directly or not) a reader's output; the pipeline's ``skip``
    leaves the others at ``raise``.

    Args:
        ops: the built operators, in topological order.
        readers: ids of the reader operators.
        default: the pipeline's policy.

    Raises:
        PipelineError: an operator asks for ``skip`` but reads no reader's output, or the
            pipeline asks for ``skip`` and has no reader.
    """
    if default == "skip" and not readers:
        raise PipelineError(
            'on_error="skip" needs a reader: a failing sample is replaced by the next sample '
            "of its reader's stream, and this pipeline has no reader (external sources and "
            'constants cannot supply replacements); use on_error="raise"'
        )
    fed: set[int] = set(readers)
    policies: dict[str, str] = {}
    for op in ops:
        if any(id(n.source) in fed for n in op.upstream()):
            fed.add(id(op))
        policy = op.on_error or default
        if policy == "skip" and id(op) not in fed:
            if op.on_error == "skip":
                raise PipelineError(
                    f"operator {op.name!r} has on_error='skip' but reads no reader's output: "
                    "only a sample that comes from a reader can be replaced by the next one"
                )
            policy = "raise"
        policies[op.name] = policy
    return policies


class SampleFailed:
    """What a guarded chain returns for a sample that failed under ``skip``."""

    __slots__ = ("error",)

    def __init__(self, error: OperatorError) -> None:
        self.error = error


class SampleFailures(Exception):
    """Samples of the iteration failed in operators that skip them."""

    def __init__(self, errors: list[OperatorError]) -> None:
        super().__init__(f"{len(errors)} samples failed")
        self.errors = errors


def guard(
    process: Callable[[int], dict[Any, Any]], skipping: set[str]
) -> Callable[[int], dict[Any, Any] | SampleFailed]:
    """``process`` returning :class:`SampleFailed` instead of raising for a sample failure of an
    operator named in ``skipping``."""

    def guarded(i: int) -> dict[Any, Any] | SampleFailed:
        try:
            return process(i)
        except OperatorError as exc:
            if exc.operator in skipping and exc.sample_index is not None:
                return SampleFailed(exc)
            raise

    return guarded


def check_samples(per_sample: Sequence[Any]) -> None:
    """Raise :class:`SampleFailures` if a guarded chain marked samples as failed."""
    failed = [s.error for s in per_sample if isinstance(s, SampleFailed)]
    if failed:
        raise SampleFailures(failed)


def substitute(batch: TensorListCPU, indices: Sequence[int], fresh: TensorListCPU) -> TensorListCPU:
    """``batch`` without the samples at ``indices``, followed by the samples of ``fresh``: the
    batch the reader would have produced had the failed samples not been in its stream."""
    failed = set(indices)
    old, infos = batch.samples(), batch.source_infos()
    keep = [i for i in range(len(batch)) if i not in failed]
    samples = [old[i] for i in keep] + fresh.samples()
    sources = [infos[i] for i in keep] + fresh.source_infos()
    return TensorListCPU.from_samples(samples, batch.layout(), sources)


class ErrorLog:
    """The samples skipped so far, and the budget.

    Args:
        max_errors: how many samples may be skipped; one more raises. None: no limit.
    """

    def __init__(self, max_errors: int | None) -> None:
        self.max_errors = max_errors
        self.skipped: list[SkippedSample] = []

    def record(self, samples: Iterable[SkippedSample]) -> None:
        """Log and list each of ``samples`` once.

        Raises:
            PipelineError: the budget is exceeded; the message lists every skipped sample.
        """
        for sample in samples:
            self.skipped.append(sample)
            where = f" ({sample.source_info})" if sample.source_info else ""
            logger.warning(
                "skipped sample %s of iteration %d%s: operator %r failed: %s",
                sample.sample_index,
                sample.iteration,
                where,
                sample.operator,
                sample.error,
            )
            if self.max_errors is not None and len(self.skipped) > self.max_errors:
                listing = "\n".join(
                    f"  operator {s.operator!r}, iteration {s.iteration}, sample "
                    f"{s.sample_index}{f' ({s.source_info})' if s.source_info else ''}: {s.error}"
                    for s in self.skipped
                )
                raise PipelineError(
                    f"{len(self.skipped)} samples failed, more than max_errors="
                    f"{self.max_errors}:\n{listing}"
                )

    def as_list(self) -> list[dict[str, Any]]:
        """The skipped samples as dicts (``executor_statistics()["errors"]``)."""
        return [s.as_dict() for s in self.skipped]
