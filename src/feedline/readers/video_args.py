"""The schemas of the video readers, and ``readers.video_resize``'s resizing (``resize``'s own,
reached through the registry)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from feedline.core.plugins import get_plugin_system
from feedline.core.schema import REQUIRED, ArgSpec
from feedline.core.types import DataType, ImageType, InterpType
from feedline.readers.base import reader_schema

__all__ = [
    "EXPERIMENTAL_SCHEMA",
    "RESIZE_SCHEMA",
    "VIDEO_SCHEMA",
    "frame_number_mode",
    "frame_resizer",
    "resize_arguments",
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
    ArgSpec("resize_z", "float", 0.0, "Depth of a resized volume: frames are 2-D, so it "
            "has no effect (as with ``resize`` on images)."),
    ArgSpec("size", "float_vec", None, "Output (height, width); 0 keeps the aspect ratio."),
    ArgSpec("resize_shorter", "float", 0.0, "Length of the shorter side (aspect kept)."),
    ArgSpec("resize_longer", "float", 0.0, "Length of the longer side (aspect kept)."),
    ArgSpec("max_size", "float_vec", None, "Upper limit of (height, width) with "
            "resize_shorter."),
    ArgSpec("mode", "str", "default", "'default', 'stretch', 'not_smaller' or 'not_larger'.",
            choices=("default", "stretch", "not_smaller", "not_larger")),
    ArgSpec("interp_type", "interp", InterpType.INTERP_LINEAR, "Interpolation (sets "
            "min_filter and mag_filter unless they are given)."),
    ArgSpec("min_filter", "interp", None, "Filter when downscaling (default: interp_type; "
            "DALI documents LINEAR, which interp_type defaults to)."),
    ArgSpec("mag_filter", "interp", None, "Filter when upscaling (default: interp_type; "
            "DALI documents LINEAR, which interp_type defaults to)."),
    ArgSpec("antialias", "bool", True, "Widen the filter when downscaling (not for NN)."),
    ArgSpec("roi_start", "float_vec", None, "Origin (y, x) of the region of each frame to "
            "resize; a start past the end flips that axis."),
    ArgSpec("roi_end", "float_vec", None, "End (y, x) of the region of each frame to resize."),
    ArgSpec("roi_relative", "bool", False, "roi_start/roi_end are fractions of the frame "
            "size (0..1) instead of pixels."),
    ArgSpec("subpixel_scale", "bool", True, "Keep the exact scale of a fractional output "
            "size by adjusting the source region (as ``resize``)."),
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
                              "by ``resize`` (the same sizes, regions and filters).",
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


_SIZE_ARGS = ("resize_x", "resize_y", "resize_z", "resize_shorter", "resize_longer")
_PASSED_ARGS = ("mode", "max_size", "roi_start", "roi_end", "roi_relative", "subpixel_scale",
                "interp_type", "min_filter", "mag_filter", "antialias")  # fmt: skip


def resize_arguments(args: Mapping[str, Any]) -> dict[str, Any]:
    """``readers.video_resize``'s resizing arguments in ``resize``'s terms (a size of 0 is
    one not given).

    Raises:
        ValueError: no output size, or a region of interest without one value per frame axis.
    """
    where = "readers.video_resize"
    resize = {name: args[name] for name in _PASSED_ARGS}
    resize.update({name: args[name] or None for name in _SIZE_ARGS})
    resize["size"] = args["size"] or None
    if not any(resize[name] for name in ("resize_x", "resize_y", "size", "resize_shorter",
                                         "resize_longer")):  # fmt: skip
        raise ValueError(f"{where}: give resize_x/resize_y, size, resize_shorter or resize_longer")
    for name in ("roi_start", "roi_end"):
        if resize[name] is not None and len(resize[name]) != 2:
            raise ValueError(
                f"{where}: {name} needs 2 values (y, x), one per frame axis, got "
                f"{list(resize[name])}"
            )
    return resize


def frame_resizer() -> Callable[..., np.ndarray]:
    """``resize``'s own resizing function (:meth:`ResizeKernel.resize` of the installed image
    plugin), found through the registry: readers and operators only meet through the core.

    Raises:
        RuntimeError: no ``resize`` operator with a CPU kernel is installed.
    """
    entry = get_plugin_system().ensure_loaded().operators.get("resize")
    if entry is None or "cpu" not in entry.kernels:
        raise RuntimeError(
            "readers.video_resize resizes with the resize operator: enable the built-in image "
            "plugin"
        )
    return entry.kernel_class("cpu").resize


def resize_frames(
    frames: np.ndarray, resize: Mapping[str, Any], resizer: Callable[..., np.ndarray]
) -> np.ndarray:
    """Resize every frame of an ``FHWC`` sequence as ``resize`` would, keeping its type.

    Args:
        frames: the sequence.
        resize: the arguments from :func:`resize_arguments`.
        resizer: the function from :func:`frame_resizer`.
    """
    return resizer("readers.video_resize", frames, "FHWC", resize, frames.dtype)
