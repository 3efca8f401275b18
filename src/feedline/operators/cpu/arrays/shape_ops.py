"""Kernels of ``one_hot``, ``expand_dims``, ``squeeze`` and ``cast_like``.

``expand_dims`` and ``squeeze`` only reshape: their outputs share the input's memory. ``one_hot``
follows DALI's definition literally (``on_value`` where ``i == input``, so a class value that is
not an integer in ``[0, num_classes)`` gives a row of ``off_value``) and keeps DALI's legacy rule
that a batch whose samples all hold one element is a batch of scalars unless ``axis`` is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import to_numpy_dtype
from feedline.operators.cpu.common.errors import ArgumentError
from feedline.operators.cpu.tensor.basic import cast_array, cast_batch
from feedline.operators.cpu.tensor.layout import _axes_of

__all__ = [
    "CastLikeKernel",
    "ExpandDimsKernel",
    "OneHotKernel",
    "SqueezeKernel",
    "expand_dims_plan",
    "one_hot",
    "squeeze_axes",
]


def map_samples(
    data: TensorListCPU, layout: str, fn: Callable[[np.ndarray], np.ndarray]
) -> TensorListCPU:
    """A batch of ``fn(sample)`` for every sample, kept as separate arrays (no stacking)."""
    return TensorListCPU.from_samples(
        [fn(s) for s in data.samples()], layout, data.source_infos(), stack=False
    )


def _single_char(op: str, arg: str, value: str | None) -> str:
    if value is not None and len(value) != 1:
        raise ArgumentError(
            f'{op}: Unsupported {arg} value. It must be a single character, got "{value}" instead.'
        )
    return value or ""


def one_hot(
    sample: np.ndarray,
    num_classes: int,
    axis: int,
    on_value: float,
    off_value: float,
    dtype: np.dtype,
) -> np.ndarray:
    """One sample's encoding: a new axis of ``num_classes`` at ``axis`` (``-1`` = last)."""
    position = sample.ndim if axis == -1 else axis
    classes = np.arange(num_classes).reshape((num_classes,) + (1,) * (sample.ndim - position))
    hits = np.expand_dims(sample, position) == classes
    values = cast_array(np.array([off_value, on_value], np.float64), dtype)
    return values[hits.astype(np.intp)]


class OneHotKernel(Kernel):
    """Batch ``one_hot`` (the legacy scalar rule looks at every sample of the batch)."""

    def setup(self) -> None:
        """Check the static arguments."""
        if self.args["num_classes"] < 1:
            raise ValueError(
                f"one_hot: argument 'num_classes' = {self.args['num_classes']} must be positive"
            )
        self._axis_name = _single_char("one_hot", "axis_name", self.args["axis_name"])
        self._dtype = to_numpy_dtype(self.args["dtype"])

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Encode every sample."""
        (data,) = batch.inputs
        samples = data.samples()
        axis = self.args["axis"]
        legacy = axis is None and samples and all(s.size == 1 for s in samples)
        if legacy:
            samples = [s.reshape(()) for s in samples]
        axis = -1 if axis is None else axis
        ndim = samples[0].ndim if samples else data.ndim
        if not -1 <= axis <= ndim:
            raise ValueError(
                f"one_hot: argument 'axis' = {axis} is out of range [-1, {ndim}] for {ndim}-D input"
            )
        if samples and samples[0].dtype.kind not in "biuf":
            raise TypeError(f"one_hot: input type {samples[0].dtype} is not numeric")
        args = self.args
        out = [
            one_hot(s, args["num_classes"], axis, args["on_value"], args["off_value"], self._dtype)
            for s in samples
        ]
        layout = ""
        if self._axis_name and ndim > 0 and not legacy and len(data.layout()) != ndim:
            raise ValueError(
                f"one_hot: Input layout mismatch - expected input layout to be of size {ndim} but "
                f'instead got "{data.layout()}", which is of size {len(data.layout())}.'
            )
        if self._axis_name and (ndim == 0 or (data.layout() and not legacy)):
            base = "" if ndim == 0 else data.layout()
            position = ndim if axis == -1 else axis
            layout = base[:position] + self._axis_name + base[position:]
        return [TensorListCPU.from_samples(out, layout, data.source_infos())]


def expand_dims_plan(
    ndim: int, axes: Sequence[int], names: str, layout: str
) -> tuple[list[int], str]:
    """Where each input dimension goes (-1 = a new unit dimension) and the output layout.

    The checks and their messages are DALI's, in its order: negative axes, a ``new_axis_names``
    of another length than ``axes``, repeated axes, names for an input without a layout, then an
    axis beyond the output's dimensions. Without new names the output has no layout, unless no
    axis is added (then the input's layout is kept).

    Raises:
        ArgumentError: the first of the mistakes above.
    """
    out_ndim = ndim + len(axes)
    if any(a < 0 for a in axes):
        raise ArgumentError("expand_dims: Axis value can't be negative")
    if names and len(names) != len(axes):
        raise ArgumentError(
            f"expand_dims: Specified {len(axes)} new dimensions, but layout contains only "
            f"{len(names)} new dimension names"
        )
    if len(set(axes)) != len(axes):
        raise ArgumentError("expand_dims: Duplicate axis index found.")
    if names and not layout and ndim > 0:
        raise ArgumentError(
            "expand_dims: Specifying ``new_axis_names`` requires an input with a proper layout."
        )
    bad = [a for a in axes if a >= out_ndim]
    if bad:
        raise ArgumentError(
            "expand_dims: Data has not enough dimensions to add new axes at specified indices. "
            f"(axis {bad[0]} for a {ndim}-D input with {len(axes)} new dimension(s))"
        )
    new = dict(zip(axes, names or " " * len(axes), strict=True))
    plan, out_layout, source = [], [], iter(layout or " " * ndim)
    for position in range(out_ndim):
        if position in new:
            plan.append(-1)
            out_layout.append(new[position])
        else:
            plan.append(position)
            out_layout.append(next(source))
    if not axes:
        return plan, layout or ""
    return plan, "".join(out_layout) if names else ""


class ExpandDimsKernel(Kernel):
    """``expand_dims``: insert unit dimensions (a reshape; the data is shared)."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Reshape every sample."""
        (data,) = batch.inputs
        axes = list(self.args["axes"])
        _, layout = expand_dims_plan(data.ndim, axes, self.args["new_axis_names"], data.layout())

        def reshape(sample: np.ndarray) -> np.ndarray:
            shape = list(sample.shape)
            for axis in sorted(axes):
                shape.insert(axis, 1)
            return sample.reshape(shape)

        if data.is_dense_tensor() and len(data):
            dense = data.raw_array()
            out = reshape(dense[0]).shape
            return [TensorListCPU.from_dense(dense.reshape((len(data), *out)), layout)]
        return [map_samples(data, layout, reshape)]


def squeeze_axes(shape: tuple[int, ...], layout: str, axes: Sequence[int], names: str) -> list[int]:
    """The non-negative axes that ``squeeze`` removes from a sample of ``shape``.

    Raises:
        ValueError: in DALI's words: both ``axes`` and ``axis_names``, a name the layout lacks,
            an axis named twice, or an axis whose extent is not 1 (the element counts differ).
    """
    if axes and names:
        raise ValueError("squeeze: Provided both ``axes`` and ``axis_names`` arguments")
    missing = [name for name in names or "" if name not in layout]
    if missing:
        raise ValueError(f"squeeze: Axis '{missing[0]}' is not present in the input layout")
    found = _axes_of("squeeze", layout, len(shape), axes, names) if axes or names else []
    resolved = sorted(set(found))
    if len(resolved) != len(found):
        raise ValueError("squeeze: Specified at least twice same dimension to remove.")
    volume = int(np.prod(shape))
    kept = [n for i, n in enumerate(shape) if i not in resolved]
    if any(shape[a] != 1 for a in resolved) and not (volume == 0 and int(np.prod(kept)) == 0):
        raise ValueError(
            f"squeeze: Requested a shape with {int(np.prod(kept))} elements but the original "
            f"shape has {volume} elements. (only dimensions of extent 1 can be removed)"
        )
    return resolved


class SqueezeKernel(Kernel):
    """``squeeze``: remove unit dimensions (a reshape; the data is shared)."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Reshape every sample."""
        (data,) = batch.inputs
        layout = data.layout()
        axes, names = list(self.args["axes"]), self.args["axis_names"]
        removed_layout: set[int] = set()

        def squeeze(sample: np.ndarray) -> np.ndarray:
            removed = squeeze_axes(sample.shape, layout, axes, names)
            removed_layout.update(removed)
            kept = [n for i, n in enumerate(sample.shape) if i not in removed]
            return sample.reshape(kept)

        out = map_samples(data, "", squeeze)
        if layout:
            out.set_layout("".join(c for i, c in enumerate(layout) if i not in removed_layout))
        return [out]


class CastLikeKernel(Kernel):
    """``cast_like``: convert the first input to the element type of the second."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Cast the whole batch with ``cast``'s rounding and saturation."""
        data, like = batch.inputs
        return [cast_batch(data, like.numpy_dtype)]
