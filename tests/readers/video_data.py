"""Small videos for the video reader tests: frame k of a video is flat grey at level(k)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def level(k: int) -> int:
    """The grey level of frame k (distinct for k < 12, far apart for robust matching)."""
    return 10 + 20 * k


def write_video(path: Path, count: int, size: tuple[int, int] = (32, 48), rate: int = 10) -> str:
    """An MPEG-4 video of ``count`` flat grey frames at ``rate`` frames per second."""
    import av

    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("mpeg4", rate=rate)
        stream.height, stream.width = size
        stream.pix_fmt = "yuv420p"
        stream.options = {"qscale": "1"}
        for k in range(count):
            image = np.full((*size, 3), level(k), np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return str(path)


def write_variable_rate_video(path: Path, times_ms: list[int]) -> str:
    """An MPEG-4 video whose frame k is flat grey at level(k) and shown at ``times_ms[k]``
    milliseconds: uneven steps make its frame rate variable."""
    from fractions import Fraction

    import av

    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.height, stream.width = 32, 48
        stream.pix_fmt = "yuv420p"
        stream.options = {"qscale": "1"}
        stream.time_base = stream.codec_context.time_base = Fraction(1, 1000)
        for k, time in enumerate(times_ms):
            frame = av.VideoFrame.from_ndarray(np.full((32, 48, 3), level(k), np.uint8), "rgb24")
            frame.pts, frame.time_base = time, Fraction(1, 1000)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return str(path)


def frame_levels(sequence: np.ndarray) -> list[int]:
    """Which frame each decoded frame is (by its mean level); -1 for an all-zero frame."""
    found = []
    for frame in sequence.astype(np.float64):
        mean = frame.mean()
        found.append(-1 if mean < 2 else int(np.argmin([abs(mean - level(k)) for k in range(12)])))
    return found
