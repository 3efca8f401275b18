"""The ``experimental.inputs.video`` kernel: videos fed from Python, decoded a batch at a time.

``Pipeline.feed_input`` queues encoded videos; each run takes up to ``batch_size`` sequences of
``sequence_length`` frames from the video at the front of the queue, pulling frames from one
open decoder (:func:`~feedline.operators.cpu.video.decoder.iter_frames`), so a long video is
never decoded whole. A batch never mixes two videos: the last batch of a video may be smaller.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Iterator
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorCPU, TensorListCPU
from feedline.operators.cpu.video.decoder import iter_frames

__all__ = ["VideoInputKernel"]


def _fed_samples(data: Any) -> list[np.ndarray]:
    """The samples of one ``feed_input`` batch, as arrays."""
    if isinstance(data, TensorListCPU):
        return [np.asarray(s) for s in data.samples()]
    if isinstance(data, np.ndarray):
        return list(data) if data.ndim > 1 else [data]
    if isinstance(data, list | tuple):
        return [np.asarray(x.as_array() if isinstance(x, TensorCPU) else x) for x in data]
    if hasattr(data, "__dlpack__") or hasattr(data, "__array__"):
        array = np.from_dlpack(data) if hasattr(data, "__dlpack__") else np.asarray(data)
        return list(array) if array.ndim > 1 else [array]
    raise TypeError(f"unsupported batch type {type(data).__name__}")


class VideoInputKernel(Kernel):
    """``experimental.inputs.video`` on the CPU: a queue of encoded videos and the decoder of
    the current one."""

    def setup(self) -> None:
        """Check PyAV and the arguments; start with an empty queue.

        Raises:
            ImportError: PyAV is not installed (naming the extra).
            ValueError: ``sequence_length`` below 1.
        """
        self._what = f"experimental.inputs.video {self.ctx.name!r}"
        try:
            import av  # noqa: F401
        except ImportError:
            raise ImportError(
                f"{self._what} needs PyAV (FFmpeg bindings): pip install 'feedline[video]'"
            ) from None
        self._length = int(self.args["sequence_length"])
        if self._length < 1:
            raise ValueError(f"{self._what}: sequence_length must be positive, got {self._length}")
        self._pad = self.args["last_sequence_policy"] == "pad"
        self._queue: deque[np.ndarray] = deque()
        self._fed = threading.Condition()
        self._aborted = False
        self._frames: Iterator[np.ndarray] | None = None

    def feed(self, data: Any, layout: str | None = None, **_: Any) -> None:
        """Queue one encoded video: a batch of exactly one uint8 sample, whose bytes (in C
        order, whatever its shape, as DALI reads them) are the file.

        ``layout`` describes the fed sample, as for any input: empty, or one letter per
        dimension of the sample (``"B"`` for the usual 1-D byte stream). It never changes the
        output, which is always decoded frames in ``FHWC``.

        Raises:
            ValueError: the batch holds more or fewer than one video, or ``layout`` does not
                have one letter per dimension of the fed sample.
            TypeError: the sample is not uint8 or has no bytes.
        """
        try:
            samples = _fed_samples(data)
        except TypeError as exc:
            raise TypeError(f"{self._what}: {exc}") from None
        if len(samples) != 1:
            raise ValueError(
                f"{self._what}: feed one video at a time (a batch of one sample), got a batch "
                f"of {len(samples)}"
            )
        (video,) = samples
        if layout and len(layout) != video.ndim:
            raise ValueError(
                f"{self._what}: the layout {layout!r} given to feed_input cannot describe the "
                f"fed {video.ndim}-dimensional video bytes; pass an empty layout or one letter "
                "per dimension (e.g. 'B' for 1-D bytes). The output layout is always 'FHWC'"
            )
        if video.dtype != np.uint8 or video.size == 0:
            raise TypeError(
                f"{self._what}: expected an encoded video (uint8 bytes), got {video.dtype} of "
                f"shape {video.shape}"
            )
        video = video.reshape(-1) if self.args["no_copy"] else video.flatten()
        with self._fed:
            self._queue.append(video)
            self._fed.notify_all()

    def abort(self) -> None:
        """Wake a blocking wait for a video: the pipeline is closing."""
        with self._fed:
            self._aborted = True
            self._fed.notify_all()

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """The next sequences of the current video (at most ``batch_size``).

        Raises:
            RuntimeError: nothing is queued and ``blocking`` is False.
            ValueError: the video cannot be decoded (naming the operator).
        """
        sequences: list[np.ndarray] = []
        while len(sequences) < self.ctx.batch_size:
            if self._frames is None:
                if sequences:
                    break
                self._frames = iter_frames(self._next_video())
            sequence = self._next_sequence(self._frames)
            if sequence is not None:
                sequences.append(sequence)
        return [TensorListCPU.from_samples(sequences, "FHWC")]

    def _next_video(self) -> np.ndarray:
        with self._fed:
            if not self._queue and self.args["blocking"]:
                self._fed.wait_for(lambda: bool(self._queue) or self._aborted)
            if not self._queue and self._aborted:
                raise RuntimeError(f"{self._what}: the pipeline closed while waiting for a video")
            if not self._queue:
                raise RuntimeError(
                    f"{self._what} (videos are queued with Pipeline.feed_input): No data was "
                    "provided to the InputOperator. Make sure to feed it properly."
                )
            return self._queue.popleft()

    def _next_sequence(self, frames: Iterator[np.ndarray]) -> np.ndarray | None:
        """Up to ``sequence_length`` frames (padded with ``pad``); None when the video ended.
        A short sequence ends the video."""
        try:
            taken = list(itertools.islice(frames, self._length))
        except ValueError as exc:
            self._end_video()
            raise ValueError(f"{self._what}: {exc}") from None
        if len(taken) < self._length:
            self._end_video()
        if not taken:
            return None
        if self._pad and len(taken) < self._length:
            taken += [np.zeros_like(taken[0])] * (self._length - len(taken))
        return np.stack(taken)

    def _end_video(self) -> None:
        if self._frames is not None:
            self._frames.close()
            self._frames = None

    def close(self) -> None:
        """Close the current decoder and forget the queued videos."""
        self._end_video()
        with self._fed:
            self._queue.clear()
