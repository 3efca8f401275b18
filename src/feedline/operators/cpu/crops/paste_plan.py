"""``multi_paste``'s batch plan: the regions of every output sample, worked out all at once.

:func:`plan_batch` reads each region argument of the whole batch as one flat ``(R, 2)`` array
(the ``R`` regions of all outputs, each output's in order), checks them with a few NumPy calls
and lays out the canvases. :func:`paste_share` then zeroes a share of the canvases and copies
their regions, with one call of the compiled copy kernel (without the GIL) where the data
allows it, else with NumPy slices. What the plan cannot vouch for (a malformed argument, a
region out of bounds, mixed channel counts…) makes it return None, and the kernel's
per-sample path reports it with the sample and region at fault.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.kernel import Batch
from feedline.operators.cpu.crops.bindings import CropKernels

__all__ = ["PastePlan", "compiled_regions", "paste_share", "plan_batch"]

_FLOOR, _CEIL = np.floor, np.ceil


class _Unplanned(Exception):
    """Something only the per-sample path reports (or handles) as the operator must."""


@dataclass(frozen=True)
class PastePlan:
    """Where every region of a batch comes from and goes to.

    Attributes:
        pool: the samples the regions come from.
        src: ``(R,)`` the pool sample of each region.
        first: ``(n + 1,)`` where each output's regions start (the last entry: ``R``).
        in_anchors: ``(R, 2)`` top-left corners in the sources.
        shapes: ``(R, 2)`` region extents.
        out_anchors: ``(R, 2)`` top-left corners in the canvases.
        out_shapes: each output's shape.
        dtypes: each output's dtype.
        by_ids: whether the regions were picked by ``in_ids`` (else one per input).
    """

    pool: list[np.ndarray]
    src: np.ndarray
    first: np.ndarray
    in_anchors: np.ndarray
    shapes: np.ndarray
    out_anchors: np.ndarray
    out_shapes: list[tuple[int, ...]]
    dtypes: list[np.dtype]
    by_ids: bool


def plan_batch(
    batch: Batch, inputs: list[list[np.ndarray]], args: Mapping[str, Any], dtype: np.dtype | None
) -> PastePlan | None:
    """The plan of ``batch`` (``args``: the static arguments), or None when only the
    per-sample path can tell what is wrong."""
    try:
        return _plan(batch, inputs, args, dtype)
    except _Unplanned:
        return None


def _plan(
    batch: Batch, inputs: list[list[np.ndarray]], args: Mapping[str, Any], dtype: np.dtype | None
) -> PastePlan:
    size = batch.size
    per_output = _PerOutput(batch, args, size)
    ids = per_output.values("in_ids", np.int64)
    if ids is not None:
        pool, counts, src = inputs[0], np.array([len(v) for v in ids]), _joined(ids, np.int64)
        if np.any((src < 0) | (src >= len(pool))):
            raise _Unplanned
    else:
        pool = [s for samples in inputs for s in samples]
        counts = np.full(size, len(inputs))
        src = (np.arange(size)[:, None] + len(inputs[0]) * np.arange(len(inputs))).ravel()
    first = np.concatenate([[0], np.cumsum(counts)])
    owner = np.repeat(np.arange(size), counts)
    hw = np.array([s.shape[-3:-1] for s in pool], np.int64).reshape(-1, 2)
    channels = np.array([s.shape[-1] for s in pool], np.int64)[src]
    if np.any(channels != channels[first[owner]]):
        raise _Unplanned
    references = [pool[src[first[i]]] if counts[i] else inputs[0][i] for i in range(size)]
    out_hw = _output_sizes(per_output, inputs, references)
    out_shapes = [
        (*ref.shape[:-3], *hw_i, ref.shape[-1])
        for ref, hw_i in zip(references, out_hw.tolist(), strict=True)
    ]
    in_hw, canvas_hw = hw[src], out_hw[owner]
    zeros = np.zeros_like(in_hw)
    in_anchors = per_output.regions(("in_anchors", "in_anchors_rel"), counts, in_hw, zeros, _FLOOR)
    shapes = per_output.regions(("shapes", "shapes_rel"), counts, in_hw, in_hw - in_anchors, _CEIL)
    out_anchors = per_output.regions(
        ("out_anchors", "out_anchors_rel"), counts, canvas_hw, zeros, _FLOOR
    )
    outside = (
        (in_anchors < 0)
        | (shapes < 0)
        | (out_anchors < 0)
        | (in_anchors > in_hw)  # with the next two: the sums below cannot overflow
        | (shapes > in_hw)
        | (out_anchors > canvas_hw)
        | (in_anchors + shapes > in_hw)
        | (out_anchors + shapes > canvas_hw)
    )
    if np.any(outside):
        raise _Unplanned
    dtypes = [np.dtype(dtype or ref.dtype) for ref in references]
    return PastePlan(
        pool, src, first, in_anchors, shapes, out_anchors, out_shapes, dtypes, ids is not None
    )


class _PerOutput:
    """Reads an argument for every output sample: per sample from its tensor input, else the
    static value for all."""

    def __init__(self, batch: Batch, args: Mapping[str, Any], size: int) -> None:
        self._inputs = batch.arg_inputs
        self._args = args
        self._size = size

    def values(self, name: str, dtype: Any) -> list[np.ndarray] | None:
        """Each output's value of ``name`` as a flat array, or None when it is not given."""
        if name in self._inputs:
            return [np.asarray(v, dtype).reshape(-1) for v in self._inputs[name].samples()]
        value = self._args.get(name)
        if value is None:
            return None
        return [np.asarray(value, dtype).reshape(-1)] * self._size

    def regions(
        self,
        names: tuple[str, str],
        counts: np.ndarray,
        scale: np.ndarray,
        default: np.ndarray,
        to_pixels: Callable[[np.ndarray], np.ndarray],
    ) -> np.ndarray:
        """One region argument of every output as ``(R, 2)`` pixels, computed as the
        per-sample path computes it (relative values scaled in float32)."""
        absolute, relative = names
        values = self.values(absolute, np.float64)
        rel = values is None
        if rel:
            values = self.values(relative, np.float64)
        if values is None:
            return default
        if any(len(v) != 2 * count for v, count in zip(values, counts.tolist(), strict=True)):
            raise _Unplanned
        array = _joined(values, np.float64).reshape(-1, 2)
        if rel:
            if np.any((array < 0) | (array > 1)):
                raise _Unplanned
            array = to_pixels(array.astype(np.float32) * scale.astype(np.float32))
        return array.astype(np.int64)


def _joined(values: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(values) if values else np.zeros(0, dtype)


def _output_sizes(
    per_output: _PerOutput, inputs: list[list[np.ndarray]], references: list[np.ndarray]
) -> np.ndarray:
    """Each output's ``(H, W)``: ``output_size``'s first two values, else the shared input
    shape."""
    sizes = per_output.values("output_size", np.int64)
    if sizes is None:
        if len({s.shape[-3:-1] for samples in inputs for s in samples}) > 1:
            raise _Unplanned
        return np.array([ref.shape[-3:-1] for ref in references], np.int64).reshape(-1, 2)
    if any(len(v) < 2 for v in sizes):
        raise _Unplanned
    return np.array([v[:2] for v in sizes], np.int64).reshape(-1, 2)


def compiled_regions(plan: PastePlan, canvases: list[np.ndarray]) -> np.ndarray | None:
    """The plan's regions as ``fl_paste_regions`` takes them (see ``feedline_cpu.h``), or None
    when the copy needs more than bytes moved: a type conversion, a strided sample, sources
    with other leading (frame) dimensions than their canvas."""
    dtype, lead = canvases[0].dtype, canvases[0].shape[:-3]
    samples = [*plan.pool, *canvases]
    if any(s.dtype != dtype or s.shape[:-3] != lead or not s.flags.c_contiguous for s in samples):
        return None
    src, owner = plan.src, np.repeat(np.arange(len(canvases)), np.diff(plan.first))
    pool_shape = np.array([s.shape[-3:] for s in plan.pool], np.int64).reshape(-1, 3)[src]
    out_shape = np.array([c.shape[-3:] for c in canvases], np.int64).reshape(-1, 3)[owner]
    pixel = pool_shape[:, 2] * dtype.itemsize
    src_row, dst_row = pool_shape[:, 1] * pixel, out_shape[:, 1] * pixel
    src_address = np.array([_address(s) for s in plan.pool], np.int64)[src]
    dst_address = np.array([_address(c) for c in canvases], np.int64)[owner]
    (y0, x0), (h, w), (y1, x1) = plan.in_anchors.T, plan.shapes.T, plan.out_anchors.T
    frames = int(np.prod(lead, dtype=np.int64))
    return np.ascontiguousarray(
        np.stack(
            [
                dst_address + y1 * dst_row + x1 * pixel,
                src_address + y0 * src_row + x0 * pixel,
                np.full_like(h, frames),
                h,
                w * pixel,
                dst_row,
                src_row,
                out_shape[:, 0] * dst_row,
                pool_shape[:, 0] * src_row,
            ],
            axis=1,
        )
    )


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def paste_share(
    plan: PastePlan,
    canvases: list[np.ndarray],
    members: range,
    compiled: tuple[CropKernels, np.ndarray] | None,
) -> None:
    """Zero the canvases of outputs ``members`` (consecutive) and paste their regions in
    order: with one call of the compiled kernel (``compiled``: the kernels and
    :func:`compiled_regions`), else with NumPy."""
    if not members:
        return
    if compiled is not None:
        kernels, regions = compiled
        spans = np.array(
            [(_address(canvases[i]), canvases[i].nbytes) for i in members], np.int64
        ).reshape(-1, 2)
        kernels.paste(spans, plan.first[members.start : members.stop + 1], regions)
        return
    src, pool = plan.src.tolist(), plan.pool
    starts, shapes, ends = (a.tolist() for a in (plan.in_anchors, plan.shapes, plan.out_anchors))
    for i in members:
        canvas = canvases[i]
        canvas[...] = 0
        for r in range(plan.first[i], plan.first[i + 1]):
            (y0, x0), (h, w), (y1, x1) = starts[r], shapes[r], ends[r]
            canvas[..., y1 : y1 + h, x1 : x1 + w, :] = pool[src[r]][
                ..., y0 : y0 + h, x0 : x0 + w, :
            ]
