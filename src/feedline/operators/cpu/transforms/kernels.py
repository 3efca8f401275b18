"""Kernels of the ``transforms.*`` operators.

A transform costs microseconds, so each kernel works on the whole batch at once: the parameters
of every sample (and of every frame, for sequences) are gathered into ``(N, k)`` arrays and the
``N`` matrices are computed together by :mod:`.matrices`, in float64, then rounded to float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import Batch, Kernel, KernelContext
from feedline.core.tensor import TensorListCPU
from feedline.operators.cpu.transforms import matrices

__all__ = [
    "CombineKernel",
    "CropKernel",
    "RotationKernel",
    "ScaleKernel",
    "ShearKernel",
    "TranslationKernel",
]


@dataclass
class _PerSample:
    """The values of a batch: one block per sample, ``(frames, ...)`` each, with
    ``per_frame`` when the frames are real (a sequence); or, for one value per sample of the
    same shape, all of them stacked in ``dense`` ``(batch, ...)`` (the common, fast case)."""

    blocks: list[np.ndarray] | None
    per_frame: bool
    dense: np.ndarray | None = None

    def sample_blocks(self) -> list[np.ndarray]:
        """One ``(frames, ...)`` block per sample."""
        if self.blocks is None:
            return [row[None] for row in self.dense]
        return self.blocks


@dataclass
class _Frames:
    """How many matrices each sample has, and whether the output is a sequence."""

    counts: list[int]
    sequence: bool

    @property
    def total(self) -> int:
        return sum(self.counts)


class _BatchTransform(Kernel):
    """Gathers inputs and arguments, lays them out per frame, and writes the output batch."""

    op: ClassVar[str]
    vector_args: ClassVar[tuple[str, ...]] = ()

    def __init__(self, ctx: KernelContext) -> None:
        super().__init__(ctx)
        self._constants: dict[tuple[str, int], np.ndarray] = {}

    def _fail(self, message: str) -> ValueError:
        return ValueError(f"{self.op}: {message}")

    def _argument(self, batch: Batch, name: str) -> _PerSample | None:
        """The values of argument ``name`` per sample (None when not given)."""
        node = batch.arg_inputs.get(name)
        if node is None:
            value = self.args.get(name)
            if value is None:
                return None
            return _PerSample(None, False, self._constant(name, value, batch.size))
        per_frame = node.layout().startswith("F")
        if not per_frame and node.is_dense_tensor() and len(node):
            values = node.as_array()
            if values.dtype.kind in "fiu":
                return _PerSample(None, False, values.reshape(len(node), -1).astype(np.float64))
        blocks = []
        for sample in node.samples():
            if sample.dtype.kind not in "fiu":
                raise TypeError(f"{self.op}: argument {name!r} must be numeric, got {sample.dtype}")
            array = np.asarray(sample, np.float64)
            if per_frame:
                blocks.append(array.reshape(array.shape[0], -1))
            else:
                blocks.append(array.reshape(1, -1))  # a matrix (shear's) is read row by row
        return _PerSample(blocks, per_frame)

    def _constant(self, name: str, value: Any, size: int) -> np.ndarray:
        """A constant argument as ``(size, k)`` rows (cached: the arguments never change)."""
        key = (name, size)
        rows = self._constants.get(key)
        if rows is None:
            row = np.asarray(value, np.float64).reshape(1, -1)
            rows = self._constants[key] = np.broadcast_to(row, (size, row.shape[1]))
        return rows

    def _input(self, data: TensorListCPU, position: int) -> _PerSample:
        """Input transforms per sample as ``(frames, ndim, ndim + 1)`` blocks."""
        sequence = data.layout().startswith("F")
        if not sequence and data.is_dense_tensor() and len(data):
            stacked = data.as_array()
            shape = stacked.shape[1:]
            if stacked.dtype == np.float32 and len(shape) == 2 and shape[1] == shape[0] + 1:
                return _PerSample(None, False, stacked.astype(np.float64))
        blocks = []
        for sample in data.samples():
            if sample.dtype != np.float32:
                raise TypeError(
                    f"{self.op}: input {position} must be float32 transforms, got {sample.dtype}"
                )
            shape = sample.shape
            matrix_shape = shape[1:] if sequence else shape
            if len(matrix_shape) != 2 or matrix_shape[1] != matrix_shape[0] + 1 or not shape[0]:
                raise self._fail(
                    f"input {position} must hold (ndim, ndim + 1) matrices (or sequences of them, "
                    f"with a layout starting with 'F'), got a sample of shape {shape}"
                )
            blocks.append(sample.astype(np.float64).reshape(-1, *matrix_shape))
        return _PerSample(blocks, sequence)

    def _frames(self, size: int, inputs: Sequence[_PerSample], args: dict) -> _Frames:
        """The number of frames of each sample, from sequence inputs and per-frame arguments."""
        sequences = [x for x in inputs if x.per_frame]
        per_frame = {n: a for n, a in args.items() if a is not None and a.per_frame}
        if not sequences and not per_frame:
            return _Frames([1] * size, False)
        counts = []
        for i in range(size):
            count, origin = None, ""
            for position, data in enumerate(inputs):
                if data.per_frame:
                    frames = len(data.blocks[i])
                    if count is not None and frames != count:
                        raise self._fail(
                            f"The {origin} and the input {position} have different number of "
                            f"frames for sample {i} ({count} and {frames})"
                        )
                    count, origin = frames, f"input {position}"
            for name, values in per_frame.items():
                frames = len(values.blocks[i])
                if count is None or (count == 1 and origin.startswith("argument")):
                    count, origin = frames, f"argument `{name}`"
                elif frames not in (1, count):
                    raise self._fail(
                        f"The sample {i} of tensor argument `{name}` contains {frames} per-frame "
                        f"parameters, but there are {count} frames in the corresponding sample "
                        f"of {origin}."
                    )
            counts.append(1 if count is None else count)
        return _Frames(counts, bool(sequences or per_frame))

    def _stack(self, name: str, values: _PerSample, frames: _Frames) -> np.ndarray:
        """``values`` as one row per frame of the batch, ``(N, ...)``."""
        if values.dense is not None and not frames.sequence:
            return values.dense
        blocks = values.sample_blocks()
        shapes = {block.shape[1:] for block in blocks}
        if len(shapes) > 1:
            raise self._fail(
                f"{name} must have the same number of values in every sample, got shapes "
                f"{sorted(shapes)}"
            )
        rows = [
            block if len(block) == count else np.broadcast_to(block, (count, *block.shape[1:]))
            for block, count in zip(blocks, frames.counts, strict=True)
        ]
        if not rows:
            (shape,) = shapes or {(0,)}
            return np.zeros((0, *shape))
        return np.concatenate(rows)

    def _output(self, result: np.ndarray, frames: _Frames) -> list[TensorListCPU]:
        result = result.astype(np.float32)
        if not frames.sequence:
            return [TensorListCPU.from_dense(result, "**")]
        ends = np.cumsum(frames.counts)
        samples = [
            result[end - count : end] for end, count in zip(ends, frames.counts, strict=True)
        ]
        return [TensorListCPU.from_samples(samples, "F**")]


class _ParametricTransform(_BatchTransform):
    """A transform built from arguments, optionally composed with an input transform."""

    def ndim(self, sizes: dict[str, int], input_ndim: int | None) -> int:
        """The number of dimensions the arguments (and the input) describe."""
        raise NotImplementedError

    def matrices(self, params: dict[str, np.ndarray | None], ndim: int) -> np.ndarray:
        """The ``(N, ndim, ndim + 1)`` transforms for the stacked parameters."""
        raise NotImplementedError

    def _fit(self, params: dict[str, np.ndarray | None], name: str, ndim: int) -> None:
        """Broadcast a one-value argument to ``ndim`` values, or check it has ``ndim``."""
        values = params.get(name)
        if values is None or values.shape[1] == ndim:
            return
        if values.shape[1] != 1:
            raise self._fail(
                f"argument {name!r} has {values.shape[1]} values, which cannot be interpreted as "
                f"a {ndim}-D vector (expected {ndim} values, or one for every axis)"
            )
        params[name] = np.repeat(values, ndim, axis=1)

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """The transforms of every sample (and frame); none for an empty batch (e.g. the
        branch of a conditional that no sample takes)."""
        if batch.size == 0:
            return self._output(np.zeros((0, 2, 3)), _Frames([], False))
        inputs = [self._input(data, i) for i, data in enumerate(batch.inputs)]
        args = {name: self._argument(batch, name) for name in self.vector_args}
        frames = self._frames(batch.size, inputs, args)
        params = {
            name: None if values is None else self._stack(name, values, frames)
            for name, values in args.items()
        }
        stacked = self._stack("the input", inputs[0], frames) if inputs else None
        input_ndim = None if stacked is None else stacked.shape[1]
        sizes = {name: values.shape[1] for name, values in params.items() if values is not None}
        ndim = self.ndim(sizes, input_ndim)
        if input_ndim is not None and input_ndim != ndim:
            raise self._fail(
                f"the input describes a {input_ndim}D transform but the arguments describe a "
                f"{ndim}D transform"
            )
        result = self.matrices(params, ndim)
        if stacked is not None:
            order = (result, stacked) if self.args["reverse_order"] else (stacked, result)
            result = matrices.compose(*order)
        return self._output(result, frames)


class TranslationKernel(_ParametricTransform):
    """``transforms.translation``."""

    op = "transforms.translation"
    vector_args = ("offset",)

    def ndim(self, sizes: dict[str, int], input_ndim: int | None) -> int:
        """The length of ``offset``."""
        return sizes["offset"]

    def matrices(self, params: dict[str, np.ndarray | None], ndim: int) -> np.ndarray:
        """``[I | offset]``."""
        return matrices.translation(params["offset"])


class ScaleKernel(_ParametricTransform):
    """``transforms.scale``."""

    op = "transforms.scale"
    vector_args = ("scale", "center")

    def ndim(self, sizes: dict[str, int], input_ndim: int | None) -> int:
        """The length of ``scale``; for one value, the input's, ``ndim`` or 1."""
        if sizes["scale"] > 1:
            return sizes["scale"]
        if input_ndim is not None:
            return input_ndim
        return self.args["ndim"] if self.args["ndim"] is not None else 1

    def matrices(self, params: dict[str, np.ndarray | None], ndim: int) -> np.ndarray:
        """``diag(scale)`` about ``center``."""
        self._fit(params, "scale", ndim)
        self._fit(params, "center", ndim)
        return matrices.scale(params["scale"], params["center"])


class RotationKernel(_ParametricTransform):
    """``transforms.rotation``."""

    op = "transforms.rotation"
    vector_args = ("angle", "axis", "center")

    def ndim(self, sizes: dict[str, int], input_ndim: int | None) -> int:
        """3 with an ``axis``, else 2."""
        if sizes["angle"] != 1:
            raise self._fail(f"argument 'angle' must be one value, got {sizes['angle']}")
        if "axis" in sizes and sizes["axis"] != 3:
            raise self._fail(f"argument 'axis' must have 3 values, got {sizes['axis']}")
        return 3 if "axis" in sizes else 2

    def matrices(self, params: dict[str, np.ndarray | None], ndim: int) -> np.ndarray:
        """The rotation about ``center``."""
        self._fit(params, "center", ndim)
        return matrices.rotation(params["angle"], params["axis"], params["center"])


class ShearKernel(_ParametricTransform):
    """``transforms.shear``."""

    op = "transforms.shear"
    vector_args = ("shear", "angles", "center")

    def setup(self) -> None:
        """Exactly one of ``shear`` and ``angles``."""
        given = {n for n in ("shear", "angles") if self.args.get(n) is not None}
        given |= self.ctx.tensor_args & {"shear", "angles"}
        if len(given) != 1:
            raise self._fail("one and only one of the arguments 'shear' and 'angles' is expected")

    def ndim(self, sizes: dict[str, int], input_ndim: int | None) -> int:
        """2 for 2 factors, 3 for 6."""
        size = sizes.get("shear", sizes.get("angles"))
        if size not in (2, 6):
            raise self._fail(
                f"a shear needs D * (D - 1) values, D being the number of dimensions (2 for 2-D, "
                f"6 for 3-D); got {size}"
            )
        return 2 if size == 2 else 3

    def matrices(self, params: dict[str, np.ndarray | None], ndim: int) -> np.ndarray:
        """The shear about ``center``."""
        self._fit(params, "center", ndim)
        factors = params["shear"]
        if factors is None:
            factors = np.tan(np.deg2rad(params["angles"]))
        return matrices.shear(factors, params["center"])


class CropKernel(_ParametricTransform):
    """``transforms.crop``."""

    op = "transforms.crop"
    vector_args = ("from_start", "from_end", "to_start", "to_end")

    def ndim(self, sizes: dict[str, int], input_ndim: int | None) -> int:
        """The longest of the four boxes' corners."""
        ndim = max(sizes.values())
        if any(size not in (1, ndim) for size in sizes.values()):
            given = ", ".join(f"{name}: {size}" for name, size in sizes.items())
            raise self._fail(
                "arguments from_start, from_end, to_start and to_end must have the same number "
                f"of values (or one); got {given}"
            )
        return ndim

    def matrices(self, params: dict[str, np.ndarray | None], ndim: int) -> np.ndarray:
        """The box-to-box map."""
        for name in self.vector_args:
            self._fit(params, name, ndim)
        corners = [params[name] for name in self.vector_args]
        return matrices.crop(*corners, absolute=self.args["absolute"])


class CombineKernel(_BatchTransform):
    """``transforms.combine``."""

    op = "transforms.combine"

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """The composition of the inputs, sample by sample (and frame by frame)."""
        inputs = [self._input(data, i) for i, data in enumerate(batch.inputs)]
        frames = self._frames(batch.size, inputs, {})
        stacks = [self._stack(f"input {i}", data, frames) for i, data in enumerate(inputs)]
        shapes = {stack.shape[1:] for stack in stacks}
        if len(shapes) > 1:
            raise self._fail(
                "all input transforms must have the same shape, got "
                + ", ".join(str(stack.shape[1:]) for stack in stacks)
            )
        if self.args["reverse_order"]:
            stacks.reverse()
        return self._output(matrices.compose(*stacks), frames)
