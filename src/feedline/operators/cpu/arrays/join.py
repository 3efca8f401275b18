"""Kernels of ``cat`` (join along an existing axis) and ``stack`` (join along a new axis).

Both take any number of inputs of one element type, sample by sample: sample ``i`` of the output
joins sample ``i`` of every input. Layouts: every input that has a layout must have the same one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU

__all__ = ["CatKernel", "StackKernel", "common_layout", "resolve_cat_axis", "resolve_stack_axis"]


def common_layout(op: str, inputs: Sequence[TensorListCPU]) -> str:
    """The layout shared by every input that has one (``""`` if none has)."""
    layouts = {tl.layout() for tl in inputs if tl.layout()}
    if len(layouts) > 1:
        raise ValueError(f"{op}: the inputs have different layouts {sorted(layouts)}")
    return layouts.pop() if layouts else ""


def _check_inputs(op: str, inputs: Sequence[TensorListCPU]) -> None:
    sizes = {len(tl) for tl in inputs}
    if len(sizes) > 1:
        raise ValueError(f"{op}: the inputs have different batch sizes {sorted(sizes)}")
    dtypes = {tl.numpy_dtype for tl in inputs if len(tl)}
    if len(dtypes) > 1:
        raise TypeError(
            f"{op}: all inputs must have the same type, got {', '.join(sorted(map(str, dtypes)))}"
        )
    ndims = {tl.ndim for tl in inputs if len(tl)}
    if len(ndims) > 1:
        raise ValueError(f"{op}: all inputs must have the same number of dimensions, got {ndims}")


def _check_count(op: str, count: int) -> None:
    if count < 1:
        raise TypeError(f"{op}: expected at least 1 input, got 0")


def resolve_cat_axis(axis: int | None, axis_name: str | None, layout: str, ndim: int) -> int:
    """The non-negative axis ``cat`` joins along (``axis`` and ``axis_name`` are exclusive)."""
    if axis is not None and axis_name is not None:
        raise ValueError("cat: arguments 'axis' and 'axis_name' are mutually exclusive")
    if axis_name is not None:
        if not layout:
            raise ValueError(f"cat: axis_name {axis_name!r} needs inputs with a layout")
        if len(axis_name) != 1 or axis_name not in layout:
            raise ValueError(f"cat: axis_name {axis_name!r} is not a dimension of {layout!r}")
        return layout.index(axis_name)
    axis = 0 if axis is None else axis
    if not -ndim <= axis < ndim:
        raise ValueError(f"cat: axis {axis} is out of range [{-ndim}, {ndim - 1}]")
    return axis % ndim


def resolve_stack_axis(axis: int, ndim: int) -> int:
    """The output position of ``stack``'s new axis: ``[-ndim, ndim]``, negative from the back."""
    if not -ndim <= axis <= ndim:
        raise ValueError(f"stack: axis {axis} is out of range [{-ndim}, {ndim}]")
    return axis if axis >= 0 else axis + ndim + 1


class CatKernel(Kernel):
    """``cat``: concatenate the inputs' samples along an existing axis."""

    def setup(self) -> None:
        """Check the number of inputs."""
        _check_count("cat", self.ctx.num_inputs)

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Join every sample."""
        inputs = batch.inputs
        _check_inputs("cat", inputs)
        layout = common_layout("cat", inputs)
        first = inputs[0]
        ndim = first.ndim
        if ndim == 0 and len(first):
            raise ValueError("cat: scalar inputs have no axis to join along; use stack")
        axis = resolve_cat_axis(self.args["axis"], self.args["axis_name"], layout, ndim)

        per_input = [tl.samples() for tl in inputs]

        def one(i: int) -> np.ndarray:
            parts = [samples[i] for samples in per_input]
            shapes = [p.shape[:axis] + p.shape[axis + 1 :] for p in parts]
            if len(set(shapes)) > 1:
                raise ValueError(
                    f"cat: sample {i}: shapes {[p.shape for p in parts]} differ outside axis {axis}"
                )
            return np.concatenate(parts, axis=axis)

        out = [one(i) for i in range(len(first))]
        return [TensorListCPU.from_samples(out, layout, first.source_infos())]


class StackKernel(Kernel):
    """``stack``: join the inputs' samples along a new axis."""

    def setup(self) -> None:
        """Check the number of inputs and ``axis_name``."""
        _check_count("stack", self.ctx.num_inputs)
        name = self.args["axis_name"]
        if name is not None and len(name) != 1:
            raise ValueError(f"stack: argument 'axis_name' = {name!r} must be a single character")

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Join every sample."""
        inputs = batch.inputs
        _check_inputs("stack", inputs)
        layout = common_layout("stack", inputs)
        first = inputs[0]
        axis = resolve_stack_axis(self.args["axis"], first.ndim)
        per_input = [tl.samples() for tl in inputs]

        def one(i: int) -> np.ndarray:
            parts = [samples[i] for samples in per_input]
            if len({p.shape for p in parts}) > 1:
                raise ValueError(
                    f"stack: sample {i}: shapes {[p.shape for p in parts]} must be equal"
                )
            return np.stack(parts, axis=axis)

        name = self.args["axis_name"]
        out_layout = ""
        if name is not None and (layout or first.ndim == 0):
            out_layout = layout[:axis] + name + layout[axis:]
        out = [one(i) for i in range(len(first))]
        return [TensorListCPU.from_samples(out, out_layout, first.source_infos())]
