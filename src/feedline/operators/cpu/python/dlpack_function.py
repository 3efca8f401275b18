"""``dl_tensor_python_function``: ``python_function`` whose function trades DLPack capsules.

The function receives each input sample as a DLPack capsule (``torch.from_dlpack``,
``cupy.from_dlpack`` or ``np.from_dlpack`` on a ``__dlpack__`` wrapper read it without a copy)
and returns capsules, or any object with ``__dlpack__``. Everything else (outputs, layouts,
batch mode, errors) is ``python_function``'s machinery.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.host_memory import to_dlpack
from feedline.core.kernel import Batch, Kernel, KernelContext, SampleContext, SampleKernel
from feedline.core.tensor import TensorListCPU
from feedline.operators.cpu.python.function import PythonFunctionSetup
from feedline.operators.cpu.python.outputs import as_output, batch_results, split_outputs

__all__ = [
    "DLTensorFunctionBatchKernel",
    "DLTensorFunctionKernel",
    "dl_tensor_function_kernel",
    "from_dlpack",
    "to_dlpack",
]

_CAPSULE = type(np.zeros(0).__dlpack__())


class _CapsuleProducer:
    """Lends a bare capsule the ``__dlpack__`` protocol so that ``np.from_dlpack`` takes it."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU: a capsule of device memory fails in np.from_dlpack


def from_dlpack(value: Any, who: str, index: int) -> np.ndarray:
    """A returned capsule or ``__dlpack__`` producer as a NumPy array.

    Raises:
        TypeError: ``value`` is neither, or holds memory NumPy cannot read (e.g. GPU memory).
    """
    producer = _CapsuleProducer(value) if isinstance(value, _CAPSULE) else value
    if not hasattr(producer, "__dlpack__"):
        raise TypeError(
            f"{who}: output {index} is a {type(value).__name__}; dl_tensor_python_function "
            "functions return DLPack capsules (e.g. torch.utils.dlpack.to_dlpack(t)) or "
            "objects with __dlpack__"
        )
    try:
        return np.from_dlpack(producer)
    except (BufferError, RuntimeError, TypeError, ValueError) as exc:
        raise TypeError(f"{who}: output {index} cannot be read as a CPU tensor: {exc}") from None


def _batch_from_dlpack(value: Any, who: str, index: int) -> Any:
    if isinstance(value, list | tuple):
        return [from_dlpack(v, who, index) for v in value]
    return from_dlpack(value, who, index)


class DLTensorFunctionKernel(PythonFunctionSetup, SampleKernel):
    """``dl_tensor_python_function`` per sample: ``function(*sample_capsules)``."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The ``output_layouts``, padded with no layout."""
        return self.layouts

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, ...]:
        """Call the function on one sample's capsules."""
        result = args["function"](*(to_dlpack(a) for a in inputs))
        outputs = split_outputs(result, self.num_outputs, self.who)
        return tuple(
            as_output(from_dlpack(v, self.who, i), self.who, i, self.layouts[i])
            for i, v in enumerate(outputs)
        )


class DLTensorFunctionBatchKernel(PythonFunctionSetup):
    """``dl_tensor_python_function`` per batch: ``function(*capsule_lists)``."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Call the function once with one list of capsules per input."""
        lists = [[to_dlpack(a) for a in tl.samples()] for tl in batch.inputs]
        result = self.args["function"](*lists)
        outputs = split_outputs(result, self.num_outputs, self.who)
        arrays = tuple(_batch_from_dlpack(v, self.who, i) for i, v in enumerate(outputs))
        return batch_results(arrays, batch, self.num_outputs, self.layouts, self.who)


def dl_tensor_function_kernel(ctx: KernelContext) -> Kernel:
    """The kernel factory registered for ``dl_tensor_python_function``: per sample or per
    batch, chosen by ``batch_processing``."""
    cls = DLTensorFunctionBatchKernel if ctx.args["batch_processing"] else DLTensorFunctionKernel
    return cls(ctx)
