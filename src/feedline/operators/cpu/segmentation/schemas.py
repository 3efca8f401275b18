"""Family ``segmentation``: schemas and registration of the mask operators.

``segmentation.select_masks``, ``segmentation.random_mask_pixel`` and
``segmentation.random_object_bbox``, with DALI's arguments and defaults. Kernels (imported on
first use): :mod:`.masks` and :mod:`.objects`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "KERNELS",
    "RANDOM_MASK_PIXEL",
    "RANDOM_OBJECT_BBOX",
    "SCHEMAS",
    "SELECT_MASKS",
    "feedline_register_operators",
]

_KERNELS = "feedline.operators.cpu.segmentation.masks"
_OBJECTS = "feedline.operators.cpu.segmentation.objects"

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


def _object_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """The outputs of ``random_object_bbox`` for its ``format`` and ``output_class``."""
    corners = {"box": ("box",), "start_end": ("start", "end")}.get(
        args["format"], ("anchor", "shape")
    )
    return corners + (("class",) if args["output_class"] else ())


RANDOM_OBJECT_BBOX = OpSchema(
    name="segmentation.random_object_bbox",
    doc=(
        "Picks a random object (a blob of connected elements with one label) of a label mask "
        "and returns its bounding box.\n\n"
        "With probability ``foreground_prob`` a foreground class is drawn (by ``class_weights``, "
        "uniformly by default, among the ``classes`` present in the sample; all labels but "
        "``background`` when ``classes`` is not given), then one of its blobs: elements are "
        "connected when they share a face (4-connectivity in 2-D, 6 in 3-D). Only blobs at "
        "least ``threshold`` wide on every axis count, and of those only the ``k_largest`` by "
        "volume. A class with no such blob is dropped and another one drawn. Otherwise (or when "
        "no class has one) the box covers the whole input. With ``ignore_class`` every blob of "
        "every non-background label is equally likely.\n\n"
        "Outputs (int32): ``anchor`` and ``shape`` (``format='anchor_shape'``), ``start`` and "
        "one-past-the-end ``end`` (``'start_end'``), or one ``box`` ``[start..., end...]`` "
        "(``'box'``); with ``output_class`` also the 0-D class label of the box (the background "
        "label for a whole-input box). Masks are bool, int8, uint8, int16, uint16, int32 or "
        "uint32 with 1 to 6 dimensions (3 or more need SciPy: ``feedline[segmentation]``). "
        "Drawn from the sample's own generator."
    ),
    inputs=(InputSpec("input", "The label mask (1 to 6 dimensions, any layout)."),),
    outputs=_object_outputs,
    args=(
        ArgSpec(
            "background",
            "int",
            None,
            "Background label; default 0, or, when 0 is one of ``classes``, a label not in "
            "``classes`` (the smallest minus 1).",
            True,
        ),
        ArgSpec(
            "classes",
            "int_vec",
            None,
            "Labels considered foreground; default: every label but ``background``.",
            True,
        ),
        ArgSpec(
            "class_weights",
            "float_vec",
            None,
            "Relative probabilities of ``classes`` (without ``classes``: of labels 1, 2, ...).",
            True,
        ),
        ArgSpec("foreground_prob", "float", 1.0, "Probability of picking a foreground box.", True),
        ArgSpec(
            "format",
            "str",
            "anchor_shape",
            "Box outputs: 'anchor_shape', 'start_end' or 'box'.",
            choices=("anchor_shape", "start_end", "box"),
        ),
        ArgSpec(
            "ignore_class",
            "bool",
            False,
            "Pick among all blobs alike instead of a class first (excludes ``classes``, "
            "``class_weights`` and ``output_class``).",
        ),
        ArgSpec(
            "k_largest",
            "int",
            None,
            "Only the k largest boxes by volume are candidates (of the drawn class, or of all "
            "with ``ignore_class``).",
        ),
        ArgSpec("output_class", "bool", False, "Add an output with the class label of the box."),
        ArgSpec(
            "threshold",
            "int_vec",
            None,
            "Minimum box extent per axis (one value applies to every axis).",
            True,
        ),
        ArgSpec(
            "cache_objects",
            "bool",
            False,
            "Remember each input's boxes (keyed by a 256-bit hash of its bytes) to skip the "
            "labelling when the same input returns; the outputs do not change.",
        ),
        ArgSpec(
            "bytes_per_sample_hint",
            "int_vec",
            (0,),
            "DALI's output-size hint; accepted, and changes nothing (outputs are sized exactly).",
        ),
    ),
)

SCHEMAS = (SELECT_MASKS, RANDOM_MASK_PIXEL, RANDOM_OBJECT_BBOX)
KERNELS = {
    "segmentation.select_masks": f"{_KERNELS}:SelectMasksKernel",
    "segmentation.random_mask_pixel": f"{_KERNELS}:RandomMaskPixelKernel",
    "segmentation.random_object_bbox": f"{_OBJECTS}:RandomObjectBBoxKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the segmentation operators."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
