"""Kernels of the conditional operators: split a batch by a per-sample predicate, merge two
branches back in sample order, ``not`` and the operand check of ``and``/``or``.

Split and merge move no data: their batches list the input samples (NumPy views), so a branch
costs what its operators cost, not a copy of the batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU

__all__ = ["MergeKernel", "NotKernel", "SplitKernel", "ValidateLogicalKernel", "predicate_mask"]

_HINT = (
    "\n\nThis restriction keeps every condition a single boolean per sample, so that it selects "
    "one branch unambiguously. Produce such a value with `dtype=types.BOOL` on the operator "
    "that makes it, or with a comparison (e.g. `x != 0`)."
)


def _scalars(batch: TensorListCPU) -> np.ndarray | None:
    """The batch as a 1-D array of its scalars, or None when some sample is not 0-D."""
    if len(batch) == 0:
        return np.zeros(0, np.bool_)
    if batch.is_dense_tensor():
        array = batch.as_array()
        return array if array.ndim == 1 else None
    return None


def predicate_mask(predicate: TensorListCPU, if_stmt: bool) -> np.ndarray:
    """The per-sample truth values of ``predicate`` as a boolean array.

    Raises:
        RuntimeError: a sample is not a scalar (0-D).
    """
    values = _scalars(predicate)
    if values is None:
        where = "Conditions inside `if` statements" if if_stmt else "Predicates of split"
        what = "a condition of the `if` statement" if if_stmt else "a predicate"
        raise RuntimeError(
            f"{where} are restricted to scalar (0-d tensors) inputs, that are placed on CPU. "
            f"Got a {predicate.ndim}-d input as {what}.{_HINT}"
        )
    return values.astype(np.bool_, copy=False)


def _infos(batch: TensorListCPU) -> list[str] | None:
    infos = batch.source_infos()
    return infos if any(infos) else None


def _pick(
    samples: Sequence[np.ndarray], infos: list[str] | None, chosen: np.ndarray, layout: str
) -> TensorListCPU:
    indices = np.flatnonzero(chosen).tolist()
    picked_infos = [infos[i] for i in indices] if infos is not None else None
    return TensorListCPU.from_samples(
        [samples[i] for i in indices], layout, picked_infos, stack=False
    )


class SplitKernel(Kernel):
    """``_conditional.split``: the samples whose predicate holds, and the others."""

    resizes_batch = True

    def run(self, batch: Batch) -> Sequence[TensorListCPU]:
        data = batch.inputs[0]
        mask = predicate_mask(batch.arg_inputs["predicate"], bool(self.args["_if_stmt"]))
        if len(mask) != len(data):
            raise RuntimeError(
                f"the predicate has {len(mask)} samples, the input {len(data)}: both must come "
                "from the same batch"
            )
        samples, infos, layout = data.samples(), _infos(data), data.layout()
        return _pick(samples, infos, mask, layout), _pick(samples, infos, ~mask, layout)


class MergeKernel(Kernel):
    """``_conditional.merge``: the two branches' samples back in the order of the predicate."""

    batch_like = "predicate"

    def run(self, batch: Batch) -> Sequence[TensorListCPU]:
        true_batch, false_batch = batch.inputs
        mask = predicate_mask(batch.arg_inputs["predicate"], if_stmt=True)
        taken = int(np.count_nonzero(mask))
        if taken != len(true_batch) or len(mask) - taken != len(false_batch):
            raise RuntimeError(
                f"the predicate selects {taken} samples for the `if` branch and "
                f"{len(mask) - taken} for the `else` branch, but the branches produced "
                f"{len(true_batch)} and {len(false_batch)}"
            )
        if not len(false_batch):
            return (true_batch,)
        if not len(true_batch):
            return (false_batch,)
        layout = _common_layout(true_batch, false_batch)
        true_samples, false_samples = true_batch.samples(), false_batch.samples()
        true_infos, false_infos = true_batch.source_infos(), false_batch.source_infos()
        samples: list[np.ndarray] = []
        infos: list[str] = []
        t = f = 0
        for taken_here in mask.tolist():
            if taken_here:
                samples.append(true_samples[t])
                infos.append(true_infos[t])
                t += 1
            else:
                samples.append(false_samples[f])
                infos.append(false_infos[f])
                f += 1
        keep_infos = infos if any(infos) else None
        return (TensorListCPU.from_samples(samples, layout, keep_infos, stack=False),)


def _common_layout(a: TensorListCPU, b: TensorListCPU) -> str:
    """The merged batch's layout: both sides must have the same one (an empty layout differs
    from any other, as in DALI).

    Raises:
        RuntimeError: the two sides differ in type, number of dimensions or layout.
    """
    found = None
    if a.numpy_dtype != b.numpy_dtype:
        found = f"distinct types: {a.numpy_dtype} and {b.numpy_dtype}"
    elif a.ndim != b.ndim:
        found = f"distinct sample dimensions: {a.ndim} and {b.ndim}"
    elif a.layout() != b.layout():
        found = f"distinct layouts: {a.layout()!r} and {b.layout()!r}"
    if found is not None:
        raise RuntimeError(
            "Divergent data found in different branches of conditional operation. All paths in "
            "conditional operation are merged into one batch which must have consistent type, "
            f"number of dimensions, layout and other metadata. Found {found}."
        )
    return a.layout()


def _logical_scalars(batch: TensorListCPU, message: str) -> np.ndarray:
    values = _scalars(batch)
    if values is None:
        raise RuntimeError(message.format(ndim=batch.ndim) + _HINT)
    return values


class NotKernel(Kernel):
    """``_conditional.not_``: ``not`` of each scalar sample, as a ``bool``."""

    def run(self, batch: Batch) -> Sequence[TensorListCPU]:
        data = batch.inputs[0]
        values = _logical_scalars(
            data,
            "Logical expression `not` is restricted to scalar (0-d tensors) inputs, that are "
            "placed on CPU. Got a {ndim}-d input in logical expression.",
        )
        result = np.logical_not(values)
        return (TensorListCPU.from_dense(result, "", _infos(data)),)


class ValidateLogicalKernel(Kernel):
    """``_conditional.validate_logical``: the input, once every sample is a ``bool`` scalar."""

    def run(self, batch: Batch) -> Sequence[TensorListCPU]:
        data = batch.inputs[0]
        name, side = self.args["expression_name"], self.args["expression_side"]
        head = (
            f"Logical expression `{name}` is restricted to scalar (0-d tensors) inputs of `bool` "
            "type, that are placed on CPU."
        )
        values = _logical_scalars(
            data, head + " Got a {ndim}-d input as the " + side + " argument in logical expression."
        )
        if len(values) and values.dtype != np.bool_:
            raise RuntimeError(
                f"{head} Got an input of type `{values.dtype}` as the {side} argument in logical "
                f"expression.{_HINT}"
            )
        return (data,)
