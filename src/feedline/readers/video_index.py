"""The sample list of the video readers: which files, their frames, and the sequences cut from
them.

Files come from ``filenames`` (with optional ``labels``), from ``file_root`` (each immediate
sub-directory is a class, labels in sorted order, files sorted) or from a ``file_list`` of
``path label [start [end]]`` lines. Each file is probed once with PyAV: its frame count (video
packets), frame rate and whether the frame rate is constant.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "VideoFile",
    "VideoInfo",
    "import_av",
    "list_video_files",
    "parse_video_list",
    "probe_video",
    "sequence_starts",
]


def import_av() -> Any:
    """The ``av`` (PyAV) module.

    Raises:
        ImportError: naming the extra to install.
    """
    try:
        import av
    except ImportError:
        raise ImportError(
            "the video readers decode with PyAV (FFmpeg): pip install 'feedline[video]'"
        ) from None
    return av


@dataclass(frozen=True)
class VideoFile:
    """One listed video: its path, label and range (``start``/``end`` as written in a file
    list, in seconds or frames; None when not given)."""

    path: str
    label: int
    start: float | None = None
    end: float | None = None


@dataclass(frozen=True)
class VideoInfo:
    """What probing a video found: presentation timestamps of its frames in order, its frame
    rate (frames per second) and whether the frame rate varies."""

    pts: tuple[int, ...]
    fps: float
    variable_rate: bool

    @property
    def frames(self) -> int:
        """The number of frames."""
        return len(self.pts)


def probe_video(path: str) -> VideoInfo:
    """Index the frames of the first video stream of ``path`` (demuxing only, no decoding).

    Raises:
        ValueError: the file holds no video stream or cannot be read (naming it).
    """
    av = import_av()
    try:
        with av.open(path) as container:
            if not container.streams.video:
                raise ValueError(f"{path!r} holds no video stream")
            stream = container.streams.video[0]
            pts = sorted(p.pts for p in container.demux(stream) if p.pts is not None and p.size)
            rate = stream.average_rate or stream.guessed_rate or stream.base_rate
    except av.FFmpegError as exc:
        raise ValueError(f"cannot read the video {path!r}: {exc}") from None
    if not pts:
        raise ValueError(f"the video {path!r} has no frames")
    steps = {b - a for a, b in itertools.pairwise(pts)}
    return VideoInfo(tuple(pts), float(rate) if rate else 0.0, len(steps) > 1)


def _walk(file_root: str) -> list[VideoFile]:
    if not os.path.isdir(file_root):
        raise FileNotFoundError(f"file_root {file_root!r} is not a directory")
    classes = sorted(e.name for e in os.scandir(file_root) if e.is_dir())
    found = []
    for label, name in enumerate(classes):
        folder = os.path.join(file_root, name)
        files = sorted(e.name for e in os.scandir(folder) if e.is_file())
        found += [VideoFile(os.path.join(folder, f), label) for f in files]
    return found


def parse_video_list(list_path: str) -> list[VideoFile]:
    """The lines ``path label [start [end]]`` of a video file list (blank lines skipped).

    Raises:
        ValueError: a malformed line (naming the file and the line).
    """
    entries = []
    with open(list_path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                if not 2 <= len(parts) <= 4:
                    raise ValueError
                label = int(parts[1])
                bounds = [float(v) for v in parts[2:]]
            except ValueError:
                raise ValueError(
                    f"file_list {list_path!r}, line {number}: expected 'path label [start "
                    f"[end]]', got {line.strip()!r}"
                ) from None
            entries.append(VideoFile(parts[0], label, *bounds))
    return entries


def list_video_files(
    filenames: Sequence[str], labels: Sequence[int] | None, file_root: str, file_list: str
) -> list[VideoFile]:
    """The listed videos of the one mode given.

    Raises:
        ValueError: no mode, several modes, or labels that do not match the files.
    """
    modes = [name for name, value in (("filenames", filenames), ("file_root", file_root),
                                      ("file_list", file_list)) if value]  # fmt: skip
    if len(modes) != 1:
        raise ValueError(
            f"give exactly one of filenames, file_root and file_list (got {modes or 'none'})"
        )
    if file_list:
        return parse_video_list(file_list)
    if file_root:
        return _walk(file_root)
    if labels is not None and len(labels) not in (0, len(filenames)):
        raise ValueError(
            f"{len(filenames)} filenames but {len(labels)} labels; give one label per file"
        )
    chosen = list(labels) if labels else list(range(len(filenames)))
    return [VideoFile(path, label) for path, label in zip(filenames, chosen, strict=True)]


def frame_range(
    entry: VideoFile,
    info: VideoInfo,
    as_frames: bool,
    include_end: bool = True,
    rounding: str = "start_down_end_up",
) -> tuple[int, int]:
    """``[first, stop)`` frame range of a listed video (its whole length without bounds).

    ``start``/``end`` are frame numbers with ``as_frames``, else seconds (times the frame
    rate); negative values count from the end; ``rounding`` says which way non-integer
    positions go. The range stops at the end bound's frame (before it without
    ``include_end``).
    """
    count = info.frames

    def position(value: float, up: bool) -> int:
        frames = value if as_frames else value * info.fps
        if frames < 0:
            frames += count
        return math.ceil(frames - 1e-9) if up else math.floor(frames + 1e-9)

    start_up, end_up = {
        "start_down_end_up": (False, True),
        "start_up_end_down": (True, False),
        "all_down": (False, False),
        "all_up": (True, True),
    }[rounding]
    first = 0 if entry.start is None else position(entry.start, start_up)
    # As DALI counts it: the end bound's own frame is not part of the range; with
    # include_end the range stops after it is reached, else one frame earlier.
    stop = count if entry.end is None else position(entry.end, end_up) - (0 if include_end else 1)
    return max(first, 0), min(stop, count)


def sequence_starts(
    first: int, stop: int, length: int, stride: int, step: int, partial: bool
) -> list[int]:
    """First frames of the sequences of ``length`` frames, ``stride`` apart, every ``step``
    frames in ``[first, stop)``; with ``partial``, also those running past ``stop``."""
    span = (length - 1) * stride + 1
    last = stop - 1 if partial else stop - span
    return list(range(first, last + 1, step)) if last >= first else []
