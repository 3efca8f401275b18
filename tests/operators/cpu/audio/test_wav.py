"""The direct 16-bit PCM WAV reader: the same samples as libsndfile, or None to defer to it."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline.operators.cpu.audio.decoder import decode_audio
from feedline.operators.cpu.audio.wav import read_pcm16_wav
from tests.operators.cpu.audio.signals import encode, noise

soundfile = pytest.importorskip("soundfile", reason="the comparison needs feedline[audio]")


def pcm16(frames: int, channels: int, seed: int = 0) -> np.ndarray:
    return (noise(frames, seed, channels) * 60000).clip(-32768, 32767).astype(np.int16)


def riff(*chunks: tuple[bytes, bytes]) -> bytes:
    """A RIFF/WAVE file of the given ``(name, body)`` chunks, odd bodies padded."""
    body = b"".join(
        name + struct.pack("<I", len(data)) + data + b"\0" * (len(data) & 1)
        for name, data in chunks
    )
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WAVE" + body


def fmt_chunk(channels: int, rate: int, tag: int = 1, bits: int = 16) -> tuple[bytes, bytes]:
    align = channels * bits // 8
    return b"fmt ", struct.pack("<HHIIHH", tag, channels, rate, rate * align, align, bits)


@settings(max_examples=40, deadline=None)
@given(
    frames=st.integers(0, 3000),
    channels=st.integers(1, 2),
    dtype=st.sampled_from([np.float32, np.int16, np.int32]),
    offset=st.sampled_from([0.0, 0.001, 0.05, 1.0]),
    duration=st.sampled_from([0.0, 0.0005, 0.02, 5.0]),
)
def test_decoding_matches_libsndfile(
    frames: int, channels: int, dtype: type, offset: float, duration: float
) -> None:
    data = encode(pcm16(frames, channels), 16000, "WAV", "PCM_16")
    assert read_pcm16_wav(memoryview(data)) is not None
    direct, rate = decode_audio(data, np.dtype(dtype), offset=offset, duration=duration)
    through_libsndfile, file_rate = decode_audio(
        io.BytesIO(data), np.dtype(dtype), offset=offset, duration=duration
    )
    assert rate == file_rate == 16000
    assert direct.dtype == through_libsndfile.dtype and direct.flags.writeable
    np.testing.assert_array_equal(direct, through_libsndfile)


def test_chunks_before_the_data_and_odd_sizes_are_skipped() -> None:
    pcm = pcm16(101, 1)
    data = riff((b"LIST", b"abc"), fmt_chunk(1, 8000), (b"junk", b"x"), (b"data", pcm.tobytes()))
    samples, rate = read_pcm16_wav(memoryview(data))  # type: ignore[misc]
    assert rate == 8000
    np.testing.assert_array_equal(samples, pcm)
    expected, _ = soundfile.read(io.BytesIO(data), dtype="int16", always_2d=True)
    np.testing.assert_array_equal(samples, expected)


@pytest.mark.parametrize(
    "data",
    [
        encode(noise(100), 16000, "WAV", "FLOAT"),
        encode(noise(100), 16000, "WAV", "PCM_24"),
        encode(noise(100), 16000, "FLAC", "PCM_16"),
        riff((b"data", b"\0\0"), fmt_chunk(1, 8000)),  # data before fmt
        riff(fmt_chunk(1, 8000), (b"data", b"\0" * 8))[:-2],  # truncated data
        riff(fmt_chunk(1, 8000, tag=0xFFFE)),
        b"RIFF\0\0\0\0WAV",
        b"",
    ],
    ids=["float", "pcm24", "flac", "data-first", "truncated", "extensible", "short", "empty"],
)
def test_other_files_are_left_to_libsndfile(data: bytes) -> None:
    assert read_pcm16_wav(memoryview(data)) is None
