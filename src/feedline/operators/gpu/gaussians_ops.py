"""GPU kernel of ``draw_gaussians``: one ``flg_draw_gaussians`` launch per batch.

The per-object inputs are small; their host copies serve the CPU kernel's checks (types, lengths,
class ids of active objects), so a bad batch raises the CPU kernel's error before any launch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline.operators.cpu.heatmaps.gaussians import DrawGaussiansKernel, check_inputs
from feedline.operators.gpu.base import GpuBatch, GpuKernel, Outputs

__all__ = ["DrawGaussiansGpu"]


def _host(array: Any) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)


class DrawGaussiansGpu(GpuKernel, DrawGaussiansKernel):
    """``draw_gaussians`` on the GPU (float32, as on the CPU)."""

    def compute(self, batch: GpuBatch) -> Outputs:
        """Draw every sample's objects (one launch)."""
        backend, layouts = batch.backend, batch.layouts
        heat_maps = batch.contiguous(0)
        if not heat_maps:
            return [([], layouts[0])]
        k_for_classes = tuple(batch.args[0]["k_for_classes"])
        factor = float(batch.args[0]["radius_to_sigma_factor"])
        per_object = [batch.contiguous(i) for i in range(1, 5)]
        rows = []
        for index, heat_map in enumerate(heat_maps):
            active, class_ids, centers, radii = (_host(x[index]) for x in per_object)
            slices, height, width = check_inputs(
                heat_map, active, class_ids, centers, radii, k_for_classes
            )
            rows.append((slices, height, width, radii.size))
        outputs = backend.output([tuple(h.shape) for h in heat_maps], np.float32)
        active, class_ids, centers, radii = per_object
        backend.call(
            "flg_draw_gaussians",
            len(heat_maps),
            max(s * h * w for s, h, w, _ in rows),
            backend.asarray(rows, np.int64),
            backend.pointers(heat_maps),
            backend.pointers(outputs),
            backend.pointers(active),
            backend.pointers(class_ids),
            backend.pointers(centers),
            backend.pointers(radii),
            backend.asarray(k_for_classes or (0.0,), np.float32),
            factor,
        )
        return [(outputs, layouts[0])]
