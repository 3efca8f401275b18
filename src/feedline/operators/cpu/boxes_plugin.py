"""Plugin registering the box, coordinate, random and Python operators.

``bb_flip``, ``bbox_paste``, ``random_bbox_crop``, ``box_encoder``, ``coord_transform``,
``coord_flip``, ``random.uniform``, ``random.normal``, ``random.coin_flip``, ``random.choice``
and ``python_function``. Argument names and defaults follow DALI. Kernels are named by
``"module:attr"`` strings so nothing heavy is imported before a pipeline uses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = [
    "KERNELS",
    "SCHEMAS",
    "feedline_register_operators",
    "python_function_outputs",
    "random_bbox_crop_outputs",
]

_CPU = "feedline.operators.cpu"


def random_bbox_crop_outputs(args: Mapping[str, Any], num_inputs: int = 2) -> tuple[str, ...]:
    """Outputs of ``random_bbox_crop``: anchor, shape, boxes (+ labels) (+ bbox_indices)."""
    names = ("anchor", "shape", "boxes", *(("labels",) if num_inputs > 1 else ()))
    return names + (("bbox_indices",) if args.get("output_bbox_indices") else ())


def python_function_outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Output names of ``python_function``: one per ``num_outputs``.

    Raises:
        ValueError: ``num_outputs`` is negative.
    """
    count = args["num_outputs"]
    if count < 0:
        raise ValueError(f"python_function: num_outputs must be non-negative, got {count}")
    return tuple(f"output_{i}" for i in range(count))


_BOXES_DOC = "Boxes, 4 coordinates each (``[x, y, w, h]`` or ``[l, t, r, b]``), relative."

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
        ArgSpec("ltrb", "bool", False, "True for ``[l, t, r, b]``, False for ``[x, y, w, h]``."),
    ),
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
        ArgSpec("ltrb", "bool", False, "True for ``[l, t, r, b]``, False for ``[x, y, w, h]``."),
    ),
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
        "with ``bbox_prune_threshold``, when that fraction of their area lies in it. Windows "
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
            "Image size in pixels (order: ``shape_layout``); needed with ``crop_shape``.",
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
            "Keep a box when at least this fraction of its area is in the window (instead of "
            "the centroid rule).",
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
)

COORD_TRANSFORM = OpSchema(
    name="coord_transform",
    doc=(
        "Applies a linear transform ``out = M @ in + T`` to points or vectors (last axis).\n\n"
        "``M`` is ``m x n`` (flat row-major list, or an ``(m, n)`` matrix per sample); a scalar "
        "means that value on the diagonal; absent means identity. ``T`` has ``m`` values (a "
        "scalar is broadcast). ``MT`` is the block ``[M T]`` instead of both. Integer output "
        "types are rejected (as in DALI 2.4)."
    ),
    inputs=(InputSpec("input", "Points ``(..., n)``: uint8, int16, uint16, int32 or float."),),
    args=(
        ArgSpec("M", "float_vec", None, "The matrix (see above).", True),
        ArgSpec("T", "float_vec", None, "The translation vector.", True),
        ArgSpec("MT", "float_vec", None, "The block matrix ``[M T]``.", True),
        ArgSpec("dtype", "dtype", DataType.FLOAT, "Output type: FLOAT (or FLOAT64/FLOAT16)."),
    ),
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
)

_SHAPE_LIKE = InputSpec(
    "shape_like", "The output takes this input's shape (alternative to ``shape``).", optional=True
)
_SHAPE = ArgSpec("shape", "int_vec", None, "Output shape per sample (default: a scalar).", True)
_RANDOM_NOTE = (
    "\n\nValues come from the sample's own generator (operator seed, iteration, sample index): "
    "identical for any ``num_threads``. Integer ``dtype`` rounds half away from zero and "
    "saturates."
)

RANDOM_UNIFORM = OpSchema(
    name="random.uniform",
    doc="Generates uniformly distributed random numbers: continuous in ``[range[0], range[1])``, "
    "or drawn with equal probability from ``values``." + _RANDOM_NOTE,
    inputs=(_SHAPE_LIKE,),
    args=(
        ArgSpec("range", "float_vec", None, "``[min, max)``; None means [-1.0, 1.0].", True),
        ArgSpec("values", "float_vec", None, "Discrete values (exclusive with ``range``).", True),
        _SHAPE,
        ArgSpec("dtype", "dtype", None, "Output type; None means FLOAT."),
    ),
)

RANDOM_NORMAL = OpSchema(
    name="random.normal",
    doc="Generates normally distributed random numbers." + _RANDOM_NOTE,
    inputs=(_SHAPE_LIKE,),
    args=(
        ArgSpec("mean", "float", 0.0, "Mean of the distribution.", True),
        ArgSpec("stddev", "float", 1.0, "Standard deviation (>= 0).", True),
        _SHAPE,
        ArgSpec("dtype", "dtype", None, "Output type; None means FLOAT."),
    ),
)

RANDOM_COIN_FLIP = OpSchema(
    name="random.coin_flip",
    doc="Generates 1 with ``probability`` and 0 otherwise (Bernoulli)." + _RANDOM_NOTE,
    inputs=(_SHAPE_LIKE,),
    args=(
        ArgSpec("probability", "float", 0.5, "Probability of a 1, in [0, 1].", True),
        _SHAPE,
        ArgSpec("dtype", "dtype", None, "Output type; None means INT32."),
    ),
)

RANDOM_CHOICE = OpSchema(
    name="random.choice",
    doc=(
        "Draws random elements of ``a``: a scalar integer ``n`` means ``range(n)``; otherwise "
        "elements along the outer dimension (the output is ``shape + a.shape[1:]``). The output "
        "keeps ``a``'s type." + _RANDOM_NOTE
    ),
    inputs=(InputSpec("a", "A scalar count or the elements to choose from."), _SHAPE_LIKE),
    args=(
        ArgSpec("p", "float_vec", None, "Probability of each element (default: uniform).", True),
        _SHAPE,
    ),
)

PYTHON_FUNCTION = OpSchema(
    name="python_function",
    doc=(
        "Runs a Python function on the inputs (NumPy arrays, read-only).\n\n"
        "Per sample (default) the function is mapped over the batch on the pipeline's thread "
        "pool, in parallel; with ``batch_processing=True`` it is called once per batch with "
        "one list of arrays per input and returns lists (or arrays with the batch as outer "
        "dimension). With ``num_outputs > 1`` it returns a tuple. Never pruned; pipelines "
        "using it cannot be serialized."
    ),
    inputs=(InputSpec("input", "Inputs passed to the function.", optional=True, variadic=True),),
    outputs=python_function_outputs,
    args=(
        ArgSpec("function", "callable", REQUIRED, "The function to run."),
        ArgSpec("num_outputs", "int", 1, "Number of outputs (0 for side effects only)."),
        ArgSpec("batch_processing", "bool", False, "Call once per batch instead of per sample."),
        ArgSpec(
            "output_layouts",
            "str_vec",
            None,
            "Layout of each output; missing entries mean no layout.",
        ),
    ),
    no_prune=True,
    serializable=False,
)

SCHEMAS = (
    BB_FLIP,
    BBOX_PASTE,
    RANDOM_BBOX_CROP,
    BOX_ENCODER,
    COORD_TRANSFORM,
    COORD_FLIP,
    RANDOM_UNIFORM,
    RANDOM_NORMAL,
    RANDOM_COIN_FLIP,
    RANDOM_CHOICE,
    PYTHON_FUNCTION,
)

KERNELS = {
    "bb_flip": f"{_CPU}.bbox:BbFlipKernel",
    "bbox_paste": f"{_CPU}.bbox:BBoxPasteKernel",
    "random_bbox_crop": f"{_CPU}.bbox_crop:RandomBBoxCropKernel",
    "box_encoder": f"{_CPU}.box_encoder:BoxEncoderKernel",
    "coord_transform": f"{_CPU}.coords:CoordTransformKernel",
    "coord_flip": f"{_CPU}.coords:CoordFlipKernel",
    "random.uniform": f"{_CPU}.random_ops:UniformKernel",
    "random.normal": f"{_CPU}.random_ops:NormalKernel",
    "random.coin_flip": f"{_CPU}.random_ops:CoinFlipKernel",
    "random.choice": f"{_CPU}.random_ops:ChoiceKernel",
    "python_function": f"{_CPU}.python_op:python_function_kernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register every schema of this module with its CPU kernel."""
    for schema in SCHEMAS:
        registry.add_operator(schema, kernels={"cpu": KERNELS[schema.name]})
