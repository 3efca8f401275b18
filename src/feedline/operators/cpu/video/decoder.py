"""The ``decoders.video`` kernel: decode in-memory videos with PyAV and pick frames as DALI does.

Frame selection (per sample): ``frames`` lists indices (any order, repeats allowed); otherwise
indices run from ``start_frame`` (default 0) by ``stride`` (default 1) up to ``end_frame``
(exclusive) or for ``sequence_length`` frames, else to the end of the video. As in DALI, an index
past the video's last frame is handled by ``pad_mode`` on the video's own frames: ``none`` drops
it (an error for ``frames``), ``constant`` gives a frame of ``fill_value``, ``edge``/``repeat``
the video's last frame, ``reflect_1001``/``symmetric`` mirrors the video including its last frame
(``ABC → ABCCBA``), ``reflect_101``/``reflect`` without it (``ABC → ABCBA``). Only the frames up
to the last one needed are decoded.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.errors import ArgumentError

__all__ = [
    "VideoDecoderKernel",
    "check_selection_args",
    "decode_frames",
    "iter_frames",
    "select_frames",
]


def _optional_int(value: Any) -> int | None:
    if value is None:
        return None
    return int(np.asarray(value).reshape(()))


def select_frames(args: Mapping[str, Any]) -> tuple[list[int] | None, int, int, int | None]:
    """``(frames, start, stride, stop)`` from the selection arguments (``stop`` None = to the
    end; ``frames`` None = use the range).

    Raises:
        ValueError: conflicting arguments or bad values.
    """
    frames = args.get("frames")
    start = _optional_int(args.get("start_frame"))
    stride = _optional_int(args.get("stride"))
    end = _optional_int(args.get("end_frame"))
    length = _optional_int(args.get("sequence_length"))
    check_selection_args({name for name, value in args.items() if value is not None})
    if frames is not None:
        indices = [int(f) for f in np.asarray(frames).ravel()]
        negative = [f for f in indices if f < 0]
        if negative:
            raise ValueError(
                f"decoders.video: frame indices must be non-negative, got {negative[0]}"
            )
        return indices, 0, 1, None
    start = 0 if start is None else start
    stride = 1 if stride is None else stride
    if start < 0 or stride < 1:
        raise ValueError(
            f"decoders.video: start_frame ({start}) must be >= 0 and stride ({stride}) >= 1"
        )
    if length is not None:
        if length < 1:
            raise ValueError(f"decoders.video: sequence_length ({length}) must be positive")
        return None, start, stride, start + stride * length
    return None, start, stride, end


def check_selection_args(given: set[str]) -> None:
    """Refuse the combinations of selection arguments DALI refuses, in its words.

    Raises:
        ArgumentError: (a ValueError and a RuntimeError, as DALI raises) ``frames`` with a
            range argument, or ``sequence_length`` with ``end_frame``.
    """
    if "frames" in given and given & {"start_frame", "sequence_length", "stride", "end_frame"}:
        raise ArgumentError(
            "decoders.video: Cannot specify both `frames` and any of `start_frame`, "
            "`sequence_length`, `stride`, `end_frame` arguments"
        )
    if {"sequence_length", "end_frame"} <= given:
        raise ArgumentError(
            "decoders.video: Cannot specify both `sequence_length` and `end_frame` arguments"
        )


def iter_frames(encoded: np.ndarray) -> Iterator[np.ndarray]:
    """RGB frames (``H×W×3`` uint8) of the first video stream of ``encoded``, decoded one by one
    as they are taken (closing the generator closes the container).

    Raises:
        ValueError: the data holds no video stream or cannot be decoded.
    """
    import av

    try:
        with av.open(io.BytesIO(encoded.tobytes()), mode="r") as container:
            if not container.streams.video:
                raise ValueError("the data holds no video stream")
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            for frame in container.decode(stream):
                yield frame.to_ndarray(format="rgb24")
    except av.FFmpegError as exc:
        raise ValueError(f"cannot decode the video: {exc}") from None


def decode_frames(encoded: np.ndarray, last: int | None) -> list[np.ndarray]:
    """RGB frames (``H×W×3`` uint8) of the first video stream, up to index ``last`` included
    (all with None)."""
    frames = iter_frames(encoded)
    try:
        return list(frames if last is None else itertools.islice(frames, last + 1))
    finally:
        frames.close()


def padded_index(index: int, count: int, mode: str) -> int | None:
    """The video frame that stands for ``index`` in a video of ``count`` frames under
    ``pad_mode`` ``mode`` (None: a ``constant`` frame)."""
    if index < count:
        return index
    if mode == "constant":
        return None
    if mode in ("edge", "repeat"):
        return count - 1
    if mode in ("reflect_1001", "symmetric"):
        period = 2 * count
        wrapped = index % period
        return wrapped if wrapped < count else period - 1 - wrapped
    if count < 2:
        return count - 1
    period = 2 * count - 2
    wrapped = index % period
    return wrapped if wrapped < count else period - wrapped


def _pick(
    decoded: list[np.ndarray], indices: Iterable[int], mode: str, fill: np.ndarray
) -> list[np.ndarray]:
    """The frames for ``indices``, those past the end padded under ``mode``."""
    padding = np.broadcast_to(fill, decoded[0].shape)
    picked = []
    for index in indices:
        frame = padded_index(index, len(decoded), mode)
        picked.append(padding if frame is None else decoded[frame])
    return picked


class VideoDecoderKernel(SampleKernel):
    """Per-sample ``decoders.video`` (CPU)."""

    def setup(self) -> None:
        """Check that PyAV is installed and the static arguments."""
        try:
            import av  # noqa: F401
        except ImportError:
            raise ImportError(
                "decoders.video needs PyAV (FFmpeg bindings): pip install 'feedline[video]'"
            ) from None
        fill = np.asarray(self.args["fill_value"], np.int64).ravel()
        if fill.size not in (1, 3) or fill.min() < 0 or fill.max() > 255:
            raise ValueError(
                f"decoders.video: fill_value {fill.tolist()} needs 1 or 3 values in [0, 255]"
            )
        self._fill = fill.astype(np.uint8)
        given = {name for name, value in self.args.items() if value is not None}
        check_selection_args(given | set(self.ctx.tensor_args))

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """Sequences of frames: ``FHWC``."""
        return ("FHWC",)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Decode one video and select its frames."""
        (encoded,) = inputs
        if encoded.dtype != np.uint8 or encoded.ndim != 1:
            raise TypeError(
                f"decoders.video: expected encoded bytes (1-D uint8), got {encoded.dtype} "
                f"of shape {encoded.shape}"
            )
        frames, start, stride, stop = select_frames(args)
        last = max(frames) if frames else (None if stop is None else stop - 1)
        decoded = decode_frames(encoded, last)
        if not decoded:
            raise ValueError("decoders.video: the video has no frames")
        mode = self.args["pad_mode"]
        if frames is not None:
            bad = [f for f in frames if mode == "none" and f >= len(decoded)]
            if bad:
                raise ValueError(
                    f"decoders.video: frame {bad[0]} does not exist (the video has "
                    f"{len(decoded)} frames)"
                )
            return np.stack(_pick(decoded, frames, mode, self._fill))
        stop = len(decoded) if stop is None else stop
        indices = range(start, stop, stride)
        if start >= len(decoded):
            raise ValueError(
                f"decoders.video: start_frame {start} is past the end of the video "
                f"({len(decoded)} frames)"
            )
        if mode == "none":
            indices = range(start, min(stop, len(decoded)), stride)
        return np.stack(_pick(decoded, indices, mode, self._fill))
