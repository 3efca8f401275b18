"""fn.readers.nemo_asr: manifests, durations and offsets, outputs, resampling, sharding, errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import feedline.readers.nemo_asr as nemo_plugin
from feedline import fn, pipeline_def, types
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.operators.cpu.audio import schemas as audio_plugin
from feedline.readers.nemo_asr import read_manifests
from feedline.testing import check_reader

soundfile = pytest.importorskip("soundfile", reason="readers.nemo_asr needs feedline[audio]")

RATES = [16000, 16000, 8000, 22050, 16000]
CHANNELS = [1, 2, 1, 2, 1]
LENGTHS = [1600, 3200, 400, 2205, 800]


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(nemo_plugin, "nemo-asr-reader")
    system.register(audio_plugin, "audio")
    with use_plugin_system(system):
        yield


def clip(i: int) -> np.ndarray:
    rng = np.random.default_rng(i)
    return (rng.standard_normal((LENGTHS[i], CHANNELS[i])) * 0.2).astype(np.float32)


def make_corpus(root: Path, extra: list[dict[str, Any]] | None = None) -> str:
    """Five WAV/FLAC clips and a manifest naming them by absolute path."""
    lines = []
    for i in range(len(RATES)):
        path = root / f"clip{i}.{'flac' if i % 2 else 'wav'}"
        soundfile.write(path, clip(i), RATES[i], subtype="PCM_16")
        lines.append({"audio_filepath": str(path), "duration": LENGTHS[i] / RATES[i],
                      "text": f"utterance {i} ünïcode"})  # fmt: skip
    manifest = root / "train.json"
    manifest.write_text("\n".join(json.dumps(line) for line in lines + (extra or [])) + "\n")
    return str(manifest)


def read(batch: int, num_threads: int = 1, **args: Any) -> list[list[np.ndarray]]:
    @pipeline_def(batch_size=batch, num_threads=num_threads, device_id=None, seed=11)
    def pipe():  # type: ignore[no-untyped-def]
        outputs = fn.readers.nemo_asr(**args)
        return tuple(outputs) if isinstance(outputs, list) else outputs

    p = pipe()
    p.build()
    try:
        return [[np.array(tl.at(i)) for i in range(batch)] for tl in p.run()]
    finally:
        p.close()


def on_disk(i: int) -> np.ndarray:
    pcm, _ = soundfile.read(sorted_paths[i], dtype="float32", always_2d=True)
    return pcm


sorted_paths: list[str] = []


@pytest.fixture
def manifest(tmp_path: Path) -> str:
    path = make_corpus(tmp_path)
    lines = Path(path).read_text().splitlines()
    sorted_paths[:] = [json.loads(line)["audio_filepath"] for line in lines]
    return path


def test_default_outputs(manifest: str) -> None:
    audio, rates, texts = read(5, manifest_filepaths=[manifest])
    for i in range(5):
        assert audio[i].dtype == np.float32 and audio[i].ndim == 1  # downmixed by default
        np.testing.assert_allclose(audio[i], on_disk(i).mean(axis=1), atol=1e-7)
        assert rates[i].dtype == np.float32 and rates[i].shape == () and rates[i] == RATES[i]
        assert texts[i].dtype == np.uint8 and bytes(texts[i]).decode() == f"utterance {i} ünïcode"


def test_flags_select_outputs(manifest: str) -> None:
    outputs = read(2, manifest_filepaths=[manifest], read_sample_rate=False, read_text=False,
                   read_idxs=True, downmix=False, dtype=types.INT16)  # fmt: skip
    audio, idxs = outputs
    assert audio[1].dtype == np.int16 and audio[1].shape == (3200, 2)
    assert [i.tolist() for i in idxs] == [[0], [1]] and idxs[0].dtype == np.int64


def test_durations_filter_and_indices_count_kept_entries(manifest: str) -> None:
    audio, idxs = read(2, manifest_filepaths=[manifest], min_duration=0.06, max_duration=0.15,
                       read_text=False, read_sample_rate=False, read_idxs=True)  # fmt: skip
    # durations 0.1, 0.2, 0.05, 0.1, 0.05 s: clips 0 and 3 stay, numbered 0 and 1
    assert [len(a) for a in audio] == [1600, 2205]
    assert [int(i[0]) for i in idxs] == [0, 1]
    entries = read_manifests([manifest, manifest], max_duration=0.1)
    assert [e.index for e in entries] == [0, 1, 2, 3, 0, 1, 2, 3]


def test_offset_and_duration_cut_the_audio(tmp_path: Path) -> None:
    path = tmp_path / "long.wav"
    signal = (np.random.default_rng(1).standard_normal(16000) * 0.2).astype(np.float32)
    soundfile.write(path, signal, 16000, subtype="FLOAT")
    lines = [{"audio_filepath": str(path), "offset": 0.25, "duration": 0.5},
             {"audio_filepath": str(path), "offset": 0.9, "duration": 0.5},
             {"audio_filepath": str(path), "duration": 0.1234567}]  # fmt: skip
    manifest = tmp_path / "m.json"
    manifest.write_text("\n".join(map(json.dumps, lines)))
    (audio,) = read(3, manifest_filepaths=[str(manifest)], read_text=False,
                    read_sample_rate=False)  # fmt: skip
    np.testing.assert_array_equal(audio[0], signal[4000:12000])
    np.testing.assert_array_equal(audio[1], signal[14400:])  # past the end: what is left
    np.testing.assert_array_equal(audio[2], signal[:1975])  # int(0.1234567 * 16000)


def test_resampling_keeps_reporting_the_file_rate(manifest: str) -> None:
    audio, rates = read(5, manifest_filepaths=[manifest], sample_rate=8000.0, read_text=False)
    expected = [int(np.ceil(n * 8000 / r)) for n, r in zip(LENGTHS, RATES, strict=True)]
    assert [len(a) for a in audio] == expected
    assert [float(r) for r in rates] == RATES  # DALI reports the file's rate


def test_same_batches_for_any_thread_count(manifest: str) -> None:
    args = {"manifest_filepaths": [manifest], "sample_rate": 11025.0, "random_shuffle": True,
            "read_idxs": True}  # fmt: skip
    one, three = read(4, 1, **args), read(4, 3, **args)
    for a, b in zip(one, three, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_legacy_name(manifest: str) -> None:
    (audio,) = read(1, manifest_filepaths=[manifest], read_text=False, read_sample_rate=False)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def legacy():  # type: ignore[no-untyped-def]
        return fn.nemo_asr_reader(manifest_filepaths=[manifest], read_text=False,
                                  read_sample_rate=False)  # fmt: skip

    p = legacy()
    p.build()
    (out,) = p.run()
    p.close()
    np.testing.assert_array_equal(np.array(out.at(0)), audio[0])


def test_sharding_padding_and_checkpoints(manifest: str) -> None:
    done = check_reader("readers.nemo_asr", {"manifest_filepaths": [manifest], "read_idxs": True})
    assert done


def test_a_corrupt_file_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    manifest = make_corpus(tmp_path, [{"audio_filepath": str(broken), "duration": 1.0}])
    with pytest.raises(OperatorError, match=r"broken\.wav"):
        read(6, manifest_filepaths=[manifest])


@pytest.mark.parametrize(
    ("line", "message"),
    [("{not json", "line 2: not valid JSON"), ('{"text": "x"}', "line 2: expected an object"),
     ('{"audio_filepath": "a.wav", "duration": -1}', "non-negative")],
)  # fmt: skip
def test_bad_manifest_lines_are_named(tmp_path: Path, line: str, message: str) -> None:
    manifest = tmp_path / "bad.json"
    manifest.write_text('{"audio_filepath": "a.wav"}\n' + line + "\n")
    with pytest.raises((ValueError, OperatorError), match=message):
        read(1, manifest_filepaths=[str(manifest)])


def test_argument_errors(manifest: str) -> None:
    with pytest.raises((ValueError, OperatorError), match="no sample"):
        read(1, manifest_filepaths=[manifest], min_duration=5.0)
    with pytest.raises((ValueError, OperatorError), match="normalize_text"):
        read(1, manifest_filepaths=[manifest], normalize_text=True)


def test_without_the_audio_plugin_the_error_says_what_to_install(manifest: str) -> None:
    system = PluginSystem(autoload=False)
    system.register(nemo_plugin, "nemo-asr-reader")
    with use_plugin_system(system), pytest.raises(Exception, match=r"feedline\[audio\]"):
        read(1, manifest_filepaths=[manifest])
