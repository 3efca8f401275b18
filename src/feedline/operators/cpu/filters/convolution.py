"""``filter`` and ``laplacian``: 2-D correlations computed in float32 with OpenCV, as DALI does.

Both round integer outputs to nearest with halves to even and saturate (OpenCV's and DALI's
conversion). ``laplacian`` also takes volumes (3 spatial axes), convolved with NumPy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.frames import from_frames, to_frames
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype, output_dtype, resolve_layout

__all__ = [
    "FilterKernel",
    "LaplacianKernel",
    "binomial_window",
    "correlate",
    "derivative_window",
    "laplacian",
]

_PLANAR = ("HW", "HWC", "CHW", "FHW", "FHWC", "FCHW")
_DEFAULTS = {2: "HW", 3: "HWC", 4: "FHWC"}
_FILTER_TYPES = (np.uint8, np.int16, np.uint16, np.float32)
_LAPLACIAN_TYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float32)
_VOLUMES = ("DHW", "DHWC", "CDHW", "FDHW", "FDHWC", "FCDHW")


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
            f"{op}: in 'valid' mode the filter ({rows}x{cols}) must fit in the image "
            f"({height}x{width})"
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
        layout = resolve_layout(op, sample.layouts[0], image.ndim, _PLANAR, _DEFAULTS)
        check_dtype(op, image, _FILTER_TYPES)
        check_dtype(op, taps, (np.float32,), "filter")
        dtype = output_dtype(op, args["dtype"], image.dtype, (image.dtype, np.float32))
        frames = to_frames(image, layout)
        per_frame = _frame_filters(op, taps, layout, len(frames))
        fill = _fill_value(op, inputs[2] if len(inputs) > 2 else None, image.dtype)
        anchor = args["anchor"]
        results = []
        for frame, frame_taps in zip(frames, per_frame, strict=True):
            if args["mode"] == "valid":
                results.append(_valid(frame, frame_taps, dtype, op))
            else:
                where = _anchor(op, anchor, frame_taps.shape)
                results.append(correlate(frame, frame_taps, where, args["border"], fill, dtype))
        return from_frames(np.stack(results), layout)


def _frame_filters(op: str, taps: np.ndarray, layout: str, count: int) -> Sequence[np.ndarray]:
    if taps.ndim == 2:
        return [taps] * count
    if taps.ndim == 3 and layout.startswith("F") and len(taps) == count:
        return list(taps)
    raise ValueError(
        f"{op}: the filter must be a 2-D array (or, for a sequence of {count} frames, {count} "
        f"2-D arrays); got shape {taps.shape}"
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
        if size % 2 == 0 or not low <= size <= 23:
            raise ValueError(
                f"laplacian: argument {name!r} = {size}: sizes must be odd, from {low} to 23"
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
    if len(spatial) == 2 and tuple(spatial) == (0, 1) and work.ndim <= 3:
        cv2 = import_cv2("laplacian")
        if work.ndim == 2 or work.shape[2] <= 4:
            out = cv2.sepFilter2D(
                work, cv2.CV_32F, taps[1], taps[0], borderType=cv2.BORDER_REFLECT_101
            )
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
        layout = sample.layouts[0] or _DEFAULTS.get(image.ndim, "")
        if len(layout) != image.ndim or layout not in _PLANAR + _VOLUMES:
            raise ValueError(
                f"laplacian: layout {layout!r} of a {image.ndim}-D input is not supported; "
                f"expected one of {', '.join(_PLANAR + _VOLUMES)}"
            )
        check_dtype("laplacian", image, _LAPLACIAN_TYPES)
        dtype = output_dtype("laplacian", args["dtype"], image.dtype, (image.dtype, np.float32))
        channel_last = not layout.removeprefix("F").startswith("C")
        frames = to_frames(image, layout) if layout in _PLANAR else _volume_frames(image, layout)
        ndim = 2 if layout in _PLANAR else 3
        windows = _sizes("window_size", args["window_size"], ndim, 3)
        smoothing = args["smoothing_size"]
        smoothing = None if smoothing is None else _sizes("smoothing_size", smoothing, ndim, 1)
        scales = _scales(args, windows, smoothing, ndim)
        spatial = tuple(range(ndim))
        result = np.stack(
            [laplacian(frame, spatial, windows, smoothing, scales) for frame in frames]
        )
        result = _to_output(result, dtype)
        if layout in _PLANAR:
            return from_frames(result, layout)
        return _volume_restore(result, layout, channel_last)


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


def _volume_frames(image: np.ndarray, layout: str) -> np.ndarray:
    frames = image if layout.startswith("F") else image[None]
    inner = layout.removeprefix("F")
    if inner == "DHW":
        frames = frames[..., None]
    elif inner == "CDHW":
        frames = np.moveaxis(frames, 1, -1)
    return frames


def _volume_restore(result: np.ndarray, layout: str, channel_last: bool) -> np.ndarray:
    inner = layout.removeprefix("F")
    if inner == "DHW":
        result = result[..., 0]
    elif not channel_last:
        result = np.ascontiguousarray(np.moveaxis(result, -1, 1))
    return result if layout.startswith("F") else result[0]
