"""Kernels of ``per_frame``, ``element_extract`` and ``sequence_rearrange``: operators on the
outermost (frame) dimension of sequences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel, SampleContext, SampleKernel
from feedline.core.tensor import TensorListCPU

__all__ = [
    "ElementExtractKernel",
    "PerFrameKernel",
    "SequenceRearrangeKernel",
    "per_frame_layout",
]


def per_frame_layout(layout: str, ndim: int, replace: bool) -> str:
    """The layout ``per_frame`` gives a batch of ``ndim``-D samples with ``layout``.

    Raises:
        ValueError: 0-D samples, or a layout not starting with ``F`` without ``replace``.
    """
    if ndim == 0:
        raise ValueError("per_frame: cannot mark zero-dimensional input as a sequence")
    if not layout:
        return "F" + "*" * (ndim - 1)
    if layout[0] == "F":
        return layout
    if not replace:
        raise ValueError(
            f"per_frame: the input layout {layout!r} does not start with 'F'; per-frame "
            "argument inputs must be sequences (pass replace=True to replace the first letter)"
        )
    return "F" + layout[1:]


class PerFrameKernel(Kernel):
    """``per_frame``: the same data under a sequence layout."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Relabel the batch."""
        (data,) = batch.inputs
        if not len(data):
            return [data]
        layout = per_frame_layout(data.layout(), data.ndim, self.args["replace"])
        sources = data.source_infos()
        if data.is_dense_tensor():
            return [TensorListCPU.from_dense(data.as_array(), layout, sources)]
        return [TensorListCPU.from_samples(data.samples(), layout, sources, stack=False)]


def _check_sequence(op: str, sample: np.ndarray, layout: str) -> None:
    if layout and layout[0] != "F":
        raise ValueError(
            f"{op}: the input layout must describe a sequence (start with 'F'), got {layout!r}"
        )
    if sample.ndim < 2:
        raise ValueError(
            f"{op}: the input must have at least 2 dimensions (frames and their data), got "
            f"shape {sample.shape}"
        )


def _frame_indices(op: str, name: str, indices: Sequence[int], length: int) -> list[int]:
    bad = [i for i in indices if not 0 <= i < length]
    if bad:
        raise IndexError(
            f"{op}: {name} index {bad[0]} is out of range for a sequence of {length} frames "
            f"(expected 0 to {length - 1})"
        )
    return list(indices)


class ElementExtractKernel(SampleKernel):
    """``element_extract``: one output per entry of ``element_map``."""

    def setup(self) -> None:
        """Negative indices are refused up front."""
        negative = [i for i in self.args["element_map"] if i < 0]
        if negative:
            raise ValueError(
                f"element_extract: negative indices in 'element_map' are not allowed, found "
                f"{negative[0]}"
            )

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The input layout without its ``F``."""
        layout = input_layouts[0] if input_layouts else ""
        return (layout[1:],) * self.ctx.num_outputs

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, ...]:
        """The chosen frames of one sequence."""
        data = inputs[0]
        _check_sequence("element_extract", data, sample.layouts[0])
        indices = _frame_indices("element_extract", "element_map", args["element_map"], len(data))
        return tuple(data[i] for i in indices)


class SequenceRearrangeKernel(SampleKernel):
    """``sequence_rearrange``: ``out[i] = input[new_order[i]]``."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """One rearranged sequence."""
        data = inputs[0]
        _check_sequence("sequence_rearrange", data, sample.layouts[0])
        order = [int(i) for i in args["new_order"]]
        if not order:
            raise ValueError(
                "sequence_rearrange: 'new_order' is empty; empty sequences are not allowed"
            )
        indices = _frame_indices("sequence_rearrange", "new_order", order, len(data))
        out = sample.output((len(indices), *data.shape[1:]), data.dtype)
        np.take(data, indices, axis=0, out=out)
        return out
