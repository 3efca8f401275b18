"""The ``decoders.video`` kernel: decode in-memory videos with PyAV and pick frames as DALI does.

Frame selection (per sample): ``frames`` lists indices (any order, repeats allowed; each must
exist); otherwise indices run from ``start_frame`` (default 0) by ``stride`` (default 1) up to
``end_frame`` (exclusive) or for ``sequence_length`` frames, else to the end of the video.
Indices past the end are handled by ``pad_mode``: ``none`` drops them, ``constant`` adds frames
of ``fill_value``, ``edge``/``repeat`` repeats the last frame, ``reflect_1001``/``symmetric``
mirrors the frames read including the last (``ABC → ABCCBA``), ``reflect_101``/``reflect``
without it (``ABC → ABCBA``). Only the frames up to the last one needed are decoded.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel

__all__ = ["VideoDecoderKernel", "decode_frames", "iter_frames", "select_frames"]


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
    if frames is not None:
        if any(v is not None for v in (start, stride, end, length)):
            raise ValueError(
                "decoders.video: 'frames' cannot be combined with start_frame, stride, "
                "end_frame or sequence_length"
            )
        return [int(f) for f in np.asarray(frames).ravel()], 0, 1, None
    if end is not None and length is not None:
        raise ValueError("decoders.video: 'end_frame' and 'sequence_length' are mutually exclusive")
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


def _pad(frames: list[np.ndarray], wanted: int, mode: str, fill: np.ndarray) -> list[np.ndarray]:
    missing = wanted - len(frames)
    if missing <= 0 or mode == "none" or not frames:
        return frames
    if mode == "constant":
        return frames + [np.broadcast_to(fill, frames[0].shape)] * missing
    if mode in ("edge", "repeat"):
        return frames + [frames[-1]] * missing
    n = len(frames)
    if mode in ("reflect_1001", "symmetric"):
        period = 2 * n
        order = [p % period if p % period < n else period - 1 - p % period for p in range(wanted)]
    else:
        period = max(2 * n - 2, 1)
        order = [p % period if p % period < n else period - p % period for p in range(wanted)]
    return [frames[i] for i in order]


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
        if frames is not None:
            bad = [f for f in frames if not 0 <= f < len(decoded)]
            if bad:
                raise ValueError(
                    f"decoders.video: frame {bad[0]} does not exist (the video has "
                    f"{len(decoded)} frames)"
                )
            return np.stack([decoded[f] for f in frames])
        stop = len(decoded) if stop is None else stop
        indices = range(start, stop, stride)
        picked = [decoded[i] for i in indices if i < len(decoded)]
        if not picked:
            raise ValueError(
                f"decoders.video: start_frame {start} is past the end of the video "
                f"({len(decoded)} frames)"
            )
        return np.stack(_pad(picked, len(indices), self.args["pad_mode"], self._fill))
