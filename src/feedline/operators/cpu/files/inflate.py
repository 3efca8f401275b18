"""Kernel of ``decoders.inflate``: LZ4 blocks through the ``lz4`` package (the ``lz4`` extra),
imported on first use."""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import to_numpy_dtype

__all__ = ["InflateKernel", "chunk_bounds"]


def _load_lz4_block() -> Any:
    try:
        return importlib.import_module("lz4.block")
    except ImportError:
        raise ImportError(
            "decoders.inflate needs the 'lz4' package: pip install feedline[lz4]"
        ) from None


def chunk_bounds(size: int, offsets: Any, sizes: Any) -> list[tuple[int, int]]:
    """``(start, end)`` of each compressed chunk of a ``size``-byte sample.

    Raises:
        ValueError: mismatched counts or chunks outside the sample.
    """
    if offsets is None and sizes is None:
        return [(0, size)]
    if offsets is not None:
        starts = [int(v) for v in np.asarray(offsets).reshape(-1)]
    else:
        lengths = [int(v) for v in np.asarray(sizes).reshape(-1)]
        starts = [sum(lengths[:i]) for i in range(len(lengths))]
    if sizes is not None:
        lengths = [int(v) for v in np.asarray(sizes).reshape(-1)]
        if len(lengths) != len(starts):
            raise ValueError(
                f"chunk_offsets ({len(starts)}) and chunk_sizes ({len(lengths)}) differ in length"
            )
    else:
        lengths = [end - start for start, end in zip(starts, [*starts[1:], size], strict=True)]
    bounds = [(start, start + length) for start, length in zip(starts, lengths, strict=True)]
    for start, end in bounds:
        if start < 0 or end > size or end < start:
            raise ValueError(f"chunk [{start}, {end}) lies outside the sample of {size} bytes")
    return bounds


class InflateKernel(SampleKernel):
    """``decoders.inflate`` on one sample."""

    def setup(self) -> None:
        """Load ``lz4`` and check that ``shape`` is given."""
        if self.args["shape"] is None and "shape" not in self.ctx.tensor_args:
            raise ValueError("decoders.inflate: argument 'shape' is required")
        self._lz4 = _load_lz4_block()
        self._dtype = to_numpy_dtype(self.args["dtype"])

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """``layout``, with ``sequence_axis_name`` in front for chunked samples."""
        layout = self.args["layout"] or ""
        chunked = any(
            self.args.get(n) is not None or n in self.ctx.tensor_args
            for n in ("chunk_offsets", "chunk_sizes")
        )
        if chunked and layout:
            layout = (self.args["sequence_axis_name"] or "") + layout
        return (layout,)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        data = inputs[0]
        if data.dtype != np.uint8 or data.ndim != 1:
            raise TypeError(f"the input must be 1-D uint8 bytes, got {data.dtype} {data.shape}")
        shape = tuple(int(v) for v in np.asarray(args["shape"]).reshape(-1))
        nbytes = math.prod(shape) * self._dtype.itemsize
        chunked = args.get("chunk_offsets") is not None or args.get("chunk_sizes") is not None
        bounds = chunk_bounds(data.size, args.get("chunk_offsets"), args.get("chunk_sizes"))
        raw = data.tobytes()
        out = np.empty((len(bounds), nbytes), np.uint8)
        for k, (start, end) in enumerate(bounds):
            try:
                inflated = self._lz4.decompress(raw[start:end], uncompressed_size=nbytes)
            except Exception as exc:
                raise ValueError(
                    f"chunk {k} is not valid LZ4 data of {nbytes} bytes: {exc}"
                ) from exc
            if len(inflated) != nbytes:
                raise ValueError(
                    f"chunk {k} inflates to {len(inflated)} bytes, shape {list(shape)} of "
                    f"{self._dtype} needs {nbytes}"
                )
            out[k] = np.frombuffer(inflated, np.uint8)
        result = out.view(self._dtype).reshape(len(bounds), *shape)
        return result if chunked else result[0]
