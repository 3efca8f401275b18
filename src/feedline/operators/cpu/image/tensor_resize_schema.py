"""The schema of ``tensor_resize`` (registered by the image family's plugin, :mod:`.schemas`;
DALI's older spelling ``experimental.tensor_resize`` is an alias of it)."""

from __future__ import annotations

from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.types import InterpType

__all__ = ["TENSOR_RESIZE"]

_PER_AXIS = " One value, or one per axis of ``axes``/``axis_names`` (default: every axis)."

TENSOR_RESIZE = OpSchema(
    "tensor_resize",
    "Resizes tensors of any rank along any axes (sequences and volumes included).\n\n"
    "Each axis named by ``axes`` or ``axis_names`` (default: all) gets an output extent from "
    "``sizes`` or from ``scales`` times its input extent, rounded by ``size_rounding``; the "
    "other axes keep theirs. ``roi_start``/``roi_end`` select the source region (absolute or "
    "``roi_relative``; start > end mirrors). ``mode`` and ``max_size`` work as in ``resize``. "
    "With ``subpixel_scale`` a rounded extent keeps the requested scale: the source region "
    "shrinks or grows around its ``alignment`` point (0 start, 0.5 centre, 1 end). Leading and "
    "trailing axes that do not change are left alone; at most three consecutive axes may be "
    "resampled. Filters, antialiasing and rounding are ``resize``'s (the same resampler). "
    "Inputs: uint8, int16, uint16 or float32; output: the input's type or FLOAT.",
    inputs=(InputSpec("input", "Any tensor of 1 or more dimensions."),),
    args=(
        ArgSpec("sizes", "float_vec", None, "Output extents." + _PER_AXIS, True),
        ArgSpec(
            "scales", "float_vec", None, "Scale factors (excludes ``sizes``)." + _PER_AXIS, True
        ),
        ArgSpec(
            "size_rounding",
            "str",
            "round",
            "How fractional extents become integers: 'round' (halves away from zero), "
            "'truncate' or 'ceil'.",
            choices=("round", "truncate", "ceil"),
        ),
        ArgSpec(
            "alignment",
            "float_vec",
            (0.5,),
            "Point of the source region that keeps its place when an extent is rounded."
            + _PER_AXIS,
            True,
        ),
        ArgSpec(
            "axes",
            "int_vec",
            None,
            "Axes the per-axis arguments refer to (negative from the back).",
        ),
        ArgSpec("axis_names", "layout", None, "Names of those axes (excludes ``axes``)."),
        ArgSpec(
            "mode",
            "str",
            "default",
            "default (missing extents scale by the others' mean), stretch (they stay), "
            "not_smaller or not_larger (keep the aspect ratio; not with ``scales``).",
            choices=("default", "stretch", "not_smaller", "not_larger"),
        ),
        ArgSpec("max_size", "float_vec", None, "Limit of the output extents." + _PER_AXIS),
        ArgSpec("roi_start", "float_vec", None, "Source region start." + _PER_AXIS, True),
        ArgSpec("roi_end", "float_vec", None, "Source region end." + _PER_AXIS, True),
        ArgSpec("roi_relative", "bool", False, "ROI given relative to the input extents."),
        ArgSpec("subpixel_scale", "bool", True, "Keep the exact scale when extents are rounded."),
        ArgSpec(
            "interp_type",
            "interp",
            InterpType.INTERP_LINEAR,
            "Filter: INTERP_NN, LINEAR, CUBIC, LANCZOS3, TRIANGULAR or GAUSSIAN.",
            True,
        ),
        ArgSpec(
            "min_filter", "interp", None, "Filter when downscaling (default: interp_type).", True
        ),
        ArgSpec(
            "mag_filter", "interp", None, "Filter when upscaling (default: interp_type).", True
        ),
        ArgSpec("antialias", "bool", True, "Widen the filter by the scale when downscaling."),
        ArgSpec("dtype", "dtype", None, "Output type: the input's (default) or FLOAT."),
        ArgSpec(
            "minibatch_size",
            "int",
            32,
            "DALI's GPU batch-splitting hint; accepted, and changes nothing.",
        ),
        ArgSpec(
            "temp_buffer_hint",
            "int",
            0,
            "DALI's scratch-memory hint (ignored by DALI's CPU variant too).",
        ),
        ArgSpec(
            "bytes_per_sample_hint",
            "int_vec",
            (0,),
            "DALI's output-size hint; accepted, and changes nothing (outputs are sized exactly).",
        ),
    ),
    random=False,
)
