"""Family ``heatmaps``: the schema and registration of ``draw_gaussians``.

``draw_gaussians`` is the operator ACCV-Lab ships as a C++ DALI plugin for its
``BoundingBoxToHeatmapConverter``: same inputs, arguments and output. Kernels (imported on first
use): :mod:`.gaussians` (CPU) and the GPU plugin's ``gaussians_ops`` (CUDA).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["DRAW_GAUSSIANS", "KERNELS", "SCHEMAS", "feedline_register_operators"]

DRAW_GAUSSIANS = OpSchema(
    name="draw_gaussians",
    doc=(
        "Draws one Gaussian per active object into a heatmap (per class slice).\n\n"
        "The output is the input heatmap where, for every object ``i`` with ``active[i]``, each "
        "pixel ``(x, y)`` of the square window ``floor(cx - r) .. ceil(cx + r)`` (and the same "
        "in ``y``), clipped to the heatmap, becomes the larger of its value and "
        "``k * exp(-((x - cx)**2 + (y - cy)**2) / (2 * sigma**2))``, with ``(cx, cy)`` the "
        "object's integer center, ``r`` its radius, ``sigma = r * radius_to_sigma_factor`` and "
        "``k = k_for_classes[class_ids[i]]``. A 3-D heatmap ``[C, H, W]`` takes the Gaussian in "
        "slice ``class_ids[i]``; a 2-D one ``[H, W]`` is a single slice. Overlapping Gaussians "
        "keep their maximum, so the result does not depend on the order of the objects. "
        "Computed in float32."
    ),
    inputs=(
        InputSpec("heat_map", "The heatmap to draw into: float32, ``[C, H, W]`` or ``[H, W]``."),
        InputSpec("active", "Per object, whether to draw it: bool, ``N`` values."),
        InputSpec("class_ids", "Per object, its slice and ``k_for_classes`` index: int32, ``N``."),
        InputSpec("centers", "Per object, its center ``[x, y]`` in pixels: int32, ``[N, 2]``."),
        InputSpec("radii", "Per object, its radius in pixels: float32, ``N`` values."),
    ),
    args=(
        ArgSpec(
            "k_for_classes",
            "float_vec",
            doc="Peak value of the Gaussians of each class id (indexed by ``class_ids``).",
        ),
        ArgSpec(
            "radius_to_sigma_factor",
            "float",
            doc="The Gaussian's sigma is the object's radius times this factor.",
        ),
    ),
    random=False,
)

SCHEMAS = (DRAW_GAUSSIANS,)
KERNELS = {"draw_gaussians": "feedline.operators.cpu.heatmaps.gaussians:DrawGaussiansKernel"}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``draw_gaussians`` with its CPU kernel."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
