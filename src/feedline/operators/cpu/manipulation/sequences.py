"""Kernels of ``per_frame``, ``element_extract`` and ``sequence_rearrange``: operators on the
outermost (frame) dimension of sequences."""

from __future__ import annotations

from collections.abc import Mapping
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
        raise ValueError("per_frame: Cannot mark zero-dimensional input as a sequence.")
    if not layout:
        return "F" + "*" * (ndim - 1)
    if layout[0] == "F":
        return layout
    if not replace:
        raise ValueError(
            "per_frame: Per-frame argument input must be a sequence. The input layout should "
            f"start with 'F', got: {layout} (pass replace=True to replace the first letter)"
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
            return [TensorListCPU.from_dense(data.raw_array(), layout, sources)]
        return [TensorListCPU.from_samples(data.samples(), layout, sources, stack=False)]


class ElementExtractKernel(SampleKernel):
    """``element_extract``: one output per entry of ``element_map``."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """The input layout without its ``F``."""
        layout = input_layouts[0] if input_layouts else ""
        return (layout[1:],) * self.ctx.num_outputs

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, ...]:
        """The chosen frames of one sequence (DALI's messages for bad input)."""
        data, layout = inputs[0], sample.layouts[0]
        if data.ndim < 2:
            raise ValueError(
                "element_extract: Input must have at least two dimensions - outermost for "
                "sequence and at least one for data elements."
            )
        if layout and layout[0] != "F":
            raise ValueError(
                "element_extract: Input layout must describe a sequence - it must start with "
                f"'F', got '{layout}' instead."
            )
        for index in args["element_map"]:
            if index < 0:
                raise ValueError(
                    "element_extract: Negative indices in `element_map` are not allowed, found: "
                    f"{index}."
                )
            if index >= len(data):
                raise IndexError(
                    f"element_extract: Index `{index}` from `element_map` is out of bounds for "
                    f"sample with sequence length equal `{len(data)}`."
                )
        return tuple(data[i] for i in args["element_map"])


class SequenceRearrangeKernel(Kernel):
    """``sequence_rearrange``: ``out[i] = input[new_order[i]]``. A batch kernel, so that a
    per-sample ``new_order`` is seen with its shape (it must be 1-D, as in DALI)."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Rearrange every sequence."""
        (data,) = batch.inputs
        layout = data.layout()
        if layout and layout[0] != "F":
            raise ValueError(
                "sequence_rearrange: Expected sequence as the input, where outermost dimension "
                f'represents frames dimension `F`, got data with layout = "{layout}"'
            )
        node = batch.arg_inputs.get("new_order")
        out = []
        for index, sample in enumerate(data.samples()):
            if node is None:
                order = list(self.args["new_order"])
            else:
                given = node.at(index)
                if given.ndim > 1:
                    raise ValueError(
                        f"sequence_rearrange: Input with dimension {given.ndim} cannot be "
                        "converted to dimension 1 (new_order must be a 1-D list per sample)"
                    )
                order = [int(i) for i in given.reshape(-1)]
            out.append(self._rearrange(sample, order, index, node is not None))
        return [TensorListCPU.from_samples(out, layout, data.source_infos())]

    @staticmethod
    def _rearrange(data: np.ndarray, order: list[int], index: int, per_sample: bool) -> np.ndarray:
        """One rearranged sequence (DALI's messages for bad input)."""
        if data.ndim < 2:
            raise ValueError(
                "sequence_rearrange: Sequence elements must have at least 1 dim (the input "
                f"has shape {data.shape})"
            )
        if not order:
            if per_sample:
                raise ValueError(
                    f"sequence_rearrange: Empty `new_order` for sample {index} is not allowed"
                )
            raise ValueError("sequence_rearrange: Empty result sequences are not allowed")
        for position, frame in enumerate(order):
            if not 0 <= frame < len(data):
                raise IndexError(
                    f"sequence_rearrange: new_order[{position}] must be between 0 and "
                    f"input_sequence_length = {len(data)} for sample {index}, but it is: {frame}"
                )
        return np.take(data, order, axis=0)
