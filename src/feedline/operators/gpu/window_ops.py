"""GPU kernels of crop, flip, transpose, pad, cast, crop_mirror_normalize and
brightness/contrast: each plans one :class:`~feedline.operators.gpu.window.Window` per sample
with the CPU kernel's own geometry helpers, and launches ``flg_window`` once per batch."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.types import to_numpy_dtype
from feedline.operators.cpu.color.adjust import (
    BC_TYPES,
    BrightnessContrastKernel,
    bc_affine,
    bc_args,
)
from feedline.operators.cpu.common.tensors import (
    check_dtype,
    check_not_empty,
    output_dtype,
    resolve_layout,
)
from feedline.operators.cpu.geometry.flip import FLIP_DEFAULTS, FLIP_LAYOUTS, FlipKernel
from feedline.operators.cpu.image.cmn import (
    CMN_LAYOUTS,
    CropMirrorNormalizeKernel,
    centre_gain,
    fill_value,
    has_crop,
    output_plan,
)
from feedline.operators.cpu.image.crop import (
    CROP_LAYOUTS,
    CROP_TYPES,
    DEFAULT_LAYOUTS,
    CropKernel,
    crop_image,
    crop_window,
)
from feedline.operators.cpu.tensor.basic import CastKernel
from feedline.operators.cpu.tensor.layout import (
    PadKernel,
    TransposeKernel,
    pad_plan,
    transpose_order,
)
from feedline.operators.gpu.backend import Backend
from feedline.operators.gpu.base import GpuBatch, GpuKernel, Outputs
from feedline.operators.gpu.window import (
    CAST,
    CENTRE,
    SATURATE,
    SCALE,
    SCALE64,
    Params,
    Window,
    launch_window,
    plain_window,
    strides_of,
)

__all__ = [
    "BrightnessContrastGpu",
    "CastGpu",
    "CropGpu",
    "CropMirrorNormalizeGpu",
    "FlipGpu",
    "PadGpu",
    "TransposeGpu",
    "crop_plan",
]

Rng = Callable[[int], np.random.Generator]


def _contiguous(backend: Backend, samples: Sequence[Any]) -> list[Any]:
    return [backend.xp.ascontiguousarray(s) for s in samples]


def crop_plan(
    op: str, image: Any, layout: str, args: Mapping[str, Any]
) -> tuple[Window, list[float]]:
    """The window of ``crop`` for one sample and its fill values (in the input's type).

    The output shape and every error come from the CPU kernel's ``crop_image`` run on a
    stand-in of the sample's shape, so the GPU crop accepts and rejects what the CPU one does.
    """
    stand_in = np.broadcast_to(np.zeros((), np.uint8), image.shape)
    out_shape = crop_image(op, stand_in, layout, args).shape
    window = crop_window(op, layout, image.shape, args)
    policy = args.get("out_of_bounds_policy") or "error"
    anchor = [0] * image.ndim
    for axis, (start, _) in window.items():
        anchor[axis] = min(max(start, 0), image.shape[axis]) if policy == "trim_to_shape" else start
    fill = np.asarray(args.get("fill_values") or (0.0,), np.float64).ravel()
    fill_in = fill.astype(image.dtype).astype(np.float64).tolist()
    return (
        Window(tuple(out_shape), tuple(image.shape), strides_of(image), tuple(anchor)),
        fill_in,
    )


class CropGpu(GpuKernel, CropKernel):
    """``crop`` on the GPU."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Crop every sample (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        samples = _contiguous(backend, inputs[0])
        if not samples:
            return [([], layouts[0])]
        windows, fills, out_types = [], [], set()
        for image, sample_args in zip(samples, args, strict=True):
            layout = resolve_layout("crop", layouts[0], image.ndim, CROP_LAYOUTS, DEFAULT_LAYOUTS)
            check_not_empty("crop", image)
            out_types.add(output_dtype("crop", sample_args["dtype"], image.dtype, CROP_TYPES))
            window, fill = crop_plan("crop", image, layout, sample_args)
            windows.append(window)
            fills.append(fill)
        channel = layout.find("C")
        width = len(fills[0])
        per_channel = width > 1 and channel >= 0
        params = Params(fill=[f if per_channel else f[:1] for f in fills])
        outs = launch_window(
            backend,
            SATURATE,
            samples,
            windows,
            out_types.pop(),
            channel if per_channel else -1,
            params,
        )
        return [(outs, self.layout_of(layouts))]


class FlipGpu(GpuKernel, FlipKernel):
    """``flip`` on the GPU."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Flip every sample (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        samples = _contiguous(backend, inputs[0])
        windows = []
        for image, sample_args in zip(samples, args, strict=True):
            layout = resolve_layout("flip", layouts[0], image.ndim, FLIP_LAYOUTS, FLIP_DEFAULTS)
            check_not_empty("flip", image)
            mirror = {
                layout.find(name)
                for name, flag in (("W", "horizontal"), ("H", "vertical"), ("D", "depthwise"))
                if sample_args[flag] and name in layout
            }
            window = plain_window(image)
            window.mirror = frozenset(mirror)
            windows.append(window)
        dtype = samples[0].dtype if samples else np.uint8
        return [
            (launch_window(backend, SATURATE, samples, windows, dtype), self.layout_of(layouts))
        ]


class TransposeGpu(GpuKernel, TransposeKernel):
    """``transpose`` on the GPU."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Transpose every sample (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        samples = _contiguous(backend, inputs[0])
        windows = []
        for data, sample_args in zip(samples, args, strict=True):
            order = transpose_order(sample_args, data.ndim)
            strides = strides_of(data)
            windows.append(
                Window(
                    tuple(data.shape[a] for a in order),
                    tuple(data.shape[a] for a in order),
                    tuple(strides[a] for a in order),
                )
            )
        dtype = samples[0].dtype if samples else np.uint8
        return [
            (launch_window(backend, SATURATE, samples, windows, dtype), self.layout_of(layouts))
        ]


class PadGpu(GpuKernel, PadKernel):
    """``pad`` on the GPU."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Pad every sample at the end of the chosen axes (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        samples = _contiguous(backend, inputs[0])
        if not samples:
            return [([], layouts[0])]
        extents, fills = pad_plan(
            self.args,
            layouts[0],
            [s.shape for s in samples],
            samples[0].dtype,
            lambda name, i: args[i][name],
        )
        windows = []
        for data, extent in zip(samples, extents, strict=True):
            window = plain_window(data)
            window.out_shape = tuple(extent)
            windows.append(window)
        params = Params(fill=[[0.0 if f is None else f] for f in fills])
        outs = launch_window(backend, SATURATE, samples, windows, samples[0].dtype, -1, params)
        return [(outs, layouts[0])]


class CastGpu(GpuKernel, CastKernel):
    """``cast`` on the GPU (DALI's rounding and saturation)."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Convert every sample (one launch)."""
        backend, inputs, layouts = batch.backend, batch.inputs, batch.layouts
        samples = _contiguous(backend, inputs[0])
        windows = [plain_window(s) for s in samples]
        dtype = to_numpy_dtype(self.args["dtype"])
        return [(launch_window(backend, CAST, samples, windows, dtype), layouts[0])]


class CropMirrorNormalizeGpu(GpuKernel, CropMirrorNormalizeKernel):
    """``crop_mirror_normalize`` on the GPU: crop, mirror, normalise, pad channels, change
    layout and type in one pass over each sample."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Process every sample (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        op = "crop_mirror_normalize"
        samples = _contiguous(backend, inputs[0])
        windows, params, out_layouts = [], Params(), set()
        channel_out = -1
        for image, sample_args in zip(samples, args, strict=True):
            layout = resolve_layout(op, layouts[0], image.ndim, CMN_LAYOUTS, {3: "HWC", 4: "FHWC"})
            check_not_empty(op, image)
            if has_crop(sample_args):
                window, fill = crop_plan(op, image, layout, sample_args)
            else:
                window, fill = plain_window(image), [0.0]
                window.anchor = (0,) * image.ndim
            out_layout, order, channel_out, channels, _, shape = output_plan(
                layout, window.out_shape, sample_args
            )
            centre, gain = centre_gain(sample_args, channels)
            mirror = {out_layout.index("W")} if sample_args.get("mirror") else set()
            windows.append(
                Window(
                    tuple(shape),
                    tuple(window.in_extent[a] for a in order),
                    tuple(window.in_stride[a] for a in order),
                    tuple(window.anchor[a] for a in order),
                    frozenset(mirror),
                    channels,
                )
            )
            given = sample_args.get("fill_values") or (0.0,)  # written as given, not cast
            fills = np.resize(
                np.asarray(given if has_crop(sample_args) else fill, np.float64), channels
            )
            params.gain.append(gain.tolist())
            params.offset.append(centre.tolist())
            params.fill.append(fills.tolist())
            params.pad.append(fill_value(sample_args))
            out_layouts.add(out_layout)
        outs = launch_window(backend, CENTRE, samples, windows, self._out_type, channel_out, params)
        layout = out_layouts.pop() if out_layouts else self.layout_of(layouts)
        return [(outs, layout)]


class BrightnessContrastGpu(GpuKernel, BrightnessContrastKernel):
    """``brightness``, ``contrast`` and ``brightness_contrast`` on the GPU."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Adjust every sample (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        op = self.ctx.schema.name
        samples = _contiguous(backend, inputs[0])
        if not samples:
            return [([], layouts[0])]
        params, out_types, wide = Params(), set(), set()
        for image, sample_args in zip(samples, args, strict=True):
            check_not_empty(op, image)
            check_dtype(op, image, BC_TYPES)
            out_type = output_dtype(op, sample_args.get("dtype"), image.dtype, BC_TYPES)
            gain, offset, work = bc_affine(image.dtype, out_type, **bc_args(sample_args))
            params.gain.append([float(gain)])
            params.offset.append([float(offset)])
            out_types.add(out_type)
            wide.add(work == np.float64)
        mode = SCALE64 if wide.pop() else SCALE
        windows = [plain_window(s) for s in samples]
        outs = launch_window(backend, mode, samples, windows, out_types.pop(), -1, params)
        return [(outs, layouts[0])]
