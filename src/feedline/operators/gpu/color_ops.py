"""GPU kernels of the colour twist family (``hue``, ``saturation``, ``hsv``, ``color_twist``)
and of ``bb_flip`` and ``coord_transform``: per-sample matrices and flags are computed on the
host by the CPU kernels' functions, then one launch processes the batch."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from feedline.core.types import to_numpy_dtype
from feedline.operators.cpu.color.adjust import ColorTwistKernel, twist_params
from feedline.operators.cpu.geometry.bbox import BbFlipKernel, check_boxes
from feedline.operators.cpu.geometry.coords import (
    CoordTransformKernel,
    check_points,
    transform_matrix,
)
from feedline.operators.gpu.backend import type_id
from feedline.operators.gpu.base import GpuBatch, GpuKernel, Outputs

__all__ = ["BbFlipGpu", "ColorTwistGpu", "CoordTransformGpu"]

Rng = Callable[[int], np.random.Generator]


class ColorTwistGpu(GpuKernel, ColorTwistKernel):
    """``hue``, ``saturation``, ``hsv`` and ``color_twist`` on the GPU."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Twist the colours of every sample (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        images = [backend.xp.ascontiguousarray(s) for s in inputs[0]]
        if not images:
            return [([], layouts[0])]
        rows, matrices, out_types = [], [], set()
        for image, sample_args in zip(images, args, strict=True):
            matrix, offset, axis, out_type = twist_params(
                self.ctx.schema.name, image, layouts[0], sample_args
            )
            inner = int(np.prod(image.shape[axis + 1 :], dtype=np.int64))
            rows.append([image.size // (3 * inner), inner])
            matrices.append([*np.asarray(matrix, np.float64).ravel(), offset, 0.0, 0.0])
            out_types.add(out_type)
        out_type = out_types.pop()
        wide = images[0].dtype == np.int32 or out_type == np.int32
        outs = backend.output([tuple(i.shape) for i in images], out_type)
        backend.call(
            "flg_color_twist",
            type_id(images[0].dtype),
            type_id(out_type),
            int(wide),
            len(images),
            max(r[0] * r[1] for r in rows),
            backend.asarray(rows, np.int64),
            backend.pointers(images),
            backend.pointers(outs),
            backend.asarray(matrices, np.float64),
        )
        return [(outs, layouts[0])]


class BbFlipGpu(GpuKernel, BbFlipKernel):
    """``bb_flip`` on the GPU (float32 boxes, as the CPU kernel returns)."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Flip the boxes of every sample (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        boxes = []
        for sample in inputs[0]:
            check_boxes(sample)
            boxes.append(backend.xp.ascontiguousarray(sample, dtype=np.float32))
        if not boxes:
            return [([], layouts[0])]
        flags = [
            int(bool(a["ltrb"])) | int(bool(a["horizontal"])) << 1 | int(bool(a["vertical"])) << 2
            for a in args
        ]
        counts = [b.size // 4 for b in boxes]
        outs = backend.output([tuple(b.shape) for b in boxes], np.float32)
        backend.call(
            "flg_bb_flip",
            len(boxes),
            max(counts),
            backend.asarray(counts, np.int64),
            backend.pointers(boxes),
            backend.pointers(outs),
            backend.asarray(flags, np.int32),
        )
        return [(outs, layouts[0])]


class CoordTransformGpu(GpuKernel, CoordTransformKernel):
    """``coord_transform`` on the GPU (float64 arithmetic, as on the CPU)."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Transform the points of every sample (one launch)."""
        backend, inputs, layouts, args = batch.backend, batch.inputs, batch.layouts, batch.args
        points = [backend.xp.ascontiguousarray(s) for s in inputs[0]]
        if not points:
            return [([], layouts[0])]
        rows, affines, shapes, offset = [], [], [], 0
        for sample, sample_args in zip(points, args, strict=True):
            if sample.ndim == 0:
                raise ValueError("points must have at least one dimension (the vector components)")
            affine = transform_matrix(
                sample.shape[-1], sample_args["M"], sample_args["T"], sample_args["MT"]
            )
            check_points(sample, affine, sample_args["dtype"])
            out_dim, in_dim = affine.shape[0], affine.shape[1] - 1
            count = sample.size // in_dim if in_dim else 0
            rows.append([count, in_dim, out_dim, offset])
            affines.append(affine.ravel())
            offset += affine.size
            shapes.append((*sample.shape[:-1], out_dim))
        out_type = to_numpy_dtype(args[0]["dtype"])
        if out_type.kind != "f":
            raise NotImplementedError(
                f"coord_transform: integer output ({out_type}) is not implemented on the GPU; "
                "run the operator with device='cpu'"
            )
        outs = backend.output(shapes, out_type)
        backend.call(
            "flg_coord_transform",
            type_id(points[0].dtype),
            type_id(out_type),
            len(points),
            max(r[0] * r[2] for r in rows),
            backend.asarray(rows, np.int64),
            backend.pointers(points),
            backend.pointers(outs),
            backend.asarray(np.concatenate(affines), np.float64),
        )
        return [(outs, layouts[0])]
