"""``filter`` and ``laplacian``: 2-D correlations computed in float32 with OpenCV, as DALI does
(``filter`` of uint8 into uint8 with a compiled kernel that computes what OpenCV does).

Both round integer outputs to nearest with halves to even and saturate (OpenCV's and DALI's
conversion). ``laplacian`` also takes volumes (3 spatial axes), convolved with NumPy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NoReturn

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import DataType, to_numpy_dtype
from feedline.operators.cpu.common.errors import ArgumentError
from feedline.operators.cpu.common.frames import (
    PlaneSplit,
    from_planes,
    split_axes,
    stack_planes,
    to_planes,
)
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype
from feedline.operators.cpu.filters.bindings import filter_u8

__all__ = [
    "FilterKernel",
    "LaplacianKernel",
    "binomial_window",
    "correlate",
    "derivative_window",
    "laplacian",
]

_FILTER_TYPES = (np.uint8, np.int16, np.uint16, np.float32)
_LAPLACIAN_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64,
                    np.int64, np.float32)  # fmt: skip
_MAX_WINDOW = 31


#: DALI's spellings of the border modes → the canonical name.
BORDERS = {"reflect_101": "reflect_101", "reflect101": "reflect_101", "101": "reflect_101",
           "reflect_1001": "reflect_1001", "reflect1001": "reflect_1001", "1001": "reflect_1001",
           "wrap": "wrap", "clamp": "clamp", "constant": "constant"}  # fmt: skip


def _cv_border(cv2: Any, border: str) -> int:
    return {
        "reflect_101": cv2.BORDER_REFLECT_101,
        "reflect_1001": cv2.BORDER_REFLECT,
        "wrap": cv2.BORDER_WRAP,
        "clamp": cv2.BORDER_REPLICATE,
        "constant": cv2.BORDER_CONSTANT,
    }[BORDERS[border]]


def _to_output(values: np.ndarray, dtype: np.dtype, in_place: bool = False) -> np.ndarray:
    """float32 results in ``dtype``: rounded half to even and saturated for integers
    (``in_place``: ``values``, a scratch array, may be overwritten on the way)."""
    if dtype.kind == "f":
        return values.astype(dtype, copy=False)
    info = np.iinfo(dtype)
    if not in_place:
        return np.clip(np.rint(values), info.min, info.max).astype(dtype)
    np.rint(values, out=values)
    np.clip(values, info.min, info.max, out=values)
    return values.astype(dtype)


def correlate(
    plane: np.ndarray,
    taps: np.ndarray,
    anchor: tuple[int, int],
    border: str,
    fill: float,
    dtype: np.dtype,
    dst: np.ndarray | None = None,
) -> np.ndarray:
    """Correlate one ``HW``/``HWC`` plane with 2-D ``taps`` placed at ``anchor`` (row, column).

    ``dst`` (of the plane's shape and ``dtype``), when given, may receive the result directly.
    uint8 planes filtered into uint8 run the compiled kernel of
    :mod:`~feedline.operators.cpu.filters.bindings` where it is available: it gives what the
    OpenCV calls below give, bit for bit.
    """
    if plane.dtype == np.uint8 and dtype == np.uint8 and plane.ndim == 3:
        if dst is None:
            out = np.empty(plane.shape, np.uint8)
        else:
            out = dst if dst.shape == plane.shape else dst.reshape(plane.shape)
        if filter_u8(plane, taps, anchor, BORDERS[border], fill, out):
            return out
    cv2 = import_cv2("filter")
    rows, cols = taps.shape
    ay, ax = anchor
    depth = -1 if dtype == plane.dtype else cv2.CV_32F
    if plane.ndim == 3 and plane.shape[2] > 4:
        channels = [correlate(plane[:, :, c], taps, anchor, border, fill, dtype)
                    for c in range(plane.shape[2])]  # fmt: skip
        return np.stack(channels, axis=-1)
    border = BORDERS[border]
    if border == "wrap" or (border == "constant" and fill != 0):
        padded = cv2.copyMakeBorder(
            plane, ay, rows - 1 - ay, ax, cols - 1 - ax, _cv_border(cv2, border), value=(fill,) * 4
        )
        out = cv2.filter2D(padded, depth, taps, anchor=(0, 0), borderType=cv2.BORDER_ISOLATED)
        out = out[: plane.shape[0], : plane.shape[1]]
    elif dst is not None and (dtype == plane.dtype or dtype == np.float32):
        view = dst.reshape(plane.shape[:2]) if plane.shape[2:] == (1,) else dst
        cv2.filter2D(plane, depth, taps, dst=view, anchor=(ax, ay),
                     borderType=_cv_border(cv2, border))  # fmt: skip
        return dst
    else:
        out = cv2.filter2D(plane, depth, taps, anchor=(ax, ay), borderType=_cv_border(cv2, border))
    if out.ndim < plane.ndim:
        out = out[..., None]
    return _to_output(out, dtype) if out.dtype != dtype else out


def _valid(plane: np.ndarray, taps: np.ndarray, dtype: np.dtype, op: str, index: int) -> np.ndarray:
    height, width = plane.shape[:2]
    rows, cols = taps.shape
    if rows > height or cols > width:
        raise ValueError(
            f"{op}: Filter for sample of idx {index} is bigger than the sample. This is not "
            "allowed if ``mode`` is set to ``valid``."
        )
    out = correlate(plane, taps, (0, 0), "reflect_101", 0.0, dtype)
    return out[: height - rows + 1, : width - cols + 1]


class FilterKernel(SampleKernel):
    """Per-sample ``filter`` (and ``experimental.filter``)."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Filter one image or sequence."""
        op = self.ctx.schema.name
        image, taps = inputs[0], np.asarray(inputs[1])
        layout = sample.layouts[0]
        if "F" in layout and not layout.startswith("F"):
            raise ValueError(
                f"{op}: When the input is video-like (i.e. contains frames), the frames must be "
                f"an outermost dimension. However, got input with `{layout}` layout."
            )
        split = split_axes(op, layout, image.ndim)
        if image.dtype not in _FILTER_TYPES:
            raise TypeError(f"{op}: Filter CPU does not support input type {image.dtype}.")
        check_dtype(op, taps, (np.float32,), "filter")
        dtype = _output_type(op, args["dtype"], image.dtype)
        planes = to_planes(image, split)
        per_plane = _plane_filters(op, taps, split, image.shape, len(planes))
        fill = _fill_value(op, inputs[2] if len(inputs) > 2 else None, image.dtype)
        if len(planes) == 1 and args["mode"] == "same":  # straight into the batch's buffer
            target = sample.output(image.shape, dtype)
            where = _anchor(op, args["anchor"], per_plane[0].shape, sample.index)
            view = target.reshape(planes.shape[1:])
            result = correlate(planes[0], per_plane[0], where, args["border"], fill, dtype, view)
            if result is not view and not np.shares_memory(result, target):
                target[...] = result.reshape(image.shape)
            return target
        results = []
        for plane, plane_taps in zip(planes, per_plane, strict=True):
            if args["mode"] == "valid":
                results.append(_valid(plane, plane_taps, dtype, op, sample.index))
            else:
                where = _anchor(op, args["anchor"], plane_taps.shape, sample.index)
                results.append(correlate(plane, plane_taps, where, args["border"], fill, dtype))
        return from_planes(stack_planes(results), split, image.shape)


def _output_type(op: str, dtype: Any, input_type: np.dtype) -> np.dtype:
    if dtype is None or dtype == DataType.NO_TYPE:
        return np.dtype(input_type)
    result = to_numpy_dtype(dtype)
    if result not in (input_type, np.float32):
        raise ValueError(
            f"{op}: Output data type must be same as input, FLOAT or skipped (defaults to input "
            "type)"
        )
    return result


def _plane_filters(
    op: str, taps: np.ndarray, split: PlaneSplit, shape: tuple[int, ...], count: int
) -> list[np.ndarray]:
    if split.spatial == 2 and taps.ndim == 2:
        return [taps] * count
    frames = shape[0] if split.frames else 0
    if split.spatial == 2 and taps.ndim == 3 and frames and len(taps) == frames:
        return [taps[p // (count // frames)] for p in range(count)]
    if split.spatial == 3 and taps.ndim == 3:
        raise ValueError(f"{op}: the CPU operator does not support volumetric (3D) data")
    raise ValueError(
        f"{op}: Filter dimensionality must match the number of spatial dimensions in the input "
        f"samples. Got {split.spatial} spatial dimensions but the filter is {taps.ndim} "
        "dimensional."
    )


def _fill_value(op: str, value: np.ndarray | None, dtype: np.dtype) -> float:
    if value is None:
        return 0.0
    value = np.asarray(value)
    if value.size != 1:
        raise ValueError(f"{op}: fill_value must be a scalar, got shape {value.shape}")
    if value.dtype != dtype:
        raise TypeError(f"{op}: fill_value must have the input's type ({dtype}), got {value.dtype}")
    return float(value.reshape(()))


def _anchor(op: str, anchor: Any, shape: tuple[int, ...], index: int) -> tuple[int, int]:
    """The ``(row, column)`` of the filter's anchor (``-1``: the centre) for sample ``index``.

    Raises:
        ValueError: not 1 or 2 values, or a value outside the filter; the messages are DALI's.
    """
    key = anchor if isinstance(anchor, tuple) else tuple(np.ravel(anchor).tolist())
    placed = _placed_anchor(key, shape)
    if placed is None:
        _reject_anchor(op, key, shape, index)
    return placed


@lru_cache(maxsize=256)  # a pure function of its arguments, asked once per sample
def _placed_anchor(anchor: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[int, int] | None:
    """:func:`_anchor`'s result, or None where it raises."""
    values = _anchor_values(anchor)
    if len(values) != 2 or not _within(values, shape):
        return None
    ay, ax = (extent // 2 if v == -1 else v for v, extent in zip(values, shape, strict=True))
    return ay, ax


def _anchor_values(anchor: Any) -> list[int]:
    values = [int(v) for v in np.asarray(anchor).ravel()]
    return values * 2 if len(values) == 1 else values


def _within(values: list[int], shape: tuple[int, ...]) -> bool:
    return all(-1 <= v < extent for v, extent in zip(values, shape, strict=True))


def _reject_anchor(op: str, anchor: Any, shape: tuple[int, ...], index: int) -> NoReturn:
    values = _anchor_values(anchor)
    if len(values) != 2:
        raise ValueError(f'{op}: Argument "anchor" expected shape 2 but got {len(values)} values')
    raise ValueError(
        f"{op}: Anchor must lie within the filter. Got anchor {{{values[0]}, {values[1]}}} "
        f"with a filter of shape {shape[0]} x {shape[1]} for sample of idx {index}."
    )


def binomial_window(size: int) -> np.ndarray:
    """The smoothing window of ``size`` taps: binomial coefficients (``[1, 2, 1]`` for 3)."""
    taps = np.ones(1)
    for _ in range(size - 1):
        taps = np.convolve(taps, [1.0, 1.0])
    return taps.astype(np.float32)


def derivative_window(size: int) -> np.ndarray:
    """The second-derivative window of ``size`` taps: ``[1, -2, 1]`` convolved with binomial
    taps (``[1, 0, -2, 0, 1]`` for 5)."""
    return np.convolve([1.0, -2.0, 1.0], binomial_window(size - 2)).astype(np.float32)


def _per_axis(name: str, values: Any, count: int, per_sample: bool, index: int) -> list[Any]:
    """One value per spatial axis from one value or ``count`` of them (DALI's messages)."""
    values = list(np.ravel(values))
    if len(values) == 1:
        return values * count
    if len(values) == count:
        return values
    if per_sample:
        raise ValueError(
            f"laplacian: Argument {name} for sample {index} is expected to have 1 or {count} "
            f"elements, got: {len(values)}"
        )
    raise ValueError(
        f'laplacian: Argument "{name}" expects either a single value or a list of {count} '
        f"elements. {len(values)} given."
    )


def _sizes(what: str, sizes: list[Any], low: int, index: int) -> list[int]:
    sizes = [int(v) for v in sizes]
    for size in sizes:
        if size % 2 == 0 or not low <= size <= _MAX_WINDOW:
            raise ValueError(
                f"laplacian: {what} must be an odd integer between {low} and {_MAX_WINDOW}, "
                f"got {size} for sample: {index}."
            )
    return sizes


def laplacian(
    image: np.ndarray,
    spatial: Sequence[int],
    windows: Sequence[int],
    smoothing: Sequence[int] | None,
    scales: Sequence[float],
    exact_zeros: bool = True,
) -> np.ndarray:
    """The float32 Laplacian of ``image`` over its ``spatial`` axes (any other axes are
    independent), one window size, smoothing size and scale per spatial axis.

    ``exact_zeros=False`` may leave ``-0.0`` where the sum started from ``+0.0`` gives ``+0.0``
    (one pass less, for results rounded to integers)."""
    work = image.astype(np.float32)
    total = None
    taps = _laplacian_taps(tuple(windows), None if smoothing is None else tuple(smoothing))
    for scale, axis_taps in zip(scales, taps, strict=True):
        term = _separable(work, spatial, axis_taps)  # a new array
        if scale != 1:
            term *= np.float32(scale)
        if total is None:
            total = term
        else:
            total += term
    if exact_zeros:  # the sum as if started from +0.0: only a sum of -0.0s changes (to +0.0)
        total += np.float32(0)
    return total


@lru_cache(maxsize=64)  # a pure function of its arguments, asked once per sample
def _laplacian_taps(
    windows: tuple[int, ...], smoothing: tuple[int, ...] | None
) -> tuple[tuple[np.ndarray, ...], ...]:
    """For each derivative axis ``j``, the window of every spatial axis: the second derivative
    along ``j``, smoothing along the others (read-only arrays)."""
    taps = []
    for j in range(len(windows)):
        axes = []
        for i in range(len(windows)):
            if i == j:
                window = derivative_window(windows[j])
            else:
                window = binomial_window(windows[j] if smoothing is None else smoothing[i])
            window.flags.writeable = False
            axes.append(window)
        taps.append(tuple(axes))
    return tuple(taps)


def _separable(work: np.ndarray, spatial: Sequence[int], taps: Sequence[np.ndarray]) -> np.ndarray:
    """Correlate a ``(*spatial, channels)`` array with one window per spatial axis."""
    if len(spatial) == 2 and work.shape[-1] <= 4:
        cv2 = import_cv2("laplacian")
        out = cv2.sepFilter2D(work, cv2.CV_32F, taps[1], taps[0], borderType=cv2.BORDER_REFLECT_101)
        return out.reshape(work.shape)
    out = work
    for axis, window in zip(spatial, taps, strict=True):
        out = _correlate_axis(out, window, axis)
    return out


def _correlate_axis(data: np.ndarray, taps: np.ndarray, axis: int) -> np.ndarray:
    radius = len(taps) // 2
    if radius == 0:
        return data * taps[0]
    pad = [(0, 0)] * data.ndim
    pad[axis] = (radius, radius)
    padded = np.pad(data, pad, mode="reflect")
    out = np.zeros_like(data)
    extent = data.shape[axis]
    for k, weight in enumerate(taps):
        index = [slice(None)] * data.ndim
        index[axis] = slice(k, k + extent)
        out += weight * padded[tuple(index)]
    return out


class LaplacianKernel(SampleKernel):
    """Per-sample ``laplacian``."""

    def setup(self) -> None:
        """Reject ``normalized_kernel`` together with ``scale``."""
        if self.ctx.args["normalized_kernel"] and (
            self.ctx.args.get("scale") is not None or "scale" in self.ctx.tensor_args
        ):
            raise ArgumentError(
                "laplacian: Parameter ``scale`` cannot be specified when ``normalized_kernel`` "
                "is set to True"
            )

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """The Laplacian of one sample."""
        (image,) = inputs
        split = split_axes("laplacian", sample.layouts[0], image.ndim)
        check_dtype("laplacian", image, _LAPLACIAN_TYPES)
        dtype = _output_type("laplacian", args["dtype"], image.dtype)
        ndim, index, tensor = split.spatial, sample.index, self.ctx.tensor_args

        def per_axis(name: str) -> list[Any]:
            return _per_axis(name, args[name], ndim, name in tensor, index)

        windows = _sizes("Window size", per_axis("window_size"), 3, index)
        smoothing = None
        if args["smoothing_size"] is not None:
            smoothing = _sizes("Smoothing window size", per_axis("smoothing_size"), 1, index)
        if args["normalized_kernel"]:
            scales = _normalizing_scales(windows, smoothing, ndim)
        elif args["scale"] is None:
            scales = [1.0] * ndim
        else:
            scales = [float(v) for v in per_axis("scale")]
        spatial = tuple(range(ndim))
        planes = to_planes(image, split)
        exact = dtype.kind == "f"
        result = stack_planes(
            [laplacian(plane, spatial, windows, smoothing, scales, exact) for plane in planes]
        )
        return from_planes(_to_output(result, dtype, in_place=True), split, image.shape)


def _normalizing_scales(
    windows: Sequence[int], smoothing: Sequence[int] | None, ndim: int
) -> list[float]:
    """``2 ** (ndim + 2 - s)`` per derivative, ``s`` the sum of its window sizes."""
    scales = []
    for j in range(ndim):
        others = [windows[j] if smoothing is None else smoothing[i]
                  for i in range(ndim) if i != j]  # fmt: skip
        scales.append(2.0 ** (ndim + 2 - windows[j] - sum(others)))
    return scales
