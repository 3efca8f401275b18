"""``coord_transform`` (``out = M @ in + T``) and ``coord_flip`` (mirror about a centre)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel, SampleContext, SampleKernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import DataType, to_numpy_dtype
from feedline.operators.cpu.common.frames import check_frame_counts, frame_value
from feedline.operators.cpu.geometry.bindings import affine_points_f32
from feedline.operators.cpu.tensor.basic import cast_array

__all__ = [
    "CoordFlipKernel",
    "CoordTransformKernel",
    "check_points",
    "flip_coords",
    "resolve_coord_layout",
    "transform_batch",
    "transform_matrix",
    "transform_points",
]

_FLOAT_TYPES = (DataType.FLOAT, DataType.FLOAT64, DataType.FLOAT16)


def _as_matrix(value: Any, name: str, in_dim: int, extra_cols: int) -> np.ndarray:
    """A scalar, flat list or 2-D array → an ``(m, in_dim + extra_cols)`` matrix."""
    array = np.asarray(value, dtype=np.float64)
    cols = in_dim + extra_cols
    if array.ndim == 0 or array.size == 1:
        diagonal = np.zeros((in_dim, cols))
        diagonal[np.arange(in_dim), np.arange(in_dim)] = array.reshape(())
        return diagonal
    if array.ndim == 2:
        if array.shape[1] != cols:
            raise ValueError(
                f"{name} has {array.shape[1]} columns; points with {in_dim} components need {cols}"
            )
        return array
    if array.ndim != 1 or array.size % cols:
        raise ValueError(
            f"{name} with {array.size} values cannot form a matrix of {cols} columns "
            f"(points have {in_dim} components)"
        )
    return array.reshape(-1, cols)


def transform_matrix(in_dim: int, M: Any, T: Any, MT: Any) -> np.ndarray:
    """The ``(m, in_dim + 1)`` affine matrix ``[M | T]`` for ``coord_transform`` arguments.

    ``M``: None (identity), a scalar (diagonal), a flat row-major list or an ``(m, n)`` matrix.
    ``T``: None (zero), a scalar (broadcast) or ``m`` values. ``MT``: the block ``[M T]``
    instead of both.

    Raises:
        ValueError: for sizes that do not fit the points or each other, or MT given with M/T.
    """
    if MT is not None:
        if M is not None or T is not None:
            raise ValueError("MT cannot be combined with M or T")
        return _as_matrix(MT, "MT", in_dim, 1)
    matrix = np.eye(in_dim) if M is None else _as_matrix(M, "M", in_dim, 0)
    translation = np.zeros(matrix.shape[0])
    if T is not None:
        t = np.asarray(T, dtype=np.float64).reshape(-1)
        if t.size == 1:
            translation[:] = t[0]
        elif t.size == matrix.shape[0]:
            translation = t
        else:
            raise ValueError(f"T has {t.size} values; M has {matrix.shape[0]} rows")
    return np.concatenate([matrix, translation[:, None]], axis=1)


def check_points(points: Any, affine: np.ndarray, dtype: DataType) -> None:
    """Check points, matrix and output type of ``coord_transform``.

    Raises:
        TypeError: for non-numeric points or a non-floating output type.
        ValueError: for 0-D points or a matrix whose width does not fit them.
    """
    if points.dtype == np.bool_ or not np.issubdtype(points.dtype, np.number):
        raise TypeError(f"points must be numeric, got {points.dtype}")
    if dtype not in _FLOAT_TYPES and to_numpy_dtype(dtype) != points.dtype:
        raise TypeError(
            "CoordTransform output type must be the same as input type, which is "
            f"{points.dtype}, or `float`. Got: {to_numpy_dtype(dtype)}"
        )
    if points.ndim == 0:
        raise ValueError("points must have at least one dimension (the vector components)")
    if affine.shape[1] != points.shape[-1] + 1:
        raise ValueError(
            f"the transform expects {affine.shape[1] - 1}-component points, "
            f"got shape {points.shape}"
        )


def transform_points(points: np.ndarray, affine: np.ndarray, dtype: DataType) -> np.ndarray:
    """Apply ``[M | T]`` to the last axis of ``points`` (in float64) and convert to ``dtype``: a
    float type, or the points' own integer type (rounded half away from zero and saturated, as
    DALI does).

    Raises:
        TypeError: for non-numeric points, or an integer output type other than theirs.
        ValueError: for 0-D points or a matrix whose width does not fit them.
    """
    check_points(points, affine, dtype)
    matrix, translation = affine[:, :-1], affine[:, -1]
    out = points.astype(np.float64) @ matrix.T + translation
    return cast_array(out, to_numpy_dtype(dtype))


def transform_batch(points: np.ndarray, affines: np.ndarray, dtype: DataType) -> np.ndarray:
    """Apply per-sample affine matrices ``affines`` ``(batch or 1, m, n + 1)`` to the last axis
    of the stacked points ``(batch, ..., n)`` and convert to float ``dtype``.

    float32 points to float32 go through the compiled kernel of :mod:`.bindings`; otherwise
    computed component by component on ``(batch, points)`` planes (the same float64 sums):
    NumPy is slow on the short innermost axes (2 or 3) that a matrix product over the last
    axis would loop on.

    Raises:
        TypeError: for non-numeric points or a non-floating output type.
        ValueError: for a matrix whose width does not fit the points.
    """
    check_points(points[0] if len(points) else points, affines[0], dtype)
    if to_numpy_dtype(dtype) == np.float32:
        compiled = affine_points_f32(points, affines)
        if compiled is not None:
            return compiled
    batch, in_dim = len(points), points.shape[-1]
    flat = points.reshape(batch, -1, in_dim)
    planes = [np.ascontiguousarray(flat[..., j], dtype=np.float64) for j in range(in_dim)]
    out = np.empty((batch, flat.shape[1], affines.shape[1]), to_numpy_dtype(dtype))
    for i in range(affines.shape[1]):
        row = np.broadcast_to(affines[:, i, -1, None], (batch, flat.shape[1])).copy()
        for j, plane in enumerate(planes):
            row += plane * affines[:, i, j, None]
        out[..., i] = row
    return out.reshape((batch, *points.shape[1:-1], affines.shape[1]))


def resolve_coord_layout(layout: str, ndim: int) -> str:
    """Check ``coord_flip``'s layout; ``""`` gives ``"x"``, ``"xy"`` or ``"xyz"``."""
    if not layout:
        return "xyz"[:ndim]
    if len(layout) != ndim or len(set(layout)) != ndim or set(layout) - set("xyz"):
        raise ValueError(
            f"layout {layout!r} must name each of the {ndim} coordinates with x, y or z"
        )
    return layout


def flip_coords(
    coords: np.ndarray, layout: str, flips: Mapping[str, bool], centres: Mapping[str, float]
) -> np.ndarray:
    """Mirror coordinates ``c -> 2 * centre - c`` on the axes whose flag is set.

    Args:
        coords: ``(N, ndim)`` float coordinates, ``ndim`` in 1..3.
        layout: the axis of each column (``"xy"``, ``"yx"``…), or ``""`` for the default.
        flips: flag per axis name (``x``, ``y``, ``z``); axes the points lack are not applicable.
        centres: flip centre per axis name.

    Returns:
        float32 coordinates of the input's shape.
    """
    if not np.issubdtype(coords.dtype, np.floating):
        raise TypeError(f"coordinates must be floating point, got {coords.dtype}")
    if coords.ndim != 2 or not 1 <= coords.shape[1] <= 3:
        raise ValueError(f"coordinates must have shape (N, 1..3), got {coords.shape}")
    layout = resolve_coord_layout(layout, coords.shape[1])
    out = coords.astype(np.float32)
    for column, axis in enumerate(layout):
        if flips[axis]:
            out[:, column] = np.float32(2.0 * centres[axis]) - out[:, column]
    return out


class CoordTransformKernel(Kernel):
    """``coord_transform`` on a batch: one matrix product for the whole batch when the points
    (and any per-sample ``M``/``T``/``MT``) have the same shape in every sample, else sample by
    sample."""

    def setup(self) -> None:
        given = {n for n in ("M", "T", "MT") if self.args.get(n) is not None}
        given |= self.ctx.tensor_args & {"M", "T", "MT"}
        if "MT" in given and len(given) > 1:
            others = " or ".join(sorted(given - {"MT"}))
            raise ValueError(f"MT cannot be combined with {others}")

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Transform the points of every sample."""
        (points,) = batch.inputs
        layout, sources = points.layout(), points.source_infos()
        per_frame = {n for n, node in batch.arg_inputs.items() if node.layout().startswith("F")}
        if per_frame:
            sequence = layout.startswith("F")
            out = [
                self._transform_frames(sample, sequence, index, batch.arg_inputs, per_frame)
                for index, sample in enumerate(points.samples())
            ]
            if not sequence:
                layout = f"F{layout}" if layout else ""
            return [TensorListCPU.from_samples(out, layout, sources)]
        affines = self._stacked_affines(points, batch.arg_inputs)
        if affines is not None:
            out = transform_batch(points.as_array(), affines, self.args["dtype"])
            return [TensorListCPU.from_dense(out, layout, sources)]
        out = []
        for index, sample in enumerate(points.samples()):
            args = {n: self._value(batch.arg_inputs, n, index) for n in ("M", "T", "MT")}
            if sample.ndim == 0:
                raise ValueError("points must have at least one dimension (the vector components)")
            affine = transform_matrix(sample.shape[-1], args["M"], args["T"], args["MT"])
            out.append(transform_points(sample, affine, self.args["dtype"]))
        return [TensorListCPU.from_samples(out, layout, sources)]

    def _transform_frames(
        self,
        sample: np.ndarray,
        sequence: bool,
        index: int,
        arg_inputs: Mapping[str, TensorListCPU],
        per_frame: set[str],
    ) -> np.ndarray:
        """Transform one sample frame by frame, each frame with its own ``M``/``T``/``MT`` (an
        argument with one frame serves them all). Points without a frame axis are repeated for
        every frame of the arguments.

        Raises:
            ValueError: when an argument's frame count is neither 1 nor the sample's.
        """
        values = {n: self._value(arg_inputs, n, index) for n in ("M", "T", "MT")}
        counts = {n: len(values[n]) for n in sorted(per_frame)}
        if sequence:
            frames, where = sample.shape[0], "input 0"
        else:
            frames, where = max(counts.values()), f"argument `{max(counts, key=counts.get)}`"
        check_frame_counts(index, counts, frames, where)
        results = []
        for frame in range(frames):
            args = {
                n: frame_value(value, frame) if n in per_frame else value
                for n, value in values.items()
            }
            frame_points = sample[frame] if sequence else sample
            if frame_points.ndim == 0:
                raise ValueError("points must have at least one dimension (the vector components)")
            affine = transform_matrix(frame_points.shape[-1], args["M"], args["T"], args["MT"])
            results.append(transform_points(frame_points, affine, self.args["dtype"]))
        if not results:
            return np.empty(sample.shape, to_numpy_dtype(self.args["dtype"]))
        return np.stack(results)

    def _value(self, arg_inputs: Mapping[str, TensorListCPU], name: str, index: int) -> Any:
        if name in arg_inputs:
            return arg_inputs[name].at(index)
        return self.args.get(name)

    def _stacked_affines(
        self, points: TensorListCPU, arg_inputs: Mapping[str, TensorListCPU]
    ) -> np.ndarray | None:
        """The ``(batch or 1, m, n + 1)`` matrices when one product can serve the batch."""
        if not len(points) or not points.is_dense_tensor() or points.ndim == 0:
            return None
        in_dim = points.as_array().shape[-1]
        if not arg_inputs:
            affine = transform_matrix(in_dim, self.args["M"], self.args["T"], self.args["MT"])
            return affine[None]
        if set(arg_inputs) != {"MT"} or not arg_inputs["MT"].is_dense_tensor():
            return None
        block = arg_inputs["MT"].as_array().reshape(len(points), -1)
        if block.shape[1] <= 1 or block.shape[1] % (in_dim + 1):
            return None
        return block.reshape(len(points), -1, in_dim + 1).astype(np.float64)


class CoordFlipKernel(SampleKernel):
    """``coord_flip`` on one sample."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        flips = {axis: bool(args[f"flip_{axis}"]) for axis in "xyz"}
        centres = {axis: float(args[f"center_{axis}"]) for axis in "xyz"}
        return flip_coords(inputs[0], args["layout"], flips, centres)
