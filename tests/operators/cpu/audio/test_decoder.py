"""``decoders.audio``: formats, output types, downmix, resampling, errors naming the file."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from feedline import OperatorError, fn, pipeline_def, types
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.audio import schemas as audio
from feedline.operators.cpu.audio.resampling import lobes_for_quality
from feedline.readers import file as file_reader
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.audio.reference import resample_reference
from tests.operators.cpu.audio.signals import encode, noise, run_audio, use_audio

soundfile = pytest.importorskip("soundfile", reason="decoders.audio needs feedline[audio]")

STEREO = noise(1200, seed=1, channels=2)


@pytest.fixture(autouse=True)
def _audio(empty_plugin_system: PluginSystem) -> Iterator[None]:
    use_audio(empty_plugin_system)
    yield


def decode(data: bytes, **args: object) -> tuple[np.ndarray, np.ndarray]:
    (audio_out, _), (rates, _) = run_audio(
        "decoders.audio", [np.frombuffer(data, np.uint8)], **args
    )
    return audio_out[0], rates[0]


@pytest.mark.parametrize(("fmt", "subtype"), [("WAV", "PCM_16"), ("FLAC", "PCM_16"),
                                              ("OGG", "VORBIS"), ("WAV", "FLOAT")])  # fmt: skip
def test_formats_decode_as_libsndfile_reads_them(fmt: str, subtype: str) -> None:
    data = encode(STEREO, 22050, fmt, subtype)
    samples, rate = decode(data)
    expected, _ = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    assert samples.dtype == np.float32 and samples.shape == (1200, 2)
    assert rate.dtype == np.float32 and rate.shape == () and rate == 22050
    np.testing.assert_array_equal(samples, expected)


@pytest.mark.parametrize(
    ("dtype", "numpy_type"), [(types.INT16, np.int16), (types.INT32, np.int32)]
)
def test_integer_outputs_are_the_file_values(dtype: types.DataType, numpy_type: type) -> None:
    pcm = (STEREO * 30000).astype(np.int16)
    samples, _ = decode(encode(pcm, 16000, "WAV", "PCM_16"), dtype=dtype)
    scale = 1 if numpy_type is np.int16 else 65536  # a 16-bit value in the top bits of 32
    assert samples.dtype == numpy_type
    np.testing.assert_array_equal(samples.astype(np.int64), pcm.astype(np.int64) * scale)


def test_mono_files_keep_a_channel_axis_and_downmix_averages() -> None:
    mono, _ = decode(encode(STEREO[:, 0], 8000, "WAV", "FLOAT"))
    assert mono.shape == (1200, 1)
    mixed, _ = decode(encode(STEREO, 8000, "WAV", "FLOAT"), downmix=True)
    assert mixed.shape == (1200,)
    np.testing.assert_allclose(mixed, STEREO.mean(axis=1), atol=1e-7)


def test_sample_rate_resamples_and_reports_the_new_rate() -> None:
    data = encode(STEREO, 22050, "WAV", "FLOAT")
    samples, rate = decode(data, sample_rate=16000.0, downmix=True, quality=0)
    assert rate == 16000 and samples.shape == (int(np.ceil(1200 * 16000 / 22050)),)
    reference = resample_reference(
        STEREO.mean(axis=1), 16000 / 22050, len(samples), lobes_for_quality(0)
    )
    np.testing.assert_allclose(samples, reference, atol=2e-3)


def test_per_sample_rates_and_integer_output_after_resampling() -> None:
    data = np.frombuffer(encode(STEREO, 22050, "WAV", "FLOAT"), np.uint8)
    (out, _), (rates, _) = run_audio(
        "decoders.audio",
        [data, data],
        arg_inputs={"sample_rate": [np.float32(11025), np.float32(0)]},
        dtype=types.INT16,
    )
    assert [float(r) for r in rates] == [11025.0, 22050.0]
    assert out[0].shape == (600, 2) and out[1].shape == (1200, 2)
    assert out[0].dtype == np.int16


def test_unsupported_dtype_is_refused() -> None:
    with pytest.raises(ValueError, match="INT16, INT32 or FLOAT"):
        decode(encode(STEREO, 8000), dtype=types.UINT8)


def test_a_corrupt_file_names_itself(tmp_path: Path, empty_plugin_system: PluginSystem) -> None:
    empty_plugin_system.register(file_reader, "file-reader")
    good = encode(STEREO, 8000)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "good.wav").write_bytes(good)
    (tmp_path / "a" / "truncated.wav").write_bytes(good[:30])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():  # type: ignore[no-untyped-def]
        data, _ = fn.readers.file(file_root=str(tmp_path))
        return fn.decoders.audio(data)[0]

    p = pipe()
    p.build()
    with pytest.raises(OperatorError, match=r"truncated\.wav") as info:
        p.run()
    assert "decoders.audio" in str(info.value)


def test_missing_soundfile_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    data = encode(STEREO, 8000)
    monkeypatch.setitem(sys.modules, "soundfile", None)
    with pytest.raises(ImportError, match=r"feedline\[audio\]"):
        decode(data)


def test_audio_decoder_is_the_older_name() -> None:
    data = encode(STEREO, 16000)
    ((new,), _), _ = run_audio("decoders.audio", [np.frombuffer(data, np.uint8)], downmix=True)
    ((old,), _), _ = run_audio("audio_decoder", [np.frombuffer(data, np.uint8)], downmix=True)
    np.testing.assert_array_equal(new, old)


def test_registered_and_documented() -> None:
    assert "decoders.audio" in [s.name for s in audio.SCHEMAS]
    example = OperatorExample(
        inputs=[[np.frombuffer(encode(noise(n, n, channels=2), 8000), np.uint8)
                 for n in (100, 250, 60)]],
        args={"sample_rate": 12000.0},
    )  # fmt: skip
    assert check_operator("decoders.audio", example)[-1] == "seed"
