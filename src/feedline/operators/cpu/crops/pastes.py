"""Kernel of ``multi_paste``: several regions pasted onto each output canvas, in order.

With ``in_ids`` the single input batch is the source: output sample ``i`` gets the regions of
the input samples ``in_ids[i]``. Without it, output sample ``i`` gets one region from sample
``i`` of each input, in input order. A region is given by its input anchor (``in_anchors`` or
``in_anchors_rel``, default 0), its shape (``shapes`` or ``shapes_rel``, default: up to the
input's end) and its output anchor (``out_anchors`` or ``out_anchors_rel``, default 0); relative
values are scaled by the input (anchors, shapes) or the output (output anchors) extent in
float32, anchors rounded down and shapes up. Later regions overwrite earlier ones; the
background is 0.

The regions of the whole batch are planned at once (:mod:`.paste_plan`) and pasted one share
of the outputs per thread, by the compiled copy kernel where the data allows; a batch the plan
cannot vouch for goes through the per-sample path below, which names the culprit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.buffers import BufferPool
from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import to_numpy_dtype
from feedline.operators.cpu.crops.bindings import crop_kernels
from feedline.operators.cpu.crops.paste_plan import (
    PastePlan,
    compiled_regions,
    paste_share,
    plan_batch,
)

__all__ = ["MultiPasteKernel", "paste_regions", "source_names"]

_REGION_ARGS = (("in_anchors", "in_anchors_rel"), ("shapes", "shapes_rel"))
_OUT_ARGS = ("out_anchors", "out_anchors_rel")


def paste_regions(
    canvas: np.ndarray,
    sources: list[np.ndarray],
    in_anchors: np.ndarray,
    shapes: np.ndarray,
    out_anchors: np.ndarray,
    sample: int,
) -> None:
    """Paste ``sources[k][in_anchors[k] : +shapes[k]]`` at ``out_anchors[k]`` of ``canvas``
    (``(..., H, W, C)`` arrays; ``(K, 2)`` integer regions), checking every bound."""
    out_h, out_w = canvas.shape[-3:-1]
    for k, (source, start, extent, dest) in enumerate(
        zip(sources, in_anchors.tolist(), shapes.tolist(), out_anchors.tolist(), strict=True)
    ):
        (y0, x0), (h, w), (y1, x1) = start, extent, dest
        in_h, in_w = source.shape[-3:-1]
        if min(y0, x0, h, w) < 0 or y0 + h > in_h or x0 + w > in_w:
            raise ValueError(
                f"The pasted region must be within the input sample: input anchor {start}, "
                f"region shape {extent}, input shape {[in_h, in_w]}, for region {k} of output "
                f"sample {sample}"
            )
        if min(y1, x1) < 0 or y1 + h > out_h or x1 + w > out_w:
            raise ValueError(
                f"The pasted region must be within output bounds: output anchor {dest}, region "
                f"shape {extent}, output shape {[out_h, out_w]}, for region {k} of output "
                f"sample {sample}"
            )
        canvas[..., y1 : y1 + h, x1 : x1 + w, :] = source[..., y0 : y0 + h, x0 : x0 + w, :]


@dataclass(frozen=True)
class _Outline:
    """One output sample: its sources (and their ids), its (H, W), shape and type."""

    sources: list[np.ndarray]
    ids: list[int] | None
    out_hw: np.ndarray
    shape: tuple[int, ...]
    dtype: np.dtype


class MultiPasteKernel(Kernel):
    """``multi_paste`` over a batch (regions may come from any sample of the input batch)."""

    def setup(self) -> None:
        """Check the argument pairs that exclude each other and ``in_ids`` against inputs."""
        given = self._given
        for absolute, relative in (*_REGION_ARGS, _OUT_ARGS):
            if given(absolute) and given(relative):
                raise ValueError(f"{absolute} and {relative} cannot be given together")
        if given("in_ids") and self.ctx.num_inputs != 1:
            raise ValueError(
                "with in_ids the operator takes exactly one input batch, got "
                f"{self.ctx.num_inputs} inputs"
            )
        self._kernels = crop_kernels()
        self._buffers = BufferPool()

    def _given(self, name: str) -> bool:
        return self.args.get(name) is not None or name in self.ctx.tensor_args

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Plan the regions of the whole batch (:mod:`.paste_plan`), then paste one share of
        the outputs per thread; a batch the plan cannot vouch for takes the per-sample path."""
        inputs = [data.samples() for data in batch.inputs]
        layout = batch.inputs[0].layout()
        for position, data in enumerate(batch.inputs):
            ndim = data.samples()[0].ndim if len(data) else 3
            if ndim not in (3, 4) or (data.layout() and data.layout() not in ("HWC", "FHWC")):
                raise ValueError(
                    f"input {position} must be HWC or FHWC, got layout {data.layout()!r} "
                    f"with {ndim} dimensions"
                )
        dtype = None if self.args["dtype"] is None else to_numpy_dtype(self.args["dtype"])
        plan = plan_batch(batch, inputs, self.args, dtype)
        if plan is None:
            return self._run_per_sample(batch, inputs, layout, dtype)
        canvases, dense = self._canvases(plan)
        compiled = None
        if self._kernels is not None:
            regions = compiled_regions(plan, canvases)
            compiled = None if regions is None else (self._kernels, regions)
        shares = _shares(batch.size, self.ctx.num_threads)
        batch.map(lambda k: paste_share(plan, canvases, shares[k], compiled), len(shares))
        infos = [data.source_infos() for data in batch.inputs]
        src, first = plan.src.tolist(), plan.first.tolist()
        sources = [
            ";".join(source_names(src[first[i] : first[i + 1]] if plan.by_ids else None, i, infos))
            for i in range(batch.size)
        ]
        if dense is not None:
            return [TensorListCPU.from_dense(dense, layout, sources)]
        return [TensorListCPU.from_samples(canvases, layout, sources)]

    def _canvases(self, plan: PastePlan) -> tuple[list[np.ndarray], np.ndarray | None]:
        """The output arrays (uninitialised): rows of one recycled batch buffer when the
        outputs share shape and type."""
        kinds = set(zip(plan.out_shapes, plan.dtypes, strict=True))
        if len(kinds) == 1:
            ((shape, dtype),) = kinds
            dense = self._buffers.empty((len(plan.out_shapes), *shape), dtype)
            return list(dense), dense
        return [np.empty(s, d) for s, d in zip(plan.out_shapes, plan.dtypes, strict=True)], None

    def _run_per_sample(
        self,
        batch: Batch,
        inputs: list[list[np.ndarray]],
        layout: str,
        dtype: np.dtype | None,
    ) -> list[TensorListCPU]:
        """Outline and paste each output sample on its own, checking every argument and
        region as it goes: the path that names the sample and region at fault."""
        arg = _arg_reader(batch, self.args)
        uniform = len({s.shape[-3:-1] for samples in inputs for s in samples}) <= 1
        outlines = [self._outline(i, inputs, arg, dtype, uniform) for i in range(batch.size)]
        shapes = {(outline.shape, outline.dtype) for outline in outlines}
        if len(shapes) == 1:
            ((shape, out_dtype),) = shapes
            dense = np.zeros((batch.size, *shape), out_dtype)
            canvases = list(dense)
        else:
            dense = None
            canvases = [np.zeros(outline.shape, outline.dtype) for outline in outlines]

        def one(i: int) -> None:
            outline = outlines[i]
            regions = _regions_of(i, outline, arg)
            paste_regions(canvases[i], outline.sources, *regions, i)

        batch.map(one, batch.size)
        infos = [data.source_infos() for data in batch.inputs]
        sources = [";".join(source_names(o.ids, i, infos)) for i, o in enumerate(outlines)]
        if dense is not None:
            return [TensorListCPU.from_dense(dense, layout, sources)]
        return [TensorListCPU.from_samples(canvases, layout, sources)]

    def _outline(
        self,
        i: int,
        inputs: list[list[np.ndarray]],
        arg: Callable[[str, int], Any],
        dtype: np.dtype | None,
        uniform: bool,
    ) -> _Outline:
        given_ids = arg("in_ids", i)
        ids = None
        if given_ids is not None:
            ids = np.asarray(given_ids, dtype=np.int64).reshape(-1).tolist()
            bad = [j for j in ids if not 0 <= j < len(inputs[0])]
            if bad:
                raise IndexError(
                    f"The `in_idx` must be in range [0, {len(inputs[0]) - 1}]. Got in_idx: "
                    f"{bad[0]}. Input batch size is: {len(inputs[0])}. (in_ids of output "
                    f"sample {i})"
                )
            sources = [inputs[0][j] for j in ids]
        else:
            sources = [samples[i] for samples in inputs]
        channels = {s.shape[-1] for s in sources}
        if len(channels) > 1:
            raise ValueError(
                "All regions pasted into given output sample must have the same number of "
                f"channels; output sample {i} got {sorted(channels)}"
            )
        reference = sources[0] if sources else inputs[0][i]
        size = arg("output_size", i)
        if size is None:
            if not uniform:
                shapes = sorted({s.shape[-3:-1] for samples in inputs for s in samples})
                raise ValueError(
                    "If the `output_size` is not specified, all the input samples must have "
                    f"the same shape. Got {shapes}"
                )
            out_hw = np.array(reference.shape[-3:-1])
        else:
            out_hw = np.asarray(size, dtype=np.int64).reshape(-1)
            if out_hw.size < 2:
                raise ValueError(f"output_size must hold (H, W), got {out_hw.tolist()}")
            out_hw = out_hw[:2]  # DALI reads H and W and ignores the rest (e.g. a shape's C)
        shape = (*reference.shape[:-3], *(int(n) for n in out_hw), reference.shape[-1])
        return _Outline(sources, ids, out_hw, shape, dtype or reference.dtype)


def _regions_of(
    i: int, outline: _Outline, arg: Callable[[str, int], Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Output sample ``i``'s regions: input anchors, shapes and output anchors, ``(K, 2)``."""
    sources = outline.sources
    in_hw = np.array([s.shape[-3:-1] for s in sources], dtype=np.int64).reshape(-1, 2)
    count = len(sources)
    in_anchors = _regions(arg, i, _REGION_ARGS[0], count, in_hw, np.zeros_like(in_hw), np.floor)
    extents = _regions(arg, i, _REGION_ARGS[1], count, in_hw, in_hw - in_anchors, np.ceil)
    out_hw = np.broadcast_to(outline.out_hw, in_hw.shape)
    out_anchors = _regions(arg, i, _OUT_ARGS, count, out_hw, np.zeros_like(in_hw), np.floor)
    return in_anchors, extents, out_anchors


def source_names(ids: list[int] | None, i: int, infos: list[list[str]]) -> list[str]:
    """Where the pasted regions of output ``i`` came from (DALI joins them with ``;``)."""
    if ids is not None:
        return [infos[0][j] for j in ids]
    return [names[i] for names in infos]


def _shares(size: int, threads: int) -> list[range]:
    """``range(size)`` cut into ``threads`` consecutive shares (fewer for a small batch)."""
    count = max(1, min(threads, size))
    bounds = [size * k // count for k in range(count + 1)]
    return [range(bounds[k], bounds[k + 1]) for k in range(count)]


def _arg_reader(batch: Batch, args: Any) -> Callable[[str, int], Any]:
    samples = {name: node.samples() for name, node in batch.arg_inputs.items()}

    def read(name: str, i: int) -> Any:
        if name in samples:
            return samples[name][i]
        return args.get(name)

    return read


def _regions(
    arg: Callable[[str, int], Any],
    i: int,
    names: tuple[str, str],
    count: int,
    scale: np.ndarray,
    default: np.ndarray,
    to_pixels: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """One region argument of output ``i`` as ``(count, 2)`` pixels: the absolute form, else
    the relative one scaled by ``scale`` in float32 and turned into pixels by ``to_pixels`` (as
    DALI: anchors floored, shapes rounded up), else ``default``."""
    absolute, relative = names
    value = arg(absolute, i)
    rel = value is None and arg(relative, i) is not None
    if rel:
        value = arg(relative, i)
    if value is None:
        return default
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    if array.size != 2 * count:
        raise ValueError(
            f"{relative if rel else absolute} must be a {count} x 2 tensor (one (H, W) pair per "
            f"pasted region) for output sample {i}, got {array.size} values"
        )
    array = array.reshape(count, 2)
    if rel:
        if np.any((array < 0) | (array > 1)):
            raise ValueError(
                f"{relative} values must be floats in [0, 1] range, got {array.tolist()} for "
                f"output sample {i}"
            )
        array = to_pixels(array.astype(np.float32) * scale.astype(np.float32))
    return array.astype(np.int64)
