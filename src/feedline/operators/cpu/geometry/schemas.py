"""Family ``geometry``: schemas and registration of the operators that move pixels, boxes and
points.

Images: ``flip``, ``rotate``, ``warp_affine``, ``paste``. Boxes and points: ``bb_flip``,
``bbox_paste``, ``random_bbox_crop``, ``box_encoder``, ``coord_transform``, ``coord_flip``.
Argument names and defaults follow DALI. Kernels (imported on first use): :mod:`.flip`,
:mod:`.warp`, :mod:`.paste`, :mod:`.bbox`, :mod:`.bbox_crop`, :mod:`.box_encoder`,
:mod:`.coords`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType, InterpType
from feedline.operators.cpu.common.schemas import (
    OUTPUT_DTYPE_ALIAS,
    dtype_arg,
    image_input,
    register_cpu_operators,
)

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "BBOX_PASTE",
    "BBOX_ROTATE",
    "BB_FLIP",
    "BOX_ENCODER",
    "COORD_FLIP",
    "COORD_TRANSFORM",
    "FLIP",
    "KERNELS",
    "PASTE",
    "RANDOM_BBOX_CROP",
    "ROTATE",
    "SCHEMAS",
    "WARP_AFFINE",
    "feedline_register_operators",
    "random_bbox_crop_outputs",
]

_FLIP_LAYOUTS = ("FDHWC", "FHWC", "DHWC", "HWC", "FCDHW", "FCHW", "CDHW", "CHW", "HW")
_WARP_LAYOUTS = ("HWC", "FHWC", "HW", "CHW")

_GEOMETRY_NOTE = (
    "Coordinates: ``(0, 0)`` is the top-left corner of the first pixel, pixel centres are at "
    "``+0.5``. Points outside the input take ``fill_value`` or, without it, the nearest border "
    "pixel. Only ``INTERP_NN`` and ``INTERP_LINEAR`` are supported (as in DALI). Inputs: "
    "uint8, int16, int32 or float32; integer outputs are rounded and saturated."
)
_WARP_ARGS = (
    ArgSpec(
        "size",
        "float_vec",
        None,
        "Output ``(height, width)`` in pixels, rounded to the nearest integer.",
        tensor=True,
    ),
    ArgSpec("fill_value", "float", None, "Value outside the source; default: clamp to border."),
    ArgSpec("interp_type", "interp", InterpType.INTERP_LINEAR, "INTERP_NN or INTERP_LINEAR."),
    dtype_arg(),
)

FLIP = OpSchema(
    name="flip",
    doc=(
        "Flips images, sequences and volumes horizontally (W), vertically (H) and/or along "
        "depth (D).\n\nAny non-zero value flips. Data without a layout is taken as HW/HWC/"
        "FHWC/FDHWC by its number of dimensions (DALI assumes HWC). ``HW`` is accepted too."
    ),
    inputs=image_input("Images of any type.", _FLIP_LAYOUTS),
    args=(
        ArgSpec("horizontal", "int", 1, "Flip the horizontal dimension.", tensor=True),
        ArgSpec("vertical", "int", 0, "Flip the vertical dimension.", tensor=True),
        ArgSpec("depthwise", "int", 0, "Flip the depth dimension.", tensor=True),
    ),
    random=False,
)

ROTATE = OpSchema(
    name="rotate",
    doc=(
        "Rotates images, volumes and sequences of them by ``angle`` degrees.\n\n"
        "Images turn counter-clockwise on screen (y points down), volumes (DHWC) about ``axis`` "
        "by the right-hand rule. "
        "Without ``size`` or ``keep_size`` the canvas is the rotated bounding box rounded up, "
        "each extent grown by one pixel where needed to keep the parity of the input extent it "
        "is mostly aligned with (as DALI). The canvas centre maps to the image centre. Sequences "
        "(FHWC, FDHWC) take ``angle``/``axis`` per sample or per frame (``fn.per_frame``); their "
        "frames share one canvas: per extent the largest frame's, odd where most frames' own "
        "would be odd (as DALI). " + _GEOMETRY_NOTE
    ),
    inputs=image_input("Images, volumes or sequences of them.", (*_WARP_LAYOUTS, "DHWC", "FDHWC")),
    args=(
        ArgSpec("angle", "float", REQUIRED, "Rotation angle in degrees.", tensor=True),
        ArgSpec(
            "axis",
            "float_vec",
            None,
            "Rotation axis of volumes, ``(x, y, z)`` along W, H, D (any non-zero length); "
            "required for them, refused for 2-D images.",
            True,
        ),
        ArgSpec("keep_size", "bool", False, "Keep the input size (when ``size`` is not given)."),
        ArgSpec(
            "size",
            "float_vec",
            None,
            "Output ``(height, width)``, or ``(depth, height, width)`` for volumes, in pixels, "
            "rounded to the nearest integer.",
            tensor=True,
        ),
        *_WARP_ARGS[1:],
    ),
    deprecated=OUTPUT_DTYPE_ALIAS,
    random=False,
)

WARP_AFFINE = OpSchema(
    name="warp_affine",
    doc=(
        "Applies an affine transform to images.\n\n``out(x, y) = in(M11 x + M12 y + M13, "
        "M21 x + M22 y + M23)`` for the destination-to-source matrix ``M`` (as OpenCV's "
        "``warpAffine`` with ``WARP_INVERSE_MAP``). With ``inverse_map=False`` the matrix maps "
        "source to "
        "destination and is inverted first. The output size defaults to the input's. Volumes "
        "(DHWC, FDHWC) take a 3x4 matrix over ``(x, y, z, 1)`` (W, H, D) and a ``size`` of "
        "``(depth, height, width)``. Sequences take ``matrix`` per sample or per frame "
        "(``fn.per_frame``). " + _GEOMETRY_NOTE
    ),
    inputs=(
        InputSpec(
            "data",
            "Images, volumes or sequences of them.",
            layouts=(*_WARP_LAYOUTS, "DHWC", "FDHWC"),
        ),
        InputSpec("mtx", "Per-sample 2x3 (3x4) matrices instead of ``matrix``.", optional=True),
    ),
    args=(
        ArgSpec(
            "matrix",
            "float_vec",
            None,
            "``(M11, M12, M13, M21, M22, M23)`` (12 values, row by row, for volumes); or give "
            "the second input.",
            tensor=True,
        ),
        ArgSpec(
            "inverse_map",
            "bool",
            True,
            "True: ``matrix`` maps destination to source (DALI's default); False: the inverse.",
        ),
        *_WARP_ARGS,
    ),
    deprecated=OUTPUT_DTYPE_ALIAS,
    random=False,
)

PASTE = OpSchema(
    name="paste",
    doc=(
        "Pastes uint8 HWC images onto a larger canvas filled with ``fill_value``.\n\n"
        "Canvas extent: ``max(extent * ratio, min_canvas_size)`` truncated; the image's corner "
        "is at ``paste_x/y * (canvas - extent)`` truncated (0 = left/top, 1 = right/bottom)."
    ),
    inputs=image_input("uint8 HWC images.", ("HWC",)),
    args=(
        ArgSpec("fill_value", "int_vec", REQUIRED, "Canvas colour: 1 or n_channels values."),
        ArgSpec("min_canvas_size", "float", 0.0, "Minimum canvas extent.", tensor=True),
        ArgSpec("n_channels", "int", 3, "Number of channels of the images."),
        ArgSpec("paste_x", "float", 0.5, "Horizontal position in [0, 1].", tensor=True),
        ArgSpec("paste_y", "float", 0.5, "Vertical position in [0, 1].", tensor=True),
        ArgSpec("ratio", "float", REQUIRED, "Canvas size / input size (>= 1).", tensor=True),
    ),
    random=False,
)


def random_bbox_crop_outputs(args: Mapping[str, Any], num_inputs: int = 2) -> tuple[str, ...]:
    """Outputs of ``random_bbox_crop``: anchor, shape, boxes (+ labels) (+ bbox_indices)."""
    names = ("anchor", "shape", "boxes", *(("labels",) if num_inputs > 1 else ()))
    return names + (("bbox_indices",) if args.get("output_bbox_indices") else ())


_BOXES_DOC = "Boxes, 4 coordinates each (``[x, y, w, h]`` or ``[l, t, r, b]``), relative."
_LTRB = ArgSpec("ltrb", "bool", False, "True for ``[l, t, r, b]``, False for ``[x, y, w, h]``.")

BB_FLIP = OpSchema(
    name="bb_flip",
    doc=(
        "Flips bounding boxes horizontally or vertically (mirror).\n\n"
        "Boxes are relative (``[0, 1]``), ``[x, y, w, h]`` (``ltrb=False``) or "
        "``[l, t, r, b]``; a horizontal flip maps ``x`` to ``1 - x`` (so ``l' = 1 - r``, "
        "``x' = 1 - x - w``). Output: float32 boxes of the input's shape."
    ),
    inputs=(InputSpec("input", _BOXES_DOC),),
    args=(
        ArgSpec("horizontal", "int", 1, "Flip the horizontal dimension (non-zero = flip).", True),
        ArgSpec("vertical", "int", 0, "Flip the vertical dimension (non-zero = flip).", True),
        _LTRB,
    ),
    random=False,
)

BBOX_PASTE = OpSchema(
    name="bbox_paste",
    doc=(
        "Transforms boxes so they stay on the same content after the image is pasted onto a "
        "canvas ``ratio`` times larger (as ``fn.paste`` does).\n\n"
        "Corners: ``c' = c / ratio + paste * (ratio - 1) / ratio``; extents (``xywh``): "
        "``w' = w / ratio``. ``paste_x/y = 0`` aligns the image top-left, ``1`` bottom-right; "
        "the offset is nudged down in float32 so boxes ending at 1 stay within 1."
    ),
    inputs=(InputSpec("input", _BOXES_DOC),),
    args=(
        ArgSpec("ratio", "float", REQUIRED, "Canvas size / input size; at least 1.", True),
        ArgSpec("paste_x", "float", 0.5, "Horizontal paste position in [0, 1].", True),
        ArgSpec("paste_y", "float", 0.5, "Vertical paste position in [0, 1].", True),
        _LTRB,
    ),
    random=False,
)

RANDOM_BBOX_CROP = OpSchema(
    name="random_bbox_crop",
    doc=(
        "Picks a random crop window and adjusts (or drops) the bounding boxes to match.\n\n"
        "Outputs ``anchor`` and ``shape`` of the window (``[x, y(, z)]`` and ``[w, h(, d)]``, "
        "float32: relative, or pixels when ``crop_shape`` is given; feed them to ``fn.slice``), "
        "the kept boxes mapped into the window (clipped to [0, 1], in ``bbox_layout``), the "
        "kept labels when a ``labels`` input is given, and the kept boxes' indices (int32) when "
        "``output_bbox_indices`` is set.\n\n"
        "Each round picks a threshold (or no crop, if allowed) and tries ``num_attempts`` "
        "windows; a window is valid when the overlap metric of all (or any, see "
        "``all_boxes_above_threshold``) boxes reaches the threshold and at least one box is "
        "kept. Boxes are kept when their centroid lies in the window (``lo <= c < hi``) or, "
        "with ``bbox_prune_threshold``, when they overlap it and that fraction of their area "
        "lies in it. Windows "
        "are drawn from the sample's generator, so results do not depend on ``num_threads``. "
        "Unlike DALI, an unbounded search (``total_num_attempts=-1``) raises after 100,000 "
        "windows instead of looping forever, a round ends at its first valid window, and "
        "aspect ratios are compared with a 1e-6 relative tolerance. See "
        "``docs/operators/boxes_random_python.md``."
    ),
    inputs=(
        InputSpec("boxes", "Relative boxes ``(N, 4)`` or ``(N, 6)`` (3-D), float."),
        InputSpec("labels", "Labels, one row per box (``(N,)`` or ``(N, k)``).", optional=True),
    ),
    outputs=random_bbox_crop_outputs,
    args=(
        ArgSpec("thresholds", "float_vec", (0.0,), "Minimum overlap values to choose from."),
        ArgSpec(
            "threshold_type",
            "str",
            "iou",
            "``iou``: IoU of box and window; ``overlap``: fraction of the box in the window.",
            choices=("iou", "overlap"),
        ),
        ArgSpec(
            "aspect_ratio",
            "float_vec",
            None,
            "Window aspect-ratio range ``[min, max]`` (x/y); 6 values for 3-D (x/y, x/z, y/z). "
            "None means [1.0, 1.0] (square). Not allowed with ``crop_shape``.",
        ),
        ArgSpec(
            "scaling",
            "float_vec",
            None,
            "Window extent range ``[min, max]`` relative to the image; None means [1.0, 1.0]. "
            "Not allowed with ``crop_shape``.",
        ),
        ArgSpec(
            "ltrb",
            "bool",
            None,
            "Deprecated (DeprecationWarning): True = ``bbox_layout='xyXY'``, False = 'xyWH'. "
            "None (absent) means start/end coordinates.",
        ),
        ArgSpec("num_attempts", "int", 1, "Windows tried per chosen threshold."),
        ArgSpec(
            "total_num_attempts",
            "int",
            -1,
            "Total windows tried before returning the best one (-1: search until valid).",
        ),
        ArgSpec(
            "all_boxes_above_threshold",
            "bool",
            True,
            "Require every box (True) or at least one (False) to reach the threshold.",
        ),
        ArgSpec(
            "allow_no_crop",
            "bool",
            None,
            "Make 'no crop' one of the outcomes. None means True, or False with ``crop_shape``.",
        ),
        ArgSpec(
            "crop_shape",
            "int_vec",
            None,
            "Fixed window size in pixels (order: ``shape_layout``); needs ``input_shape``.",
            True,
        ),
        ArgSpec(
            "input_shape",
            "int_vec",
            None,
            "Image size in pixels (order: ``shape_layout``); needed with ``crop_shape``. "
            "Alone, aspect ratios are measured on the window in pixels.",
            True,
        ),
        ArgSpec(
            "bbox_layout",
            "layout",
            "",
            "Coordinate order: x y z start, X Y Z end, W H D extent (e.g. 'xyXY', 'xyWH'); "
            "'' means 'xyXY' / 'xyzXYZ'.",
        ),
        ArgSpec(
            "shape_layout",
            "layout",
            "",
            "Order of ``crop_shape``/``input_shape`` (W, H, D); '' means 'WH' / 'WHD'.",
        ),
        ArgSpec("output_bbox_indices", "bool", False, "Add the kept boxes' input indices."),
        ArgSpec(
            "bbox_prune_threshold",
            "float",
            None,
            "Keep a box when it overlaps the window and at least this fraction of its area is "
            "in it (instead of the centroid rule).",
        ),
    ),
)

BOX_ENCODER = OpSchema(
    name="box_encoder",
    doc=(
        "Encodes boxes and labels against SSD anchors (default boxes).\n\n"
        "Each box claims its best-IoU anchor; every other anchor takes its best box when the "
        "IoU exceeds ``criteria`` (ties: the last index). Outputs one row per anchor: "
        "``[cx, cy, w, h]`` of the matched box (unmatched: of the anchor, label 0), or with "
        "``offset=True`` the normalised offsets ``((c - c_a) / wh_a - means) / stds`` and "
        "``(log(wh / wh_a) - means) / stds`` (unmatched: zeros)."
    ),
    inputs=(
        InputSpec("boxes", "Boxes ``(N, 4)`` as ``[l, t, r, b]``, float."),
        InputSpec("labels", "Integer labels, ``(N,)`` or ``(N, 1)``."),
    ),
    outputs=("boxes", "labels"),
    args=(
        ArgSpec("anchors", "float_vec", REQUIRED, "Anchors as a flat ``ltrb`` list."),
        ArgSpec("criteria", "float", 0.5, "IoU threshold for matching, in [0, 1]."),
        ArgSpec("offset", "bool", False, "Output normalised offsets instead of boxes."),
        ArgSpec("scale", "float", 1.0, "Rescales boxes and anchors before computing offsets."),
        ArgSpec("means", "float_vec", (0.0, 0.0, 0.0, 0.0), "``[x y w h]`` offset means."),
        ArgSpec("stds", "float_vec", (1.0, 1.0, 1.0, 1.0), "``[x y w h]`` offset stddevs."),
    ),
    random=False,
)

COORD_TRANSFORM = OpSchema(
    name="coord_transform",
    doc=(
        "Applies a linear transform ``out = M @ in + T`` to points or vectors (last axis).\n\n"
        "``M`` is ``m x n`` (flat row-major list, or an ``(m, n)`` matrix per sample); a scalar "
        "means that value on the diagonal; absent means identity. ``T`` has ``m`` values (a "
        "scalar is broadcast). ``MT`` is the block ``[M T]`` instead of both. Integer output "
        "types are rejected (as in DALI 2.4).\n\n"
        "Arguments marked with ``fn.per_frame`` give one matrix per frame: each frame of a "
        "sequence (layout starting with ``F``) gets its own (one given matrix serves every "
        "frame), and points without frames are transformed once per given matrix, giving a "
        "sequence."
    ),
    inputs=(InputSpec("input", "Points ``(..., n)``: uint8, int16, uint16, int32 or float."),),
    args=(
        ArgSpec("M", "float_vec", None, "The matrix (see above).", True),
        ArgSpec("T", "float_vec", None, "The translation vector.", True),
        ArgSpec("MT", "float_vec", None, "The block matrix ``[M T]``.", True),
        ArgSpec(
            "dtype",
            "dtype",
            DataType.FLOAT,
            "Output type: FLOAT (or FLOAT64/FLOAT16), or the input's own integer type (rounded "
            "half away from zero and saturated; CPU only).",
        ),
    ),
    random=False,
)

COORD_FLIP = OpSchema(
    name="coord_flip",
    doc=(
        "Flips (reflects) coordinates about a centre: ``c' = 2 * center - c`` on each flipped "
        "axis.\n\nInput ``(N, ndim)`` float, ``ndim`` 1 to 3; flags for axes the points do not "
        "have do not apply."
    ),
    inputs=(InputSpec("input", "Coordinates ``(N, ndim)``, float."),),
    args=(
        ArgSpec("layout", "layout", "", "Axis of each column (x, y, z); '' = 'x'/'xy'/'xyz'."),
        ArgSpec("flip_x", "int", 1, "Flip the x coordinate.", True),
        ArgSpec("flip_y", "int", 0, "Flip the y coordinate.", True),
        ArgSpec("flip_z", "int", 0, "Flip the z coordinate.", True),
        ArgSpec("center_x", "float", 0.5, "Flip centre on x.", True),
        ArgSpec("center_y", "float", 0.5, "Flip centre on y.", True),
        ArgSpec("center_z", "float", 0.5, "Flip centre on z.", True),
    ),
    random=False,
)

BBOX_ROTATE = OpSchema(
    name="bbox_rotate",
    doc=(
        "Moves bounding boxes the way ``rotate`` moves their image, so they stay on the same "
        "objects (call it with the original image shape, before or beside ``rotate``).\n\n"
        "Box corners are rotated about the image centre onto ``rotate``'s canvas (``size``, "
        "else the input size with ``keep_size``, else the rotated bounding size). ``mode``: "
        "``expand`` encloses the rotated box, ``fixed`` keeps the original width and height "
        "centred on the rotated centre, ``halfway`` lies between. With ``keep_size`` boxes are "
        "clipped to the canvas and dropped, with their labels, when less than "
        "``remove_threshold`` of their area stays. Boxes: float32 ``[N, 4]``."
    ),
    inputs=(
        InputSpec("bboxes", "Boxes, float32 ``[N, 4]`` in ``bbox_layout``."),
        InputSpec(
            "labels", "Labels, ``[N]`` or ``[N, 1]``, removed with their boxes.", optional=True
        ),
    ),
    outputs=lambda args, num_inputs=1: ("bboxes", "labels")[:num_inputs],
    args=(
        ArgSpec("angle", "float", REQUIRED, "Rotation angle in degrees.", tensor=True),
        ArgSpec("input_shape", "int_vec", REQUIRED, "Shape of the original image.", True),
        ArgSpec("shape_layout", "layout", "HW", "Meaning of the ``input_shape`` dimensions."),
        ArgSpec("bbox_layout", "layout", "xyXY", "``xyWH`` or ``xyXY``."),
        ArgSpec("bbox_normalized", "bool", True, "Boxes are relative ([0, 1]), else pixels."),
        ArgSpec("keep_size", "bool", False, "The canvas keeps the input size (as ``rotate``)."),
        ArgSpec("mode", "str", "expand", "``expand``, ``fixed`` or ``halfway``."),
        ArgSpec(
            "remove_threshold",
            "float",
            0.1,
            "With ``keep_size``: the least fraction of a box's area that must stay on the "
            "canvas, in [0, 1].",
        ),
        ArgSpec("size", "float_vec", (), "The output canvas size given to ``rotate``.", True),
    ),
    random=False,
)

SCHEMAS = (
    FLIP,
    ROTATE,
    WARP_AFFINE,
    PASTE,
    BB_FLIP,
    BBOX_PASTE,
    RANDOM_BBOX_CROP,
    BOX_ENCODER,
    COORD_TRANSFORM,
    COORD_FLIP,
    BBOX_ROTATE,
)

_KERNELS = "feedline.operators.cpu.geometry"
KERNELS = {
    "flip": f"{_KERNELS}.flip:FlipKernel",
    "rotate": f"{_KERNELS}.rotate:RotateKernel",
    "warp_affine": f"{_KERNELS}.warp:WarpAffineKernel",
    "paste": f"{_KERNELS}.paste:PasteKernel",
    "bb_flip": f"{_KERNELS}.bbox:BbFlipKernel",
    "bbox_paste": f"{_KERNELS}.bbox:BBoxPasteKernel",
    "random_bbox_crop": f"{_KERNELS}.bbox_crop:RandomBBoxCropKernel",
    "box_encoder": f"{_KERNELS}.box_encoder:BoxEncoderKernel",
    "coord_transform": f"{_KERNELS}.coords:CoordTransformKernel",
    "coord_flip": f"{_KERNELS}.coords:CoordFlipKernel",
    "bbox_rotate": f"{_KERNELS}.bbox_rotate:BBoxRotateKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the geometry operators with their CPU kernels."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
