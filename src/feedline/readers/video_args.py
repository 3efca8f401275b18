"""The schemas of the video readers, and ``readers.video_resize``'s output size and resizing."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.schema import REQUIRED, ArgSpec
from feedline.core.types import DataType, ImageType, InterpType
from feedline.readers.base import reader_schema

__all__ = [
    "EXPERIMENTAL_SCHEMA",
    "RESIZE_SCHEMA",
    "VIDEO_SCHEMA",
    "check_resize_args",
    "frame_number_mode",
    "output_size",
    "resize_frames",
]

_NO_EFFECT = "A GPU decoder setting; no effect on the CPU."

_SOURCES: tuple[ArgSpec, ...] = (
    ArgSpec("filenames", "str_vec", (), "Paths of the video files. Excludes file_root and "
            "file_list."),
    ArgSpec("labels", "int_vec", None, "One int32 label per file of filenames; an empty list "
            "numbers the files 0, 1, …; without it there is no label output."),
    ArgSpec("file_root", "str", "", "A folder whose sub-folders are classes (labels in sorted "
            "order), each holding videos."),
    ArgSpec("file_list", "str", "", "A text file of 'path label [start [end]]' lines."),
    ArgSpec("sequence_length", "int", REQUIRED, "Frames per sequence."),
    ArgSpec("step", "int", -1, "Frames between the starts of consecutive sequences "
            "(negative: sequence_length)."),
    ArgSpec("stride", "int", 1, "Frames between consecutive frames of a sequence."),
    ArgSpec("enable_frame_num", "any", "none", "Also output frame numbers: 'none'/False, "
            "'scalar'/True (the first frame's, shape (1,)) or 'sequence' (every frame's)."),
    ArgSpec("enable_timestamps", "bool", False, "Also output each frame's time in seconds "
            "(frame number / frame rate; -1 for padding)."),
    ArgSpec("image_type", "image_type", ImageType.RGB, "Colour space of the frames: RGB or "
            "YCbCr."),
)  # fmt: skip

_LEGACY: tuple[ArgSpec, ...] = (
    ArgSpec("additional_decode_surfaces", "int", 2, _NO_EFFECT),
    ArgSpec("channels", "int", 3, "Channels of the frames (3)."),
    ArgSpec("dtype", "dtype", DataType.UINT8, "Frame type: UINT8 or FLOAT."),
    ArgSpec("normalized", "bool", False, "With FLOAT, divide the values by 255."),
    ArgSpec("pad_sequences", "bool", False, "Also cut sequences that run past the end of a "
            "video; their missing frames are zeros, frame numbers and timestamps -1."),
    ArgSpec("file_list_frame_num", "bool", False, "file_list bounds are frame numbers (start "
            "rounded up, end down) instead of seconds."),
    ArgSpec("file_list_include_preceding_frame", "bool", False, "Round second-bounds outwards "
            "(start down, end up) instead of inwards."),
    ArgSpec("skip_vfr_check", "bool", False, "Read videos whose frame rate varies instead of "
            "refusing them."),
)  # fmt: skip

_EXPERIMENTAL: tuple[ArgSpec, ...] = (
    ArgSpec("file_list_format", "str", "timestamps", "file_list bounds are 'timestamps' "
            "(seconds) or 'frames'.", choices=("timestamps", "frames")),
    ArgSpec("file_list_include_end", "bool", True, "Include the end bound's frame."),
    ArgSpec("file_list_rounding", "str", "start_down_end_up", "Rounding of fractional bounds.",
            choices=("start_down_end_up", "start_up_end_down", "all_down", "all_up")),
    ArgSpec("fill_value", "int_vec", (0,), "Colour of constant padding frames (one value or "
            "one per channel)."),
    ArgSpec("pad_mode", "str", "none", "Sequences running past the end: 'none' (dropped), "
            "'constant' (fill_value frames), 'edge'/'repeat' (the last frame).",
            choices=("none", "constant", "edge", "repeat")),
    ArgSpec("uniform_sample", "bool", False, "One sequence per video: sequence_length frames "
            "spread evenly over it."),
)  # fmt: skip

_RESIZE: tuple[ArgSpec, ...] = (
    ArgSpec("resize_x", "float", 0.0, "Output width (0: from the other arguments)."),
    ArgSpec("resize_y", "float", 0.0, "Output height (0: from the other arguments)."),
    ArgSpec("resize_z", "float", 0.0, "Volumes only; must stay 0."),
    ArgSpec("size", "float_vec", None, "Output (height, width); 0 keeps the aspect ratio."),
    ArgSpec("resize_shorter", "float", 0.0, "Length of the shorter side (aspect kept)."),
    ArgSpec("resize_longer", "float", 0.0, "Length of the longer side (aspect kept)."),
    ArgSpec("max_size", "float_vec", None, "Upper limit of (height, width) with "
            "resize_shorter."),
    ArgSpec("mode", "str", "default", "'default', 'stretch', 'not_smaller' or 'not_larger'.",
            choices=("default", "stretch", "not_smaller", "not_larger")),
    ArgSpec("interp_type", "interp", InterpType.INTERP_LINEAR, "Interpolation: NN, LINEAR, "
            "CUBIC or LANCZOS3."),
    ArgSpec("min_filter", "interp", InterpType.INTERP_LINEAR, "Must equal interp_type."),
    ArgSpec("mag_filter", "interp", InterpType.INTERP_LINEAR, "Must equal interp_type."),
    ArgSpec("antialias", "bool", True, "Filter when downscaling (always on; False is "
            "refused)."),
    ArgSpec("roi_start", "float_vec", None, "Not supported: refused."),
    ArgSpec("roi_end", "float_vec", None, "Not supported: refused."),
    ArgSpec("roi_relative", "bool", False, "Not supported with a region: no effect."),
    ArgSpec("subpixel_scale", "bool", True, "Sizes are rounded to whole pixels either way."),
    ArgSpec("minibatch_size", "int", 32, "A GPU batching hint; no effect on the CPU."),
    ArgSpec("temp_buffer_hint", "int", 0, "A GPU memory hint; no effect on the CPU."),
)  # fmt: skip

_DOC = """\
Read sequences of frames from video files (decoded on the CPU with PyAV/FFmpeg).

Each video is cut into sequences of ``sequence_length`` frames, ``stride`` apart, starting
every ``step`` frames; a sample is one sequence, ``F×H×W×3`` (layout ``FHWC``). Outputs: the
frames, then the label (int32, shape (1,)) when labels exist (``labels``, ``file_root`` or
``file_list``), then frame numbers and timestamps when enabled. A file list line ``path label
[start [end]]`` restricts a video to a range (negative bounds count from the end). Videos are
probed once when the reader indexes its data set; a file that cannot be read or decoded raises
an error naming it."""


def _outputs(args: Mapping[str, Any]) -> tuple[str, ...]:
    names = ["frames"]
    if args.get("labels") is not None or args.get("file_root") or args.get("file_list"):
        names.append("label")
    if _mode(args.get("enable_frame_num", "none")) != "none":
        names.append("frame_num")
    if args.get("enable_timestamps"):
        names.append("timestamps")
    return tuple(names)


VIDEO_SCHEMA = reader_schema("readers.video", _DOC + "\n\nDALI's ``readers.video`` needs a "
                             "GPU; this one decodes on the CPU.", (*_SOURCES, *_LEGACY),
                             outputs=_outputs)  # fmt: skip
RESIZE_SCHEMA = reader_schema("readers.video_resize", _DOC + "\n\nThe frames are then resized "
                              "as ``resize`` sizes images (Pillow's filters).",
                              (*_SOURCES, *_LEGACY, *_RESIZE), outputs=_outputs)  # fmt: skip
EXPERIMENTAL_SCHEMA = reader_schema("experimental.readers.video", _DOC,
                                    (*_SOURCES, *_EXPERIMENTAL), outputs=_outputs)  # fmt: skip


def _mode(value: Any) -> str:
    if value is None or value is False:
        return "none"
    if value is True:
        return "scalar"
    return str(value).lower()


def frame_number_mode(name: str, value: Any) -> str:
    """``none``, ``scalar`` or ``sequence`` from ``enable_frame_num``.

    Raises:
        ValueError: another value.
    """
    mode = _mode(value)
    if mode not in ("none", "scalar", "sequence"):
        raise ValueError(
            f"{name}: enable_frame_num must be 'none', 'scalar', 'sequence' or a bool, "
            f"got {value!r}"
        )
    return mode


_FILTERS = {InterpType.INTERP_NN: 0, InterpType.INTERP_LINEAR: 2, InterpType.INTERP_CUBIC: 3,
            InterpType.INTERP_LANCZOS3: 1}  # fmt: skip


def check_resize_args(args: Mapping[str, Any]) -> None:
    """Refuse the resize arguments this reader does not implement.

    Raises:
        ValueError: naming the argument.
    """
    where = "readers.video_resize"
    if args["roi_start"] is not None or args["roi_end"] is not None:
        raise ValueError(f"{where}: roi_start/roi_end are not supported")
    if not args["antialias"]:
        raise ValueError(f"{where}: antialias=False is not supported (Pillow always filters)")
    if args["resize_z"]:
        raise ValueError(f"{where}: resize_z applies to volumes, not video frames")
    interp = args["interp_type"]
    if interp not in _FILTERS or {args["min_filter"], args["mag_filter"]} != {interp}:
        raise ValueError(
            f"{where}: interp_type must be NN, LINEAR, CUBIC or LANCZOS3 and min_filter/"
            "mag_filter must equal it"
        )
    if not any((args["resize_x"], args["resize_y"], args["size"], args["resize_shorter"],
                args["resize_longer"])):  # fmt: skip
        raise ValueError(f"{where}: give resize_x/resize_y, size, resize_shorter or resize_longer")


def output_size(height: int, width: int, args: Mapping[str, Any]) -> tuple[int, int]:
    """The ``(height, width)`` frames of ``height × width`` are resized to."""
    out_h, out_w = float(args["resize_y"]), float(args["resize_x"])
    if args["size"]:
        out_h, out_w = (float(v) for v in (list(args["size"]) * 2)[:2])
    if args["resize_shorter"] or args["resize_longer"]:
        shorter = args["resize_shorter"] > 0
        target = args["resize_shorter"] or args["resize_longer"]
        scale = target / (min(height, width) if shorter else max(height, width))
        out_h, out_w = height * scale, width * scale
        if args["max_size"]:
            limit_h, limit_w = (float(v) for v in (list(args["max_size"]) * 2)[:2])
            cap = min(
                limit_h / out_h if limit_h else math.inf,
                limit_w / out_w if limit_w else math.inf,
                1.0,
            )
            out_h, out_w = out_h * cap, out_w * cap
    elif args["mode"] == "stretch":
        out_h, out_w = out_h or height, out_w or width
    elif out_h and out_w and args["mode"] in ("not_larger", "not_smaller"):
        pick = min if args["mode"] == "not_larger" else max
        scale = pick(out_h / height, out_w / width)
        out_h, out_w = height * scale, width * scale
    elif out_h and not out_w:
        out_w = width * out_h / height
    elif out_w and not out_h:
        out_h = height * out_w / width
    return max(round(out_h), 1), max(round(out_w), 1)


def resize_frames(frames: np.ndarray, args: Mapping[str, Any]) -> np.ndarray:
    """Resize every frame of an ``FHWC`` sequence (Pillow, per frame)."""
    from PIL import Image

    height, width = frames.shape[1:3]
    out_h, out_w = output_size(height, width, args)
    resample = _FILTERS[args["interp_type"]]
    if frames.dtype != np.uint8:
        planes = [[np.asarray(Image.fromarray(f[..., c]).resize((out_w, out_h), resample))
                   for c in range(f.shape[-1])] for f in frames]  # fmt: skip
        return np.stack([np.stack(p, axis=-1) for p in planes]).astype(frames.dtype)
    return np.stack([np.asarray(Image.fromarray(f).resize((out_w, out_h), resample))
                     for f in frames])  # fmt: skip
