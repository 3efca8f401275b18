"""Family ``crops``: schemas and registration of the operators that choose random crop windows
and that paste regions.

``roi_random_crop``, ``ssd_random_crop`` and ``multi_paste``, with DALI's arguments and
defaults (``random_crop_generator`` is in the ``image`` family, beside the window it shares).
Every window comes from the sample's own generator, so results are identical for any
``num_threads``. Kernels (imported on first use): :mod:`.windows`,
:mod:`.ssd`, :mod:`.pastes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "KERNELS",
    "MULTI_PASTE",
    "ROI_RANDOM_CROP",
    "SCHEMAS",
    "SSD_RANDOM_CROP",
    "feedline_register_operators",
]

_KERNELS = "feedline.operators.cpu.crops"

ROI_RANDOM_CROP = OpSchema(
    name="roi_random_crop",
    doc=(
        "Produces the start of a fixed-shape crop window placed at random so that it holds as "
        "much of a region of interest (ROI) as it can.\n\n"
        "Per dimension: a window larger than the ROI contains the whole ROI, a smaller one lies "
        "within the ROI; the start is drawn uniformly among the integer positions that satisfy "
        "this. With ``in_shape``, or with the data to crop given as the input, the window also "
        "stays within the data (the ROI must lie inside it and the window must fit); without "
        "either the window may reach out of bounds. The ROI is ``roi_start`` with ``roi_end`` "
        "or ``roi_shape``. Output: the window start, int64, one value per dimension."
    ),
    inputs=(InputSpec("input", "The data to crop (only its shape is used).", optional=True),),
    args=(
        ArgSpec("crop_shape", "int_vec", REQUIRED, "Crop window dimensions.", tensor=True),
        ArgSpec("roi_start", "int_vec", REQUIRED, "ROI start coordinates.", tensor=True),
        ArgSpec(
            "roi_end",
            "int_vec",
            None,
            "ROI end coordinates (exclusive with ``roi_shape``).",
            tensor=True,
        ),
        ArgSpec(
            "roi_shape", "int_vec", None, "ROI shape (exclusive with ``roi_end``).", tensor=True
        ),
        ArgSpec(
            "in_shape",
            "int_vec",
            None,
            "Shape of the data to crop; keeps the window inside it. Incompatible with giving "
            "the data as the input.",
            tensor=True,
        ),
    ),
)

SSD_RANDOM_CROP = OpSchema(
    name="ssd_random_crop",
    doc=(
        "Crops an image at random together with its boxes and labels, as in SSD training "
        "(deprecated in DALI: prefer ``random_bbox_crop``).\n\n"
        "Each round picks one of seven options uniformly: no crop, or a minimum IoU of -1, "
        "0.1, 0.3, 0.5, 0.7 or 0.9 that every box must have with the window. Up to "
        "``num_attempts`` windows are tried per round: relative width and height uniform in "
        "``[0.3, 1)`` with an aspect ratio in ``[0.5, 2]``, anchor uniform. A window is taken "
        "when all boxes meet the minimum IoU and at least one box centre lies inside it; the "
        "boxes whose centre lies inside are kept, mapped into the window and clipped to "
        "``[0, 1]``, with their labels. Inputs: an HWC (or HW) image, float32 ``[N, 4]`` "
        "boxes in ``ltrb`` form and ``N`` labels. Outputs: the cropped image, boxes and "
        'labels. "No crop" passes all three through unchanged, as DALI does; a crop needs '
        "a label for each box it keeps."
    ),
    inputs=(
        InputSpec("input_0", "The image, HWC or HW."),
        InputSpec("input_1", "Relative boxes, float32 ``[N, 4]`` as ``[l, t, r, b]``."),
        InputSpec("input_2", "The labels, one per box (``[N]`` or ``[N, 1]``)."),
    ),
    outputs=("image", "boxes", "labels"),
    args=(ArgSpec("num_attempts", "int", 1, "Windows tried per round."),),
)


def _region_arg(name: str, kind: str, doc: str) -> ArgSpec:
    return ArgSpec(name, kind, None, doc + " Per output sample: ``K x 2`` (H, W) values.", True)


MULTI_PASTE = OpSchema(
    name="multi_paste",
    doc=(
        "Pastes several regions of the input samples onto each output canvas, in order (later "
        "regions overwrite earlier ones; the background is 0).\n\n"
        "With ``in_ids`` there is one input batch and output sample ``i`` gets the regions of "
        "the input samples ``in_ids[i]``; without it, output sample ``i`` gets one region from "
        "sample ``i`` of each input. A region has an input anchor (default 0), a shape "
        "(default: up to the end of its input) and an output anchor (default 0); relative "
        "forms are scaled by the input (anchors, shapes) or output (output anchors) extent in "
        "float32, anchors rounded down and shapes up (as DALI). A region outside its input or "
        "the canvas is an error. "
        "The canvas is ``output_size``, or the input shape when all input samples share it. "
        "Inputs: HWC, or FHWC (every frame gets the same regions)."
    ),
    inputs=(
        InputSpec("input_0", "The samples to paste from (HWC or FHWC)."),
        InputSpec("inputs", "More inputs (without ``in_ids``), up to 63.", variadic=True),
    ),
    args=(
        ArgSpec("in_ids", "int_vec", None, "Input samples to paste into each output.", True),
        _region_arg("in_anchors", "int_vec", "Top-left corners of the source regions."),
        _region_arg("in_anchors_rel", "float_vec", "Relative form of ``in_anchors``, in [0, 1]."),
        _region_arg("shapes", "int_vec", "Extents of the pasted regions."),
        _region_arg("shapes_rel", "float_vec", "Relative form of ``shapes``, in [0, 1]."),
        _region_arg("out_anchors", "int_vec", "Top-left corners of the regions in the output."),
        _region_arg("out_anchors_rel", "float_vec", "Relative form of ``out_anchors``."),
        ArgSpec("output_size", "int_vec", None, "Canvas size (H, W).", True),
        ArgSpec("dtype", "dtype", None, "Output type; default: the input's."),
    ),
    random=False,
)

SCHEMAS = (ROI_RANDOM_CROP, SSD_RANDOM_CROP, MULTI_PASTE)
KERNELS = {
    "roi_random_crop": f"{_KERNELS}.windows:RoiRandomCropKernel",
    "ssd_random_crop": f"{_KERNELS}.ssd:SSDRandomCropKernel",
    "multi_paste": f"{_KERNELS}.pastes:MultiPasteKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the crop-window and paste operators."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
