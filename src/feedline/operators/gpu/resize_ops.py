"""GPU kernels of ``resize`` and ``random_resized_crop``: sizes, windows and filter taps are
computed on the host by the CPU kernel's own functions (the random window from the sample's
generator, as on the CPU), then every image or frame of the batch is resampled by one
``flg_resample`` call: a row pass for the whole batch into a float32 scratch buffer, then a
column pass (two launches, whatever the batch size)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.types import InterpType
from feedline.operators.cpu.image.bindings import axis_weights_native
from feedline.operators.cpu.image.resample import FILTER_IDS, Source, axis_weights, pick_filter
from feedline.operators.cpu.image.resize import (
    RandomResizedCropKernel,
    ResizeKernel,
    check_resample_input,
    filters_from_args,
    rrc_window,
    spatial_size,
)
from feedline.operators.cpu.image.windows import resize_plan
from feedline.operators.gpu.backend import Backend, type_id
from feedline.operators.gpu.base import GpuBatch, GpuKernel, Outputs

__all__ = ["RandomResizedCropGpu", "ResizeGpu", "resample_batch"]

_NEAREST = InterpType.INTERP_NN


def _taps(
    in_size: int,
    out_size: int,
    span: tuple[float, float],
    interp: InterpType,
    antialias: bool,
    native: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """The axis's ``(first, weights)``: the compiled CPU kernel's taps for 8-bit images (what
    the CPU resize uses), else the NumPy reference's."""
    start, end = span
    if native:
        taps = axis_weights_native(in_size, out_size, start, end, FILTER_IDS[interp], antialias)
        if taps is not None:
            return taps
    return axis_weights(in_size, out_size, start, end, interp, antialias)


def _frames(
    image: Any, layout: str
) -> list[tuple[Any, tuple[int, int, int], tuple[int, int, int]]]:
    """Per image or frame: the view, its ``(height, width, channels)`` and element strides."""
    step = [s // image.itemsize for s in image.strides]
    frames = [image[f] for f in range(image.shape[0])] if layout[0] == "F" else [image]
    inner = layout[1:] if layout[0] == "F" else layout
    if layout[0] == "F":
        step = step[1:]
    h, w = inner.index("H"), inner.index("W")
    c = inner.find("C")
    shape = frames[0].shape
    extent = (shape[h], shape[w], shape[c] if c >= 0 else 1)
    strides = (step[h], step[w], step[c] if c >= 0 else 0)
    return [(frame, extent, strides) for frame in frames]


def resample_batch(
    backend: Backend,
    images: Sequence[Any],
    layout: str,
    plans: Sequence[tuple[tuple[int, int], Source]],
    args: Sequence[Mapping[str, Any]],
    out_type: np.dtype,
) -> list[Any]:
    """Resample every sample to its ``(out_size, source)`` plan (one row pass and one column
    pass for the whole batch)."""
    if not images:
        return []
    out_shapes = []
    for image, (out_size, _) in zip(images, plans, strict=True):
        shape = list(image.shape)
        shape[layout.index("H")], shape[layout.index("W")] = out_size
        out_shapes.append(tuple(shape))
    outs = backend.output(out_shapes, out_type)
    rows, firsts, weights, ins, dsts = [], [], [], [], []
    first_at = weight_at = scratch_at = 0
    for image, out, (out_size, source), sample_args in zip(images, outs, plans, args, strict=True):
        min_filter, mag_filter = filters_from_args(sample_args)
        antialias = bool(sample_args["antialias"])
        native = image.dtype == np.uint8 and np.dtype(out_type) == np.uint8
        axes = []
        for axis in range(2):
            in_frames = _frames(image, layout)
            extent = in_frames[0][1][axis]
            (start, end), n = source[axis], out_size[axis]
            interp = pick_filter((end - start) / n, min_filter, mag_filter)
            first, weight = _taps(extent, n, (start, end), interp, antialias, native)
            axes.append((first, weight, interp == _NEAREST))
        locations = []
        for first, weight, _ in axes:
            locations += [first_at, weight_at]
            firsts.append(np.asarray(first, np.int32))
            weights.append(np.asarray(weight, np.float32).ravel())
            first_at += len(first)
            weight_at += weights[-1].size
        flags = int(axes[0][2]) | int(axes[1][2]) << 1
        col_first, col_weight = axes[1][0], axes[1][1]
        col_lo = int(np.min(col_first))
        width = 0 if flags == 3 else int(np.max(col_first)) + col_weight.shape[1] - col_lo
        for (frame, extent, strides), (target, _, out_strides) in zip(
            _frames(image, layout), _frames(out, layout), strict=True
        ):
            rows.append(
                [
                    *extent,
                    *strides,
                    *out_size,
                    *out_strides,
                    axes[0][1].shape[1],
                    axes[1][1].shape[1],
                    locations[0],
                    locations[2],
                    locations[1],
                    locations[3],
                    flags,
                    scratch_at,
                    col_lo,
                    width,
                ]
            )
            scratch_at += out_size[0] * width * extent[2]
            ins.append(frame)
            dsts.append(target)
    backend.call(
        "flg_resample",
        type_id(images[0].dtype),
        type_id(out_type),
        len(rows),
        max(r[6] * r[7] * r[2] for r in rows),
        max(r[6] * r[20] * r[2] for r in rows),
        backend.asarray(rows, np.int64),
        backend.pointers(ins),
        backend.pointers(dsts),
        backend.asarray(np.concatenate(firsts)),
        backend.asarray(np.concatenate(weights)),
        backend.empty((max(scratch_at, 1),), np.float32),
    )
    return outs


class ResizeGpu(GpuKernel, ResizeKernel):
    """``resize`` on the GPU."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Resize every sample (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        images = [backend.xp.ascontiguousarray(s) for s in inputs[0]]
        plans, kinds = [], set()
        for image, sample_args in zip(images, args, strict=True):
            layout, out_type = check_resample_input("resize", image, layouts[0], sample_args)
            plans.append(resize_plan("resize", spatial_size(layout, image.shape), sample_args))
            kinds.add((layout, out_type))
        if not images:
            return [([], layouts[0])]
        layout, out_type = kinds.pop()
        return [(resample_batch(backend, images, layout, plans, args, out_type), layouts[0])]


class RandomResizedCropGpu(GpuKernel, RandomResizedCropKernel):
    """``random_resized_crop`` on the GPU (windows drawn on the host as on the CPU)."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Crop and resize every sample (one launch)."""
        backend, inputs, layouts, args, rng = (
            batch.backend,
            batch.inputs,
            batch.layouts,
            batch.args,
            batch.rng,
        )
        op = "random_resized_crop"
        images = [backend.xp.ascontiguousarray(s) for s in inputs[0]]
        plans, kinds = [], set()
        for i, (image, sample_args) in enumerate(zip(images, args, strict=True)):
            layout, out_type = check_resample_input(op, image, layouts[0], sample_args)
            height, width = spatial_size(layout, image.shape)
            y, x, h, w = rrc_window(sample_args, height, width, rng(i))
            plans.append((self._size, ((float(y), float(y + h)), (float(x), float(x + w)))))
            kinds.add((layout, out_type))
        if not images:
            return [([], layouts[0])]
        layout, out_type = kinds.pop()
        return [(resample_batch(backend, images, layout, plans, args, out_type), layouts[0])]
