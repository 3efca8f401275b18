"""``fn.readers.video``, ``readers.video_resize`` and ``experimental.readers.video`` on the CPU.

This module is the ``video-reader`` plugin (entry point group ``feedline.plugins``). Videos are
demuxed and decoded with PyAV (``pip install 'feedline[video]'``); a sample is one sequence of
frames. Sharding, shuffling, padding, epochs and checkpoints come from
:class:`~feedline.readers.base.Reader`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import OpSchema
from feedline.core.types import DataType, ImageType
from feedline.readers.base import Reader
from feedline.readers.legacy import legacy_name
from feedline.readers.video_args import (
    EXPERIMENTAL_SCHEMA,
    RESIZE_SCHEMA,
    VIDEO_SCHEMA,
    frame_number_mode,
    frame_resizer,
    resize_arguments,
    resize_frames,
)
from feedline.readers.video_index import (
    VideoFile,
    VideoInfo,
    frame_range,
    import_av,
    list_video_files,
    probe_video,
    sequence_starts,
)

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["VideoReader", "decode_sequence", "feedline_register_operators"]


@dataclass(frozen=True)
class Clip:
    """One sample: ``length`` frames of file ``file`` from ``start`` every ``stride``, those at
    or past ``stop`` being padding."""

    file: int
    start: int
    stop: int


def decode_sequence(path: str, info: VideoInfo, wanted: Sequence[int], ycbcr: bool) -> dict:
    """Decode the frames ``wanted`` (indices into ``info.pts``) of a video: index → ``HWC``
    uint8 array (RGB, or YCbCr with ``ycbcr``).

    Seeks to the key frame before the first wanted frame and decodes forward from there.

    Raises:
        ValueError: the video cannot be decoded (naming it).
    """
    av = import_av()
    need = sorted(set(wanted))
    position = {pts: i for i, pts in enumerate(info.pts)}
    frames: dict[int, np.ndarray] = {}
    try:
        with av.open(path) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            if need[0] > 0:
                container.seek(info.pts[need[0]], stream=stream, backward=True)
            for frame in container.decode(stream):
                index = position.get(frame.pts)
                if index is None or index not in need:
                    if index is not None and index > need[-1]:
                        break
                    continue
                if ycbcr:
                    planes = frame.reformat(format="yuv444p").to_ndarray()
                    frames[index] = np.ascontiguousarray(planes.transpose(1, 2, 0))
                else:
                    frames[index] = frame.to_ndarray(format="rgb24")
                if len(frames) == len(need):
                    break
    except av.FFmpegError as exc:
        raise ValueError(f"cannot decode the video {path!r}: {exc}") from None
    missing = [i for i in need if i not in frames]
    if missing:
        raise ValueError(f"the video {path!r} ended before frame {missing[0]} (truncated?)")
    return frames


class VideoReader(Reader):
    """The kernel of the three video readers; its items are :class:`Clip` objects."""

    parallel_load = True  # FFmpeg decodes with the GIL released

    def setup(self) -> None:
        """Check the arguments (and that PyAV is installed), then the common ones."""
        args, name = self.args, self.ctx.schema.name
        import_av()
        self._experimental = name.startswith("experimental.")
        length, stride = args["sequence_length"], args["stride"]
        if length < 1 or stride < 1:
            raise ValueError(
                f"{name}: sequence_length ({length}) and stride ({stride}) must be positive"
            )
        self._step = length if args["step"] < 0 else args["step"]
        if self._step == 0:
            raise ValueError(f"{name}: step must not be 0")
        self._frame_num = frame_number_mode(name, args["enable_frame_num"])
        # readers.video_resize (or video_reader_resize): resize's arguments and function
        self._resize = resize_arguments(args) if "resize_x" in args else None
        self._resizer = frame_resizer() if self._resize is not None else None
        if args["image_type"] not in (ImageType.RGB, ImageType.YCbCr):
            raise ValueError(f"{name}: image_type must be RGB or YCbCr")
        if not self._experimental:
            if args["dtype"] not in (DataType.UINT8, DataType.FLOAT):
                raise ValueError(f"{name}: dtype must be UINT8 or FLOAT")
            if args["channels"] != 3:
                raise ValueError(f"{name}: only channels=3 is supported")
        super().setup()

    def output_layouts(self) -> tuple[str, ...]:
        """``FHWC`` frames; the other outputs have no layout."""
        return ("FHWC",) + ("",) * (len(self.output_names()) - 1)

    def index(self) -> Sequence[Clip]:
        """Probe every listed video and cut it into sequences."""
        args, name = self.args, self.ctx.schema.name
        labels = args["labels"]
        if self._experimental and labels is not None and len(labels) != len(args["filenames"]):
            raise ValueError(
                f"{name}: {len(args['filenames'])} filenames but {len(labels)} labels; give one "
                "label per file"
            )
        try:
            files = list_video_files(
                args["filenames"], args["labels"], args["file_root"], args["file_list"]
            )
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        self._files: list[VideoFile] = files
        self._infos: list[VideoInfo] = []
        clips = []
        for number, entry in enumerate(files):
            info = probe_video(entry.path)
            # Only the legacy readers check the frame rate (experimental.readers.video, as
            # DALI's, reads variable-rate videos by their timestamps and has no such argument).
            if info.variable_rate and not self._experimental and not args["skip_vfr_check"]:
                raise ValueError(
                    f"{name}: {entry.path!r} has a variable frame rate; pass "
                    "skip_vfr_check=True to read it anyway"
                )
            self._infos.append(info)
            clips += [Clip(number, start, stop) for start, stop in self._sequences(entry, info)]
        if not clips:
            raise ValueError(f"{name}: the videos hold no complete sequence")
        return clips

    def _sequences(self, entry: VideoFile, info: VideoInfo) -> list[tuple[int, int]]:
        args = self.args
        length, stride = args["sequence_length"], args["stride"]
        if self._experimental:
            as_frames = args["file_list_format"] == "frames"
            include_end, rounding = args["file_list_include_end"], args["file_list_rounding"]
            first, stop = frame_range(entry, info, as_frames, include_end, rounding)
            if args["uniform_sample"]:
                return [(first, stop)] if stop > first else []
            partial = args["pad_mode"] != "none"
        else:
            widen = args["file_list_include_preceding_frame"] and not args["file_list_frame_num"]
            rounding = "start_down_end_up" if widen else "start_up_end_down"
            first, stop = frame_range(entry, info, args["file_list_frame_num"], True, rounding)
            partial = args["pad_sequences"]
        starts = sequence_starts(first, stop, length, stride, self._step, partial)
        return [(start, stop) for start in starts]

    def _indices(self, clip: Clip) -> list[int]:
        length = self.args["sequence_length"]
        if self._experimental and self.args["uniform_sample"]:
            span = clip.stop - 1 - clip.start
            return [clip.start + int(np.floor(span * k / max(length - 1, 1) + 0.5))
                    for k in range(length)]  # fmt: skip
        return [clip.start + k * self.args["stride"] for k in range(length)]

    def load(self, clip: Clip) -> tuple[np.ndarray, ...]:
        """Decode one sequence and build the enabled outputs."""
        args = self.args
        entry, info = self._files[clip.file], self._infos[clip.file]
        indices = self._indices(clip)
        real = [i for i in indices if i < clip.stop]
        ycbcr = args["image_type"] == ImageType.YCbCr
        decoded = decode_sequence(entry.path, info, real, ycbcr)
        frames = self._assemble([decoded.get(i) for i in indices])
        if self._resize is not None:
            frames = resize_frames(frames, self._resize, self._resizer)
        numbers = np.array([i if i < clip.stop else -1 for i in indices], np.int32)
        outputs = [frames]
        if "label" in self.output_names():
            outputs.append(np.array([entry.label], np.int32))
        if self._frame_num == "scalar":
            outputs.append(numbers[:1].copy())
        elif self._frame_num == "sequence":
            outputs.append(numbers)
        if args["enable_timestamps"]:
            rate = info.fps or 1.0
            times = np.where(numbers >= 0, numbers / rate, -1.0)
            outputs.append(times.astype(np.float64 if self._experimental else np.float32))
        return tuple(outputs)

    def _assemble(self, frames: list[np.ndarray | None]) -> np.ndarray:
        """Stack the frames, filling padding positions as the reader's padding rule says."""
        shape = next(f for f in frames if f is not None).shape
        args = self.args
        if self._experimental and args["pad_mode"] in ("edge", "repeat"):
            last = None
            for k, frame in enumerate(frames):
                last = frame if frame is not None else last
                frames[k] = last
        fill = np.zeros(shape, np.uint8)
        if self._experimental:
            values = np.asarray(args["fill_value"], np.int64).ravel()
            fill[...] = np.clip(values if values.size in (1, shape[-1]) else values[:1], 0, 255)
        stacked = np.stack([fill if f is None else f for f in frames])
        if not self._experimental and args["dtype"] == DataType.FLOAT:
            scale = 1 / 255.0 if args["normalized"] else 1.0
            return stacked.astype(np.float32) * np.float32(scale)
        return stacked

    def source_info(self, clip: Clip) -> str:
        """The video's path."""
        return self._files[clip.file].path


def _register(registry: Registry, schema: OpSchema) -> None:
    registry.add_operator(schema, kernels={"cpu": VideoReader})


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register ``readers.video``, ``readers.video_resize``, ``experimental.readers.video`` and
    DALI's older names ``video_reader`` and ``video_reader_resize``."""
    for schema in (VIDEO_SCHEMA, RESIZE_SCHEMA, EXPERIMENTAL_SCHEMA):
        _register(registry, schema)
    _register(registry, legacy_name(VIDEO_SCHEMA, "video_reader"))
    _register(registry, legacy_name(RESIZE_SCHEMA, "video_reader_resize"))
