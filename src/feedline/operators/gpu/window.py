"""Launching ``flg_window``: the kernel behind crop, flip, transpose, pad, cast,
crop_mirror_normalize, normalize and brightness_contrast (see ``kernels/window.cu``).

A :class:`Window` says, for one sample, which input element every output element reads: the
output shape, and per output axis the input extent, stride and window start, and whether the
axis is mirrored. :func:`launch_window` packs the windows of a batch into one descriptor array
and launches once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from feedline.operators.gpu.backend import Backend, type_id

__all__ = ["CAST", "CENTRE", "SATURATE", "SCALE", "SCALE64", "STATS", "Window", "launch_window"]

CAST, SATURATE, SCALE, SCALE64, STATS, CENTRE = 0, 1, 2, 3, 4, 5
_MAX_DIMS = 6
_DESC = 38


@dataclass
class Window:
    """The window of one sample, per output axis.

    Attributes:
        out_shape: the output's shape.
        in_extent: the input's extent along the axis each output axis reads.
        in_stride: the input's stride (elements) along that axis.
        anchor: the window's start in the input (may be negative: padding).
        mirror: output axes read backwards.
        real_channels: channel positions from here on are padding (``pad``).
        stat_stride: strides (elements) of the statistics arrays (mode ``STATS``).
    """

    out_shape: tuple[int, ...]
    in_extent: tuple[int, ...]
    in_stride: tuple[int, ...]
    anchor: tuple[int, ...] = ()
    mirror: frozenset[int] = frozenset()
    real_channels: int = 1 << 62
    stat_stride: tuple[int, ...] = ()

    def row(self) -> list[int]:
        """The sample's row of the kernel's descriptor."""
        ndim = len(self.out_shape)
        if ndim > _MAX_DIMS:
            raise ValueError(f"GPU kernels support at most {_MAX_DIMS} dimensions, got {ndim}")
        pad = [0] * (_MAX_DIMS - ndim)
        anchor = list(self.anchor or (0,) * ndim)
        stat = list(self.stat_stride or (0,) * ndim)
        return [
            *self.out_shape,
            *pad,
            *self.in_extent,
            *pad,
            *self.in_stride,
            *pad,
            *anchor,
            *pad,
            *stat,
            *pad,
            sum(1 << a for a in self.mirror),
            self.real_channels,
            *[0] * (_DESC - 5 * _MAX_DIMS - 2),
        ]


def strides_of(array: Any) -> tuple[int, ...]:
    """An array's strides in elements."""
    return tuple(int(s) // array.itemsize for s in array.strides)


def plain_window(array: Any) -> Window:
    """The whole of ``array``, unchanged."""
    return Window(tuple(array.shape), tuple(array.shape), strides_of(array))


@dataclass
class Params:
    """Per-sample values of a launch (one row per sample, ``channels`` values per row)."""

    gain: list[Sequence[float]] = field(default_factory=list)
    offset: list[Sequence[float]] = field(default_factory=list)
    fill: list[Sequence[float]] = field(default_factory=list)
    pad: list[float] = field(default_factory=list)


def _table(rows: list[Sequence[float]], n: int, width: int, default: float) -> np.ndarray:
    table = np.full((max(n, 1), width), default, np.float64)
    for i, row in enumerate(rows):
        values = np.asarray(row, np.float64).ravel()
        table[i, : values.size] = values
    return table


def launch_window(
    backend: Backend,
    mode: int,
    inputs: Sequence[Any],
    windows: Sequence[Window],
    out_dtype: Any,
    channel_axis: int = -1,
    params: Params | None = None,
    stats: tuple[Sequence[Any], Sequence[Any], float] | None = None,
) -> list[Any]:
    """Run ``flg_window`` over a batch; returns the outputs (one buffer when dense).

    Args:
        backend: where to run.
        mode: ``CAST``, ``SATURATE``, ``SCALE``, ``SCALE64``, ``STATS`` or ``CENTRE``
            (``(v - offset) * gain``, crop_mirror_normalize's order).
        inputs: the input samples (same dtype and ndim).
        windows: what each sample reads.
        out_dtype: the output type.
        channel_axis: the output axis that indexes ``params`` (-1: none).
        params: gains, offsets (``SCALE*``), fill values (input type) and pad values.
        stats: ``(means, factors, shift)`` for ``STATS``: float32 device arrays per sample.
    """
    n = len(inputs)
    if n == 0:
        return []
    params = params or Params()
    outs = backend.output([w.out_shape for w in windows], out_dtype)
    ndim = len(windows[0].out_shape)
    if ndim == 0:
        inputs = [x.reshape(1) for x in inputs]
        outs_flat = [o.reshape(1) for o in outs]
        windows = [Window((1,), (1,), (1,)) for _ in windows]
        ndim = 1
    else:
        outs_flat = outs
    width = max(
        [1] + [len(r) for r in (*params.gain, *params.offset, *params.fill)],
    )
    # Per-sample arguments travel in two uploads: the integers (descriptor rows, then the input
    # and output addresses) and the float64 parameters (gains, offsets, fills, pads).
    rows = np.asarray([w.row() for w in windows], np.int64).ravel()
    addresses = [backend.pointer(x) for x in (*inputs, *outs_flat)]
    integers = backend.asarray(
        np.concatenate([rows, np.asarray(addresses, np.uint64).view(np.int64)])
    )
    tables = [
        _table(params.gain, n, width, 1.0),
        _table(params.offset, n, width, 0.0),
        _table(params.fill, n, width, 0.0),
        np.asarray(params.pad or [0.0] * n, np.float64),
    ]
    floats = backend.asarray(np.concatenate([t.ravel() for t in tables]))
    table_at = np.cumsum([0] + [t.size for t in tables])
    means = factors = None
    shift = 0.0
    if stats is not None:
        means = backend.pointers(stats[0])
        factors = backend.pointers(stats[1])
        shift = float(stats[2])
    backend.call(
        "flg_window",
        mode,
        type_id(inputs[0].dtype),
        type_id(out_dtype),
        ndim,
        channel_axis,
        width,
        n,
        max(int(np.prod(w.out_shape)) for w in windows),
        integers[: rows.size],
        integers[rows.size : rows.size + n],
        integers[rows.size + n :],
        *(floats[table_at[i] : table_at[i + 1]] for i in range(4)),
        means,
        factors,
        shift,
    )
    return outs
