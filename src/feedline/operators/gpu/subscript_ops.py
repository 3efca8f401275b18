"""GPU kernels of the hidden operators behind ``DataNode[...]``: ``_tensor_subscript`` indexes
each device sample with the CPU kernel's rules (a strided view made contiguous on the device),
``_subscript_dim_check`` passes the batch through after the CPU kernel's check."""

from __future__ import annotations

from feedline.operators.cpu.tensor.subscript import (
    SubscriptDimCheckKernel,
    TensorSubscriptKernel,
    check_dimensions,
    sample_subscripts,
    subscript_key,
)
from feedline.operators.gpu.base import GpuBatch, GpuKernel, Outputs

__all__ = ["SubscriptDimCheckGpu", "TensorSubscriptGpu"]


class TensorSubscriptGpu(GpuKernel, TensorSubscriptKernel):
    """``_tensor_subscript`` on the GPU."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Index every sample."""
        xp = batch.backend.xp
        outs = []
        for index, (data, args) in enumerate(zip(batch.inputs[0], batch.args, strict=True)):
            key = subscript_key(data.shape, sample_subscripts(args, self._count), index)
            outs.append(xp.ascontiguousarray(data[key]))
        return [(outs, self.layout_of(batch.layouts))]


class SubscriptDimCheckGpu(GpuKernel, SubscriptDimCheckKernel):
    """``_subscript_dim_check`` on the GPU: the batch passes through once checked."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Check the dimensions and return the samples."""
        samples = list(batch.inputs[0])
        if samples:
            check_dimensions(samples[0].ndim, self.args["num_subscripts"])
        return [(samples, batch.layouts[0])]
