"""Small test videos whose frame ``k`` is a flat grey of level ``LEVELS[k]`` (needs PyAV)."""

from __future__ import annotations

import io

import numpy as np

LEVELS = [10 + 20 * k for k in range(12)]


def encode(count: int = 10, size: tuple[int, int] = (48, 64)) -> np.ndarray:
    """An MPEG-4 video in an MP4 container whose frame k is flat grey LEVELS[k]."""
    import av

    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.height, stream.width = size
        stream.pix_fmt = "yuv420p"
        stream.options = {"qscale": "1"}
        for k in range(count):
            image = np.full((*size, 3), LEVELS[k], np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return np.frombuffer(buffer.getvalue(), np.uint8)


def levels(sequence: np.ndarray) -> list[int]:
    """The level index of each decoded frame (by its mean, robust to compression)."""
    return [int(np.argmin([abs(f.mean() - v) for v in LEVELS])) for f in sequence]
