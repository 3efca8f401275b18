"""The ``decoders.audio`` kernel: decode audio files with libsndfile (``soundfile``).

Plain 16-bit PCM WAV data in memory skips libsndfile (:func:`~.wav.read_pcm16_wav`), converted
to the requested type as libsndfile converts it (``x / 32768`` for float, ``x << 16`` for int32).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import DataType, to_numpy_dtype
from feedline.operators.cpu.audio.resampling import (
    convert_normalized,
    lobes_for_quality,
    resample,
    resampled_length,
    sinc_window,
)
from feedline.operators.cpu.audio.wav import read_pcm16_wav

__all__ = ["AudioDecoderKernel", "decode_audio", "import_soundfile"]

_OUTPUT_TYPES = (DataType.INT16, DataType.INT32, DataType.FLOAT)
_OUTPUT_NUMPY_TYPES = (np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.float32))


def import_soundfile() -> Any:
    """The ``soundfile`` module.

    Raises:
        ImportError: naming the extra to install.
    """
    try:
        import soundfile
    except ImportError:
        raise ImportError(
            "audio decoding needs soundfile (libsndfile): pip install 'feedline[audio]'"
        ) from None
    return soundfile


def decode_audio(
    data: bytes | np.ndarray | io.IOBase | str,
    dtype: np.dtype,
    downmix: bool = False,
    sample_rate: float = 0.0,
    lobes: int = 16,
    offset: float = 0.0,
    duration: float = 0.0,
) -> tuple[np.ndarray, float]:
    """Decode one audio file: ``(samples, the file's sample rate)`` as ``decoders.audio``
    defines the samples.

    Args:
        data: the encoded file (bytes, a 1-D uint8 array, a binary file object or a path).
        dtype: int16, int32 or float32.
        downmix: average the channels (1-D result).
        sample_rate: resample to this rate (0 or less: keep the file's).
        lobes: lobes of the resampling filter.
        offset: skip this many seconds (``int(offset * rate)`` samples) first.
        duration: keep at most this many seconds (``int(duration * rate)`` samples); 0 keeps
            the rest of the file.

    Raises:
        ValueError: the data cannot be decoded.
    """
    convert = downmix or sample_rate > 0
    read_type = np.dtype(np.float32) if convert else np.dtype(dtype)
    direct = read_type in _OUTPUT_NUMPY_TYPES and not isinstance(data, io.IOBase | str)
    pcm = read_pcm16_wav(memoryview(data).cast("B")) if direct else None
    if pcm is None:
        samples, rate = _read_soundfile(data, read_type, offset, duration)
    else:
        samples, rate = _convert_pcm16(pcm[0], float(pcm[1]), read_type, offset, duration)
    if not convert:
        return samples, rate
    if downmix:
        mono = samples.shape[1] == 1
        samples = samples[:, 0] if mono else samples.mean(axis=1, dtype=np.float32)
    if sample_rate > 0 and sample_rate != rate:
        n_out = resampled_length(len(samples), rate, sample_rate)
        samples = resample(samples, rate, sample_rate, sinc_window(lobes), n_out)
    return convert_normalized(samples, np.dtype(dtype)), rate


def _read_soundfile(
    data: bytes | np.ndarray | io.IOBase | str, read_type: np.dtype, offset: float, duration: float
) -> tuple[np.ndarray, float]:
    """``(frames, channels)`` samples of ``read_type`` and the rate, read with libsndfile."""
    soundfile = import_soundfile()
    as_file = isinstance(data, io.IOBase | str)
    source = data if as_file else io.BytesIO(memoryview(data).tobytes())
    try:
        with soundfile.SoundFile(source) as audio_file:
            rate = float(audio_file.samplerate)
            start = min(int(offset * rate), audio_file.frames) if offset > 0 else 0
            count = int(duration * rate) if duration > 0 else -1
            if start:
                audio_file.seek(start)
            samples = audio_file.read(count, dtype=read_type.name, always_2d=True)
    except (RuntimeError, soundfile.LibsndfileError, TypeError) as exc:
        raise ValueError(f"cannot decode the audio: {exc}") from None
    return samples, rate


def _convert_pcm16(
    pcm: np.ndarray, rate: float, read_type: np.dtype, offset: float, duration: float
) -> tuple[np.ndarray, float]:
    """The ``offset``/``duration`` cut of 16-bit PCM frames in ``read_type`` (a new array),
    with libsndfile's conversions."""
    start = min(int(offset * rate), len(pcm)) if offset > 0 else 0
    stop = start + int(duration * rate) if duration > 0 else len(pcm)
    pcm = pcm[start:stop]
    if read_type == np.float32:
        samples = pcm.astype(np.float32)
        samples *= np.float32(1 / 32768)
    elif read_type == np.int32:
        samples = pcm.astype(np.int32)
        samples <<= 16
    else:
        samples = pcm.astype(np.int16)
    return samples, rate


class AudioDecoderKernel(SampleKernel):
    """Per-sample ``decoders.audio``.

    Readers that decode audio (``readers.nemo_asr``) find this class through the registry and
    call :attr:`decode` (plugins only meet through the core).
    """

    decode = staticmethod(decode_audio)
    import_soundfile = staticmethod(import_soundfile)
    lobes_for_quality = staticmethod(lobes_for_quality)

    def setup(self) -> None:
        """Check that soundfile is installed and the static arguments."""
        import_soundfile()
        if self.args["dtype"] not in _OUTPUT_TYPES:
            raise ValueError(
                f"decoders.audio: dtype {self.args['dtype'].name} is not supported; use INT16, "
                "INT32 or FLOAT"
            )
        self._dtype = to_numpy_dtype(self.args["dtype"])
        self._lobes = lobes_for_quality(float(self.args["quality"]))

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layout on either output (as in DALI)."""
        return ("", "")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, np.ndarray]:
        """Decode one file."""
        (encoded,) = inputs
        if encoded.dtype != np.uint8 or encoded.ndim != 1:
            raise TypeError(
                f"decoders.audio: expected encoded bytes (1-D uint8), got {encoded.dtype} of "
                f"shape {encoded.shape}"
            )
        target = float(np.asarray(args["sample_rate"]).reshape(()))
        if target < 0:
            raise ValueError(f"decoders.audio: sample_rate {target} must not be negative")
        try:
            audio, rate = decode_audio(
                encoded, self._dtype, self.args["downmix"], target, self._lobes
            )
        except ValueError as exc:
            raise ValueError(f"decoders.audio: {exc}") from None
        return np.ascontiguousarray(audio), np.array(target or rate, np.float32)
