"""Family ``segmentation``: schemas and registration of the mask operators.

``segmentation.select_masks`` and ``segmentation.random_mask_pixel``, with DALI's arguments and
defaults. Kernels (imported on first use): :mod:`.masks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["KERNELS", "RANDOM_MASK_PIXEL", "SCHEMAS", "SELECT_MASKS", "feedline_register_operators"]

_KERNELS = "feedline.operators.cpu.segmentation.masks"

SELECT_MASKS = OpSchema(
    name="segmentation.select_masks",
    doc=(
        "Selects masks given as polygons by their mask ids, with the vertices they use.\n\n"
        "``polygons`` rows are ``[mask_id, start_vertex, end_vertex)``; output polygons follow "
        "the order of ``mask_ids`` (one per id: where several rows share a mask id, the last "
        "row counts, as in DALI) and their vertex ranges are renumbered into the output "
        "vertices. ``mask_ids`` must be int32, without repeats, and name masks that exist."
    ),
    inputs=(
        InputSpec("mask_ids", "The mask ids to select, int32 1-D."),
        InputSpec("polygons", "``[N, 3]`` int32 rows ``[mask_id, start_vertex, end_vertex)``."),
        InputSpec("vertices", "``[V, D]`` vertex coordinates (any numeric type)."),
    ),
    outputs=("polygons", "vertices"),
    args=(
        ArgSpec(
            "reindex_masks",
            "bool",
            False,
            "Replace each output mask id by its index in ``mask_ids``.",
        ),
    ),
    random=False,
)

RANDOM_MASK_PIXEL = OpSchema(
    name="segmentation.random_mask_pixel",
    doc=(
        "Picks a random pixel of a mask and returns its coordinates (int64, one per "
        "dimension).\n\n"
        "With ``foreground=0`` any pixel is equally likely. With ``foreground=1`` the pixel is "
        "drawn among those equal to ``value`` (when given) or above ``threshold``; when there "
        "are none, any pixel. An empty mask gives zeros. Drawn from the sample's own generator."
    ),
    inputs=(InputSpec("input", "The mask (any layout and numeric type)."),),
    args=(
        ArgSpec("foreground", "int", 0, "1: pick a foreground pixel; 0: any pixel.", True),
        ArgSpec("value", "int", None, "Foreground means equal to this (excludes threshold).", True),
        ArgSpec("threshold", "float", None, "Foreground means above this (default 0.0).", True),
    ),
)

SCHEMAS = (SELECT_MASKS, RANDOM_MASK_PIXEL)
KERNELS = {
    "segmentation.select_masks": f"{_KERNELS}:SelectMasksKernel",
    "segmentation.random_mask_pixel": f"{_KERNELS}:RandomMaskPixelKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the segmentation operators."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
