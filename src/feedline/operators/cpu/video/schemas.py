"""Family ``video``: schemas and registration of ``decoders.video`` and
``experimental.inputs.video`` (CPU, through PyAV).

The operators are always registered (their docs are visible); building a pipeline that uses one
without PyAV installed raises an ImportError saying how to install it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

#: How ``decoders.video`` fills frame indices past the end.
PAD_MODES = (
    "none",
    "constant",
    "edge",
    "repeat",
    "reflect_1001",
    "symmetric",
    "reflect_101",
    "reflect",
)

VIDEO = OpSchema(
    "decoders.video",
    """Decode videos from in-memory streams into sequences of RGB frames (``F×H×W×3`` uint8,
    layout ``FHWC``).

    Decoding uses FFmpeg through PyAV (``pip install 'feedline[video]'``): every codec and
    container of the installed FFmpeg build. Without selection arguments every frame is
    returned. ``frames`` lists the indices to return (any order, repeats allowed; each must
    exist). Otherwise frames run from ``start_frame`` by ``stride`` up to ``end_frame``
    (exclusive) or for ``sequence_length`` frames; indices past the end are handled by
    ``pad_mode``: ``none`` (shorter sequence), ``constant`` (frames of ``fill_value``),
    ``edge``/``repeat`` (last frame), ``reflect_1001``/``symmetric`` (``ABC → ABCCBA``),
    ``reflect_101``/``reflect`` (``ABC → ABCBA``).""",
    inputs=(InputSpec("encoded", "Encoded videos (1-D uint8 each)."),),
    args=(
        ArgSpec("frames", "int_vec", None, "Indices of the frames to return.", tensor=True),
        ArgSpec("start_frame", "int", None, "First frame (default 0).", tensor=True),
        ArgSpec("stride", "int", None, "Step between frames (default 1).", tensor=True),
        ArgSpec("end_frame", "int", None, "Frame to stop before.", tensor=True),
        ArgSpec("sequence_length", "int", None, "Number of frames to return.", tensor=True),
        ArgSpec("pad_mode", "str", "constant", "How indices past the end are filled.",
                choices=PAD_MODES),
        ArgSpec("fill_value", "int_vec", (0,), "Colour of constant padding frames: one value "
                "or one per channel, in [0, 255]."),
        ArgSpec("build_index", "bool", True, "Index keyframes for seeking (a speed setting; "
                "frames are decoded in order up to the last one needed, so it has no effect "
                "on the result)."),
        ArgSpec("affine", "bool", True, "Mixed (GPU) backend only: pin decoder threads to "
                "cores. No effect on the CPU."),
    ),
    random=False,
)  # fmt: skip


#: How ``experimental.inputs.video`` ends a video whose frames do not fill the last sequence.
LAST_SEQUENCE_POLICIES = ("partial", "pad")

INPUT_VIDEO = OpSchema(
    "experimental.inputs.video",
    """Stream a video fed from Python and decode it, ``sequence_length`` frames per sample
    (``F×H×W×3`` uint8 RGB, layout ``FHWC``), a batch at a time, for videos too long to decode
    whole.

    Each ``Pipeline.feed_input(name, data)`` queues one encoded video (a batch of exactly one
    1-D uint8 sample). A ``layout`` given to ``feed_input`` describes that fed sample, not the
    output: it must be empty or have one letter per dimension of the sample (``"B"`` for 1-D
    bytes), any other layout is refused with an error; the output is always ``FHWC``. Every run
    returns the next ``batch_size`` sequences of the video at the front of the queue, decoding
    only the frames it needs (FFmpeg through PyAV,
    ``pip install 'feedline[video]'``). When the video ends, the last batch holds the sequences
    left (it may be smaller than the batch size) and the next run starts on the next queued
    video. If the frames do not fill the last sequence, ``last_sequence_policy`` decides:
    ``partial`` returns it shorter, ``pad`` fills it up with black (zero) frames. Running with
    nothing queued raises an error, or, with ``blocking=True``, waits until a video is fed.""",
    args=(
        ArgSpec("sequence_length", "int", REQUIRED, "Number of frames in each sequence."),
        ArgSpec("last_sequence_policy", "str", "partial", "How the last sequence of a video "
                "is completed: 'partial' (fewer frames) or 'pad' (zero frames).",
                choices=LAST_SEQUENCE_POLICIES),
        ArgSpec("blocking", "bool", False, "Wait for data when nothing is queued instead of "
                "raising an error."),
        ArgSpec("no_copy", "bool", False, "Keep the fed buffer instead of copying it (it must "
                "stay alive and unchanged until its frames have been returned)."),
        ArgSpec("affine", "bool", True, "Mixed (GPU) backend only: pin decoder threads to "
                "cores. No effect on the CPU."),
        ArgSpec("bytes_per_sample_hint", "int_vec", (0,), "Output size hint for preallocation "
                "(a speed setting; no effect on the result)."),
    ),
    random=False,
)  # fmt: skip


SCHEMAS = (VIDEO, INPUT_VIDEO)
KERNELS = {
    "decoders.video": "feedline.operators.cpu.video.decoder:VideoDecoderKernel",
    "experimental.inputs.video": "feedline.operators.cpu.video.stream_input:VideoInputKernel",
}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``decoders.video`` and ``experimental.inputs.video``."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)


__all__ = [
    "INPUT_VIDEO",
    "KERNELS",
    "LAST_SEQUENCE_POLICIES",
    "PAD_MODES",
    "SCHEMAS",
    "VIDEO",
    "feedline_register_operators",
]
