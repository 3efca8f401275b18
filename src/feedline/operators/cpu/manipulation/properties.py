"""Kernels of ``shapes`` and ``get_property``: facts about the samples, as data."""

from __future__ import annotations

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import to_numpy_dtype

__all__ = ["GetPropertyKernel", "ShapesKernel"]


class ShapesKernel(Kernel):
    """``shapes``: each sample's shape as a 1-D tensor."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """The shapes of the batch."""
        (data,) = batch.inputs
        dtype = to_numpy_dtype(self.args["dtype"])
        shapes = [np.array(shape, dtype) for shape in data.shape()]
        return [TensorListCPU.from_samples(shapes)]


def _as_bytes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode(), np.uint8).copy()


class GetPropertyKernel(Kernel):
    """``get_property``: the source info or the layout, as uint8 bytes."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """The property of every sample."""
        (data,) = batch.inputs
        layout = self.args["key"] == "layout"
        texts = [data.layout()] * len(data) if layout else data.source_infos()
        return [TensorListCPU.from_samples([_as_bytes(text) for text in texts])]
