"""``tensor_resize``: DALI's resize of any tensor along any axes (geometry here, pixels by
:mod:`.resample`, the kernel ``resize`` uses).

Geometry, as DALI 2.4 computes it for each sample:

* The requested extent of an axis is its ``sizes`` value, or ``scales`` times the input extent
  (in float32); axes not named by ``axes``/``axis_names`` keep their extent (scale 1).
* The source region is ``roi_start``/``roi_end`` (absolute or relative) or the whole axis; a
  region of less than 0.001 is widened to it; start > end mirrors.
* ``mode`` and ``max_size`` adjust the requested extents as in ``resize``; each is then rounded
  by ``size_rounding`` (at least 1 unless the input is empty). With ``subpixel_scale`` the
  source region is rescaled by ``rounded / requested`` around the point ``alignment`` of it
  (0 start, 0.5 centre, 1 end), so the scale stays the requested one.
* Leading and trailing axes that stay as they are drop out; at most three consecutive axes
  remain and are resampled (one more the other side when only one axis changes, as DALI keeps
  two).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import InterpType
from feedline.operators.cpu.common.errors import ArgumentError
from feedline.operators.cpu.common.tensors import output_dtype
from feedline.operators.cpu.image.resample import pick_filter, resample, resample_reference
from feedline.operators.cpu.image.windows import round_half_away

__all__ = ["TensorResizeKernel", "TensorResizePlan", "adjust_output_size", "tensor_resize_plan"]

_OP = "tensor_resize"
_TYPES = (np.uint8, np.int16, np.uint16, np.float32)
_ROUNDING = {
    "round": round_half_away,
    "truncate": math.trunc,
    "ceil": math.ceil,
}
_F32 = np.float32


@dataclass(frozen=True)
class TensorResizePlan:
    """What one sample becomes: the output shape and the axes resampled, with their source
    regions (``start > end`` mirrors)."""

    out_shape: tuple[int, ...]
    axes: tuple[int, ...]
    source: tuple[tuple[float, float], ...]


def adjust_output_size(
    requested: Sequence[float],
    in_size: Sequence[float],
    mode: str,
    max_size: Sequence[float] | None,
) -> list[float]:
    """DALI's output extents for ``mode`` (``default``, ``stretch``, ``not_smaller``,
    ``not_larger``) and ``max_size`` (0: no limit); a requested extent of 0 is missing."""
    ndim = len(requested)
    out = [float(r) for r in requested]
    given = [out[d] != 0 and in_size[d] != 0 for d in range(ndim)]
    scale = [out[d] / in_size[d] if in_size[d] else 1.0 for d in range(ndim)]
    if not any(given):
        return [float(s) for s in in_size]
    limits = list(max_size) if max_size is not None else None
    if mode in ("default", "stretch"):
        if not all(given):
            fill = 1.0
            if mode == "default":
                fill = math.prod(abs(scale[d]) for d in range(ndim) if given[d])
                fill **= 1.0 / sum(given)
            for d in range(ndim):
                if not given[d]:
                    out[d] = float(_F32(in_size[d] * fill))
        if limits is not None:
            for d in range(ndim):
                if limits[d] > 0 and abs(out[d]) > limits[d]:
                    out[d] = math.copysign(limits[d], out[d])
        return out
    chosen = [abs(scale[d]) for d in range(ndim) if given[d]]
    final = max(chosen) if mode == "not_smaller" else min(chosen)
    if limits is not None:
        final = min([final] + [limits[d] / in_size[d] for d in range(ndim) if limits[d] > 0])
    for d in range(ndim):
        if not given[d] or abs(scale[d]) != final:
            out[d] = float(_F32(in_size[d] * math.copysign(final, scale[d])))
    return out


def _resized_axes(ndim: int, layout: str, args: Mapping[str, Any]) -> list[int]:
    axes, names = args["axes"], args["axis_names"]
    if names is not None:
        missing = [n for n in names if n not in layout]
        if missing:
            raise ValueError(
                f"{_OP}: Axis '{missing[0]}' is not present in the input layout {layout!r}"
            )
        return [layout.index(n) for n in names]
    if axes is not None:
        for axis in axes:
            if not -ndim <= axis < ndim:
                raise ValueError(
                    f"{_OP}: Axis index out of range: {axis} not in range [{-ndim},{ndim - 1}]"
                )
        return [axis % ndim for axis in axes]
    return list(range(ndim))


def _per_axis(name: str, values: Sequence[float] | None, count: int) -> list[float] | None:
    if values is None:
        return None
    if len(values) == 1:
        return [float(values[0])] * count
    if len(values) != count:
        raise ValueError(
            f'{_OP}: Argument "{name}" expects either a single value or a list of {count} '
            f"elements. {len(values)} given."
        )
    return [float(v) for v in values]


def _spread(axes: list[int], values: list[float] | None, default: list[float]) -> list[float]:
    result = list(default)
    for axis, value in zip(axes, values or (), strict=False):
        result[axis] = value
    return result


def _source_regions(
    shape: Sequence[int], axes: list[int], args: Mapping[str, Any]
) -> list[list[float]]:
    """``[lo, hi]`` per axis: the ROI (scaled when relative), or the whole axis."""
    ndim = len(shape)
    starts = _per_axis("roi_start", args["roi_start"], len(axes))
    ends = _per_axis("roi_end", args["roi_end"], len(axes))
    if starts is None:
        return [[0.0, float(n)] for n in shape]
    relative = bool(args["roi_relative"])
    starts = _spread(axes, starts, [0.0] * ndim)
    ends = _spread(axes, ends, [1.0] * ndim if relative else [float(n) for n in shape])
    regions = []
    for extent, lo, hi in zip(shape, starts, ends, strict=True):
        if extent == 0:
            regions.append([0.0, 0.0])
            continue
        lo, hi = float(_F32(lo)), float(_F32(hi))
        if relative:
            lo, hi = lo * extent, hi * extent
        if abs(hi - lo) < 1e-3:  # widened a little, as DALI does, so it can be sampled
            offset = 0.0005 if lo <= hi else -0.0005
            lo, hi = lo - offset, hi + offset
        regions.append([float(_F32(lo)), float(_F32(hi))])
    return regions


def tensor_resize_plan(
    shape: Sequence[int], layout: str, args: Mapping[str, Any]
) -> TensorResizePlan:
    """The output shape and the resampling of one sample of ``shape``.

    Raises:
        ValueError: a 0-D input, bad axes, argument lengths that fit neither one value nor one
            per axis, a non-empty output asked of an empty region, or more than three
            consecutive axes to resample.
    """
    ndim = len(shape)
    if ndim < 1:
        raise ValueError(f"{_OP}: Input must be at least 1D")
    axes = _resized_axes(ndim, layout, args)
    count = len(axes)
    in_size = [float(n) for n in shape]
    if args["sizes"] is not None:
        sizes = _per_axis("sizes", args["sizes"], count)
        requested = [float(_F32(v)) for v in _spread(axes, sizes, in_size)]
    else:
        scales = _spread(axes, _per_axis("scales", args["scales"], count), [1.0] * ndim)
        requested = [float(_F32(s) * _F32(n)) for s, n in zip(scales, shape, strict=True)]
    regions = _source_regions(shape, axes, args)
    max_size = _per_axis("max_size", args["max_size"], count)
    limits = _spread(axes, max_size, [float(2**31 - 128)] * ndim) if max_size else None
    alignment = _spread(axes, _per_axis("alignment", args["alignment"], count), [0.5] * ndim)
    extents = []
    for d, (lo, hi) in enumerate(regions):
        if hi < lo:
            regions[d] = [hi, lo]
            requested[d] = -requested[d]
        extents.append(abs(hi - lo))
    requested = adjust_output_size(requested, extents, args["mode"], limits)
    empty = math.prod(shape) == 0
    rounding = _ROUNDING[args["size_rounding"]]
    out_shape, source = [], []
    for d, ((lo, hi), wanted) in enumerate(zip(regions, requested, strict=True)):
        if lo == hi and wanted != 0:
            raise ValueError(f"{_OP}: Cannot produce non-empty output from empty input")
        size = max(0 if empty else 1, int(rounding(abs(wanted))))
        if wanted < 0:
            lo, hi = hi, lo
        if args["subpixel_scale"] and size != abs(wanted):
            factor = min(max(size / abs(wanted), -10.0), 10.0)
            centre = (1.0 - alignment[d]) * lo + alignment[d] * hi
            lo, hi = centre + (lo - centre) * factor, centre + (hi - centre) * factor
        out_shape.append(size)
        source.append((lo, hi))
    block = _resampled_block(shape, out_shape, source)
    return TensorResizePlan(tuple(out_shape), block, tuple(source[d] for d in block))


def _resampled_block(
    shape: Sequence[int], out_shape: Sequence[int], source: Sequence[tuple[float, float]]
) -> tuple[int, ...]:
    """The consecutive axes DALI resamples: all but the leading and trailing ones that stay
    as they are (its C++ truncation of the region included), keeping two where it can."""
    ndim = len(shape)

    def unchanged(d: int) -> bool:
        lo, hi = source[d]
        return out_shape[d] == shape[d] and math.trunc(lo) == 0 and math.trunc(hi) == shape[d]

    first, end = 0, ndim
    spare = max(0, ndim - 2)
    while spare and unchanged(first):
        first, spare = first + 1, spare - 1
    while spare and end - 1 > first and unchanged(end - 1):
        end, spare = end - 1, spare - 1
    if end - first > 3:
        raise ValueError(
            f"{_OP}: TensorResize can not resize more than 3 consecutive spatial dimensions. The "
            "input may contain extra leading and trailing dimensions which are not resized. Got: "
            f"{end - first} spatial dimensions starting at dim {first}"
        )
    return tuple(range(first, end))


def _interp(value: Any) -> InterpType:
    return InterpType(int(np.asarray(value).reshape(())))


class TensorResizeKernel(SampleKernel):
    """Per-sample ``tensor_resize``."""

    def setup(self) -> None:
        """Check the argument combinations DALI refuses."""
        args, given = self.args, self.ctx.tensor_args

        def has(name: str) -> bool:
            return args.get(name) is not None or name in given

        if has("sizes") == has("scales"):
            raise ArgumentError(f"{_OP}: Need one of ``scales`` or ``sizes``, but not both")
        if has("roi_start") != has("roi_end"):
            raise ArgumentError(f"{_OP}: ``roi_start`` and ``roi_end`` must be specified together")
        if args["axes"] is not None and args["axis_names"] is not None:
            raise ArgumentError(f"{_OP}: Arguments `axes` and `axis_names` are mutually exclusive")
        if has("scales") and args["mode"] in ("not_smaller", "not_larger"):
            raise ArgumentError(
                f"{_OP}: Providing ``scales`` is incompatible with not-smaller or not-larger modes"
            )

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Resize one sample."""
        (data,) = inputs
        if data.dtype not in [np.dtype(t) for t in _TYPES]:
            raise TypeError(
                f"{_OP}: Unsupported type: {data.dtype}. Supported types are: uint8, int16, "
                "uint16 and float"
            )
        out_type = output_dtype(_OP, args["dtype"], data.dtype, (data.dtype, np.float32))
        plan = tensor_resize_plan(data.shape, sample.layouts[0], args)
        if data.size == 0:
            return np.zeros(plan.out_shape, out_type)
        interp = _interp(args["interp_type"])
        min_filter, mag_filter = (
            interp if value is None else _interp(value)
            for value in (args["min_filter"], args["mag_filter"])
        )
        antialias = bool(args["antialias"])
        out_size = [plan.out_shape[d] for d in plan.axes]
        if plan.axes == (0, 1) and data.ndim in (2, 3):  # an image: the fast 2-D resampler
            return resample(
                data, out_size, plan.source, min_filter, mag_filter, antialias, out_type
            )
        filters = [
            pick_filter((hi - lo) / n, min_filter, mag_filter)
            for (lo, hi), n in zip(plan.source, out_size, strict=True)
        ]
        return resample_reference(
            data, out_size, plan.source, filters, antialias, out_type, axes=plan.axes
        )
