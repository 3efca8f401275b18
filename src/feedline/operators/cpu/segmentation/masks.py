"""Kernels of ``segmentation.select_masks`` and ``segmentation.random_mask_pixel``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel

__all__ = ["RandomMaskPixelKernel", "SelectMasksKernel", "select_masks"]


def select_masks(
    mask_ids: np.ndarray, polygons: np.ndarray, vertices: np.ndarray, reindex: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The polygons of ``mask_ids`` (in that order) and their vertices, renumbered.

    Raises:
        ValueError: a repeated or missing mask id, or a vertex range out of bounds.
    """
    seen: set[int] = set()
    for mask_id in mask_ids.tolist():
        if mask_id in seen:
            raise ValueError(f"mask_ids should not have duplicated values. Got {mask_id} repeated.")
        seen.add(mask_id)
    ranges = {int(m): (int(s), int(e)) for m, s, e in polygons.reshape(-1, 3).tolist()}
    out_polygons = np.zeros((len(mask_ids), 3), np.int32)
    pieces = []
    offset = 0
    for index, mask_id in enumerate(mask_ids.tolist()):
        if mask_id not in ranges:
            raise ValueError(f"Selected mask_id {mask_id} is not present in the input.")
        start, end = ranges[mask_id]
        if not 0 <= start <= end <= len(vertices):
            raise ValueError(
                f"Vertex index range for mask id {mask_id} [{start}, {end}) is out of bounds. "
                f"Expected to be within the range of available vertices [0, {len(vertices)})."
            )
        out_polygons[index] = (index if reindex else mask_id, offset, offset + end - start)
        pieces.append(vertices[start:end])
        offset += end - start
    if pieces:
        out_vertices = np.concatenate(pieces)
    else:
        out_vertices = np.zeros((0, *vertices.shape[1:]), vertices.dtype)
    return out_polygons, out_vertices


class SelectMasksKernel(SampleKernel):
    """``segmentation.select_masks`` on one sample."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layouts."""
        return ("", "")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, np.ndarray]:
        mask_ids, polygons, vertices = inputs
        if mask_ids.dtype != np.int32 or mask_ids.ndim != 1:
            raise TypeError(
                f"``mask_ids`` input is expected to be int32 1-D, got {mask_ids.dtype} "
                f"{mask_ids.shape}"
            )
        if polygons.dtype != np.int32:
            raise TypeError(f"``polygons`` input is expected to be int32, got {polygons.dtype}")
        if polygons.ndim != 2 or polygons.shape[1] != 3:
            columns = polygons.shape[1] if polygons.ndim == 2 else polygons.ndim
            raise ValueError(
                "``polygons`` is expected to contain 2D tensors with 3 columns: ``mask_id, "
                f"start_idx, end_idx``. Got {columns} columns."
            )
        if vertices.ndim != 2:
            raise ValueError(f"``vertices`` input is expected to be [V, D], got {vertices.shape}")
        return select_masks(mask_ids, polygons, vertices, args["reindex_masks"])


class RandomMaskPixelKernel(SampleKernel):
    """``segmentation.random_mask_pixel`` on one sample."""

    def setup(self) -> None:
        """``value`` and ``threshold`` exclude each other."""
        given = [
            n
            for n in ("value", "threshold")
            if self.args[n] is not None or n in self.ctx.tensor_args
        ]
        if len(given) == 2:
            raise ValueError("Arguments ``value`` and ``threshold`` can not be provided together")

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layout."""
        return ("",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        mask = inputs[0]
        if mask.size == 0:
            return np.zeros(mask.ndim, np.int64)
        flat_index = None
        if args["foreground"]:
            if args["value"] is not None:
                hits = np.flatnonzero(mask == args["value"])
            else:
                threshold = 0.0 if args["threshold"] is None else args["threshold"]
                hits = np.flatnonzero(mask > threshold)
            if hits.size:
                flat_index = int(hits[sample.rng.integers(hits.size)])
        if flat_index is None:
            flat_index = int(sample.rng.integers(mask.size))
        return np.array(np.unravel_index(flat_index, mask.shape), np.int64)
