"""The base of GPU kernels: whole batches of :class:`TensorListGPU` in and out.

A GPU kernel class usually subclasses its CPU twin as well, so that argument checks done in
``setup()`` and ``output_layouts()`` are the CPU kernel's own. It implements :meth:`compute`,
which sees the batch as lists of device arrays, the per-sample arguments (merged exactly as the
executor merges them for CPU kernels) and the per-sample random generators (the CPU kernels'
generators: a seeded GPU pipeline draws the same crops and flips as the CPU one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor_gpu import TensorListGPU
from feedline.operators.gpu.backend import Backend, cuda_backend

__all__ = ["GpuBatch", "GpuKernel", "Outputs", "sample_args"]

#: What :meth:`GpuKernel.compute` returns: per output, the samples and the layout.
Outputs = list[tuple[list[Any], str]]

_VECTORS = {"int_vec", "float_vec", "str_vec", "bool_vec"}
_SCALARS = {"int": int, "float": float, "bool": bool}


@dataclass(frozen=True)
class GpuBatch:
    """One batch as a GPU kernel computes it.

    Attributes:
        backend: where to run (CUDA, or the host emulation in tests).
        inputs: per input, the samples (arrays of ``backend``).
        layouts: per input, the layout.
        args: per sample, the arguments.
        rng: the random generator of a sample index (the CPU kernels' generators).
    """

    backend: Backend
    inputs: Sequence[list[Any]]
    layouts: Sequence[str]
    args: Sequence[Mapping[str, Any]]
    rng: Callable[[int], np.random.Generator]

    def contiguous(self, index: int = 0) -> list[Any]:
        """The samples of input ``index`` as C-contiguous arrays."""
        return [self.backend.xp.ascontiguousarray(s) for s in self.inputs[index]]


def sample_args(
    static: Mapping[str, Any], per_sample: Mapping[str, Any], kinds: Mapping[str, str], index: int
) -> dict[str, Any]:
    """The arguments of sample ``index``: ``static`` overlaid with the sample's value of every
    per-sample argument (vectors as tuples, scalars as Python numbers, as CPU kernels see them).

    Raises:
        ValueError: a scalar argument got more than one value for the sample.
    """
    args = dict(static)
    for name, batch in per_sample.items():
        value = np.asarray(batch.as_cpu().at(index) if hasattr(batch, "as_cpu") else batch[index])
        kind = kinds.get(name, "")
        if kind in _VECTORS:
            args[name] = tuple(value.ravel().tolist())
        elif kind in _SCALARS:
            if value.size != 1:
                raise ValueError(
                    f"argument {name!r}: expected a scalar per sample, got shape {value.shape}"
                )
            args[name] = _SCALARS[kind](value.reshape(()).item())
        else:
            args[name] = value
    return args


class GpuKernel(Kernel):
    """A ``gpu`` kernel: launches once per batch on the current CUDA stream."""

    def run(self, batch: Batch) -> list[TensorListGPU]:
        """Run one batch on the device."""
        inputs = list(batch.inputs)
        for position, tl in enumerate(inputs):
            if not isinstance(tl, TensorListGPU):
                raise TypeError(
                    f"{self.ctx.name}: input {position} is in CPU memory; the gpu kernel needs "
                    "GPU data (insert .gpu())"
                )
        n = len(inputs[0]) if inputs else batch.size
        kinds = {name: spec.kind for name, spec in self.ctx.schema.arg_map.items()}
        args = [sample_args(self.args, batch.arg_inputs, kinds, i) for i in range(n)]
        results = self.compute(
            GpuBatch(
                cuda_backend(),
                [tl.samples() for tl in inputs],
                [tl.layout() for tl in inputs],
                args,
                batch.rng,
            )
        )
        infos = inputs[0].source_infos() if inputs else None
        return [TensorListGPU.from_samples(s, layout, infos) for s, layout in results]

    def run_sample(self, *args: Any) -> Any:
        """Refused: a GPU kernel runs whole batches (it inherits its CPU twin's checks only).

        Raises:
            TypeError: always.
        """
        raise TypeError(f"{type(self).__name__} is a gpu kernel: it runs whole batches (run)")

    def compute(self, batch: GpuBatch) -> Outputs:
        """Compute one batch: per output, the samples and the layout."""
        raise NotImplementedError(f"{type(self).__name__} does not implement compute()")

    def layout_of(self, layouts: Sequence[str]) -> str:
        """The first output's layout (the CPU twin's ``output_layouts`` when it has one)."""
        output_layouts = getattr(self, "output_layouts", None)
        if output_layouts is not None:
            return output_layouts(tuple(layouts))[0]
        return layouts[0] if layouts else ""
