"""How the results of a user's Python function become an operator's outputs: one value per
output (DALI's tuple rules), each a contiguous array of a supported type, and in batch mode one
list of samples (or one array with the batch outermost) per output. Shared by
``python_function``, ``dl_tensor_python_function`` and the :func:`operator` decorator's
operators; errors name the function (``who``) and the output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch
from feedline.core.tensor import TensorListCPU
from feedline.core.types import from_numpy_dtype

__all__ = ["as_output", "batch_results", "split_outputs"]


def as_output(value: Any, who: str, index: int, layout: str) -> np.ndarray:
    """One returned value as a contiguous array of a supported type with ``layout``'s number
    of dimensions (errors name ``who`` and output ``index``)."""
    array = np.asarray(value)
    try:
        from_numpy_dtype(array.dtype)
    except TypeError:
        raise TypeError(
            f"{who}: output {index} has unsupported type {array.dtype} "
            f"({type(value).__name__}); return numeric or bool NumPy arrays"
        ) from None
    if layout and len(layout) != array.ndim:
        raise ValueError(
            f"{who}: output {index} has {array.ndim} dimensions but its layout {layout!r} "
            f"has {len(layout)}"
        )
    return np.require(array, requirements="C")  # ascontiguousarray would make 0-D arrays 1-D


def split_outputs(result: Any, count: int, who: str) -> tuple[Any, ...]:
    """The function's return value as a tuple of ``count`` outputs.

    Raises:
        TypeError: a value with ``num_outputs=0``, or not a tuple with more than one output
            (DALI's rule: a list is one output's batch in batch mode, so it is refused here).
        ValueError: a tuple of another length than ``count`` (DALI's type and wording).
    """
    if count == 0:
        if result is not None and not (isinstance(result, tuple) and not result):
            raise TypeError(f"{who} returned {type(result).__name__} but num_outputs is 0")
        return ()
    if count == 1:
        if isinstance(result, tuple) and len(result) == 1:
            return result
        return (result,)
    if not isinstance(result, tuple):
        raise TypeError(
            f"{who}: the output from a multi-output Python function operator must be a tuple, "
            f"got: {type(result).__name__}"
        )
    if len(result) != count:
        raise ValueError(
            f"{who}: Unexpected number of outputs from Python function operator - got "
            f"{len(result)}, expected {count}"
        )
    return result


def _batch_output(value: Any, size: int, who: str, index: int, layout: str) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        if value.ndim == 0 or value.shape[0] != size:
            raise ValueError(
                f"{who}: output {index} must hold {size} samples (outer dimension), got shape "
                f"{value.shape}"
            )
        samples = list(value)
    elif isinstance(value, list | tuple):
        if len(value) != size:
            raise ValueError(f"{who}: output {index} has {len(value)} samples, expected {size}")
        samples = list(value)
    else:
        raise TypeError(
            f"{who}: in batch mode output {index} must be a list of arrays or an array with the "
            f"batch as outer dimension, got {type(value).__name__}"
        )
    arrays = [as_output(s, who, index, layout) for s in samples]
    if len({(a.dtype, a.ndim) for a in arrays}) > 1:
        raise TypeError(f"{who}: the samples of output {index} differ in dtype or ndim")
    return arrays


def batch_results(
    result: Any, batch: Batch, count: int, layouts: Sequence[str], who: str
) -> list[TensorListCPU]:
    """The return value of a batch-mode function as ``count`` output batches."""
    infos = batch.inputs[0].source_infos() if batch.inputs else None
    return [
        TensorListCPU.from_samples(
            _batch_output(value, batch.size, who, i, layouts[i]), layouts[i], infos
        )
        for i, value in enumerate(split_outputs(result, count, who))
    ]
