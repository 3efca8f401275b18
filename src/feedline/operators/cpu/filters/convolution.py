"""``filter`` and ``laplacian``: 2-D correlations computed in float32 with OpenCV, as DALI does.

Both round integer outputs to nearest with halves to even and saturate (OpenCV's and DALI's
conversion). ``laplacian`` also takes volumes (3 spatial axes), convolved with NumPy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.frames import PlaneSplit, from_planes, split_axes, to_planes
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype, output_dtype

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


def _cv_border(cv2: Any, border: str) -> int:
    return {
        "reflect_101": cv2.BORDER_REFLECT_101,
        "reflect_1001": cv2.BORDER_REFLECT,
        "wrap": cv2.BORDER_WRAP,
        "clamp": cv2.BORDER_REPLICATE,
        "constant": cv2.BORDER_CONSTANT,
    }[border]


def _to_output(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float32 results in ``dtype``: rounded half to even and saturated for integers."""
    if dtype.kind == "f":
        return values.astype(dtype, copy=False)
    info = np.iinfo(dtype)
    return np.clip(np.rint(values), info.min, info.max).astype(dtype)


def correlate(
    plane: np.ndarray,
    taps: np.ndarray,
    anchor: tuple[int, int],
    border: str,
    fill: float,
    dtype: np.dtype,
) -> np.ndarray:
    """Correlate one ``HW``/``HWC`` plane with 2-D ``taps`` placed at ``anchor`` (row, column)."""
    cv2 = import_cv2("filter")
    rows, cols = taps.shape
    ay, ax = anchor
    depth = -1 if dtype == plane.dtype else cv2.CV_32F
    if plane.ndim == 3 and plane.shape[2] > 4:
        channels = [correlate(plane[:, :, c], taps, anchor, border, fill, dtype)
                    for c in range(plane.shape[2])]  # fmt: skip
        return np.stack(channels, axis=-1)
    if border == "wrap" or (border == "constant" and fill != 0):
        padded = cv2.copyMakeBorder(
            plane, ay, rows - 1 - ay, ax, cols - 1 - ax, _cv_border(cv2, border), value=(fill,) * 4
        )
        out = cv2.filter2D(padded, depth, taps, anchor=(0, 0), borderType=cv2.BORDER_ISOLATED)
        out = out[: plane.shape[0], : plane.shape[1]]
    else:
        out = cv2.filter2D(plane, depth, taps, anchor=(ax, ay), borderType=_cv_border(cv2, border))
    if out.ndim < plane.ndim:
        out = out[..., None]
    return _to_output(out, dtype) if out.dtype != dtype else out


def _valid(plane: np.ndarray, taps: np.ndarray, dtype: np.dtype, op: str = "filter") -> np.ndarray:
    height, width = plane.shape[:2]
    rows, cols = taps.shape
    if rows > height or cols > width:
        raise ValueError(
            f"{op}: the filter ({rows}x{cols}) is bigger than the sample ({height}x{width}), "
            "which is not allowed in 'valid' mode"
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
        split = split_axes(op, sample.layouts[0], image.ndim, spatial=(2,))
        check_dtype(op, image, _FILTER_TYPES)
        check_dtype(op, taps, (np.float32,), "filter")
        dtype = output_dtype(op, args["dtype"], image.dtype, (image.dtype, np.float32))
        planes = to_planes(image, split)
        per_plane = _plane_filters(op, taps, split, image.shape, len(planes))
        fill = _fill_value(op, inputs[2] if len(inputs) > 2 else None, image.dtype)
        results = []
        for plane, plane_taps in zip(planes, per_plane, strict=True):
            if args["mode"] == "valid":
                results.append(_valid(plane, plane_taps, dtype, op))
            else:
                where = _anchor(op, args["anchor"], plane_taps.shape)
                results.append(correlate(plane, plane_taps, where, args["border"], fill, dtype))
        return from_planes(np.stack(results), split, image.shape)


def _plane_filters(
    op: str, taps: np.ndarray, split: PlaneSplit, shape: tuple[int, ...], count: int
) -> list[np.ndarray]:
    if taps.ndim == 2:
        return [taps] * count
    frames = shape[0] if split.frames else 0
    if taps.ndim == 3 and frames and len(taps) == frames:
        return [taps[p // (count // frames)] for p in range(count)]
    raise ValueError(
        f"{op}: filter dimensionality must match the number of spatial dimensions of the input "
        f"(2), or be one 2-D filter per frame of a sequence; got shape {taps.shape}"
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


def _anchor(op: str, anchor: Any, shape: tuple[int, ...]) -> tuple[int, int]:
    values = [int(v) for v in np.asarray(anchor).ravel()]
    if len(values) == 1:
        values *= 2
    if len(values) != 2:
        raise ValueError(f"{op}: anchor must have 1 or 2 values, got {len(values)}")
    result = []
    for value, extent in zip(values, shape, strict=True):
        if value == -1:
            value = extent // 2
        if not 0 <= value < extent:
            raise ValueError(
                f"{op}: anchor {values} must lie within the filter (0 to extent - 1 for a "
                f"{shape[0]}x{shape[1]} filter) or be -1"
            )
        result.append(value)
    return result[0], result[1]


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


def _sizes(name: str, values: Any, count: int, low: int) -> list[int]:
    sizes = [int(v) for v in np.asarray(values).ravel()]
    if len(sizes) == 1:
        sizes *= count
    if len(sizes) != count:
        raise ValueError(
            f"laplacian: argument {name!r} has {len(sizes)} values; give 1 or one per spatial "
            f"axis ({count})"
        )
    for size in sizes:
        if size % 2 == 0 or not low <= size <= _MAX_WINDOW:
            raise ValueError(
                f"laplacian: argument {name!r} = {size}: sizes must be odd integers between "
                f"{low} and {_MAX_WINDOW}"
            )
    return sizes


def laplacian(
    image: np.ndarray,
    spatial: Sequence[int],
    windows: Sequence[int],
    smoothing: Sequence[int] | None,
    scales: Sequence[float],
) -> np.ndarray:
    """The float32 Laplacian of ``image`` over its ``spatial`` axes (any other axes are
    independent), one window size, smoothing size and scale per spatial axis."""
    work = image.astype(np.float32)
    total = np.zeros(work.shape, np.float32)
    for j in range(len(spatial)):
        taps = []
        for i in range(len(spatial)):
            if i == j:
                taps.append(derivative_window(windows[j]))
            else:
                taps.append(binomial_window(windows[j] if smoothing is None else smoothing[i]))
        total += np.float32(scales[j]) * _separable(work, spatial, taps)
    return total


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
            self.ctx.args["scale"] is not None or "scale" in self.ctx.tensor_args
        ):
            raise ValueError("laplacian: give either normalized_kernel=True or scale, not both")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """The Laplacian of one sample."""
        (image,) = inputs
        split = split_axes("laplacian", sample.layouts[0], image.ndim)
        check_dtype("laplacian", image, _LAPLACIAN_TYPES)
        dtype = output_dtype("laplacian", args["dtype"], image.dtype, (image.dtype, np.float32))
        ndim = split.spatial
        windows = _sizes("window_size", args["window_size"], ndim, 3)
        smoothing = args["smoothing_size"]
        smoothing = None if smoothing is None else _sizes("smoothing_size", smoothing, ndim, 1)
        scales = _scales(args, windows, smoothing, ndim)
        spatial = tuple(range(ndim))
        planes = to_planes(image, split)
        result = np.stack(
            [laplacian(plane, spatial, windows, smoothing, scales) for plane in planes]
        )
        return from_planes(_to_output(result, dtype), split, image.shape)


def _scales(
    args: Mapping[str, Any], windows: Sequence[int], smoothing: Sequence[int] | None, ndim: int
) -> list[float]:
    if args["normalized_kernel"]:
        scales = []
        for j in range(ndim):
            others = [windows[j] if smoothing is None else smoothing[i]
                      for i in range(ndim) if i != j]  # fmt: skip
            scales.append(2.0 ** (ndim + 2 - windows[j] - sum(others)))
        return scales
    values = [1.0] if args["scale"] is None else [float(v) for v in np.ravel(args["scale"])]
    if len(values) == 1:
        values *= ndim
    if len(values) != ndim:
        raise ValueError(
            f"laplacian: argument 'scale' has {len(values)} values; give 1 or one per spatial "
            f"axis ({ndim})"
        )
    return values
