"""Kernel of ``multi_paste``: several regions pasted onto each output canvas, in order.

With ``in_ids`` the single input batch is the source: output sample ``i`` gets the regions of
the input samples ``in_ids[i]``. Without it, output sample ``i`` gets one region from sample
``i`` of each input, in input order. A region is given by its input anchor (``in_anchors`` or
``in_anchors_rel``, default 0), its shape (``shapes`` or ``shapes_rel``, default: up to the
input's end) and its output anchor (``out_anchors`` or ``out_anchors_rel``, default 0); relative
values are scaled by the input (anchors, shapes) or the output (output anchors) extent and
rounded to the nearest integer. Later regions overwrite earlier ones; the background is 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import to_numpy_dtype

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
class _Plan:
    """One output sample: its sources, regions (in anchors, shapes, out anchors), shape, type."""

    sources: list[np.ndarray]
    ids: list[int] | None
    regions: tuple[np.ndarray, np.ndarray, np.ndarray]
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

    def _given(self, name: str) -> bool:
        return self.args.get(name) is not None or name in self.ctx.tensor_args

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Plan every output sample, then paste them in parallel into one zeroed batch buffer
        (when the outputs share a shape)."""
        inputs = [data.samples() for data in batch.inputs]
        layout = batch.inputs[0].layout()
        for position, data in enumerate(batch.inputs):
            ndim = data.samples()[0].ndim if len(data) else 3
            if ndim not in (3, 4) or (data.layout() and data.layout() not in ("HWC", "FHWC")):
                raise ValueError(
                    f"input {position} must be HWC or FHWC, got layout {data.layout()!r} "
                    f"with {ndim} dimensions"
                )
        arg = _arg_reader(batch, self.args)
        dtype = None if self.args["dtype"] is None else to_numpy_dtype(self.args["dtype"])

        uniform = len({s.shape[-3:-1] for samples in inputs for s in samples}) <= 1
        plans = [self._plan(i, inputs, arg, dtype, uniform) for i in range(batch.size)]
        shapes = {(plan.shape, plan.dtype) for plan in plans}
        if len(shapes) == 1:
            ((shape, out_dtype),) = shapes
            dense = np.zeros((batch.size, *shape), out_dtype)
            canvases = list(dense)
        else:
            dense = None
            canvases = [np.zeros(plan.shape, plan.dtype) for plan in plans]

        def one(i: int) -> None:
            plan = plans[i]
            paste_regions(canvases[i], plan.sources, *plan.regions, i)

        batch.map(one, batch.size)
        infos = [data.source_infos() for data in batch.inputs]
        sources = [";".join(source_names(plan.ids, i, infos)) for i, plan in enumerate(plans)]
        if dense is not None:
            return [TensorListCPU.from_dense(dense, layout, sources)]
        return [TensorListCPU.from_samples(canvases, layout, sources)]

    def _plan(
        self,
        i: int,
        inputs: list[list[np.ndarray]],
        arg: Callable[[str, int], Any],
        dtype: np.dtype | None,
        uniform: bool,
    ) -> _Plan:
        ids = arg("in_ids", i)
        if ids is not None:
            ids = np.asarray(ids, dtype=np.int64).reshape(-1)
            bad = [int(j) for j in ids if not 0 <= j < len(inputs[0])]
            if bad:
                raise IndexError(
                    f"in_ids must lie in [0, {len(inputs[0]) - 1}] (the input batch), got "
                    f"{bad[0]} for output sample {i}"
                )
            sources = [inputs[0][int(j)] for j in ids]
        else:
            sources = [samples[i] for samples in inputs]
        channels = {s.shape[-1] for s in sources}
        if len(channels) > 1:
            raise ValueError(
                f"all regions pasted into output sample {i} must have the same number of "
                f"channels, got {sorted(channels)}"
            )
        reference = sources[0] if sources else inputs[0][i]
        size = arg("output_size", i)
        if size is None:
            if not uniform:
                shapes = sorted({s.shape[-3:-1] for samples in inputs for s in samples})
                raise ValueError(
                    f"without output_size all input samples must have the same shape, got {shapes}"
                )
            out_hw = np.array(reference.shape[-3:-1])
        else:
            out_hw = np.asarray(size, dtype=np.int64).reshape(-1)
            if out_hw.size < 2:
                raise ValueError(f"output_size must hold (H, W), got {out_hw.tolist()}")
            out_hw = out_hw[:2]  # as DALI: values after H and W (the channels) are not read
        in_hw = np.array([s.shape[-3:-1] for s in sources], dtype=np.int64).reshape(-1, 2)
        count = len(sources)
        in_anchors = _regions(arg, i, _REGION_ARGS[0], count, in_hw, np.zeros_like(in_hw))
        extents = _regions(arg, i, _REGION_ARGS[1], count, in_hw, in_hw - in_anchors)
        out_anchors = _regions(
            arg, i, _OUT_ARGS, count, np.broadcast_to(out_hw, in_hw.shape), np.zeros_like(in_hw)
        )
        shape = (*reference.shape[:-3], *(int(n) for n in out_hw), reference.shape[-1])
        picked = None if ids is None else [int(j) for j in ids]
        regions = (in_anchors, extents, out_anchors)
        return _Plan(sources, picked, regions, shape, dtype or reference.dtype)


def source_names(ids: list[int] | None, i: int, infos: list[list[str]]) -> list[str]:
    """Where the pasted regions of output ``i`` came from (DALI joins them with ``;``)."""
    if ids is not None:
        return [infos[0][j] for j in ids]
    return [names[i] for names in infos]


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
) -> np.ndarray:
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
        array = np.floor(array * scale + 0.5)
    return array.astype(np.int64)
