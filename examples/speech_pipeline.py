"""A speech front end: NeMo manifest → decode → resample → spectrogram → mel → decibels → PyTorch.

The pipeline reads a NeMo ASR manifest with ``readers.nemo_asr``, resamples every clip to
16 kHz with ``audio_resample`` (the clips may have any rate), applies a pre-emphasis filter,
and computes 64-band log-mel spectrograms (25 ms windows every 10 ms). ``pad`` makes the
spectrograms and transcripts of a batch the same length, with each clip's true frame count
beside them, so a PyTorch iterator hands them over as dense tensors::

    {"features": float32 [B, 64, T], "frames": int64 [B, 1], "text": uint8 [B, L]}

By default a small corpus of synthetic "utterances" (tone glides at 8, 16, 22.05 and 44.1 kHz
with their transcripts) is written to a temporary folder; ``--manifest FILE`` reads yours.
Needs ``pip install 'feedline[audio,torch]'``.

Usage: ``python examples/speech_pipeline.py [--manifest FILE] [--batch-size 8] [--epochs 1]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from feedline import fn, pipeline_def
from feedline.plugins.pytorch import DALIGenericIterator, LastBatchPolicy

RATE = 16000
WINDOW = 400  # 25 ms at 16 kHz
STEP = 160  # 10 ms
BANDS = 64


def write_corpus(folder: Path, count: int = 12, seed: int = 0) -> Path:
    """Synthetic clips (WAV and FLAC, mixed rates and channel counts) and their manifest."""
    import soundfile

    rng = np.random.default_rng(seed)
    rates = (8000, 16000, 22050, 44100)
    lines = []
    for i in range(count):
        rate = rates[i % len(rates)]
        seconds = float(rng.uniform(0.3, 1.2))
        t = np.arange(int(seconds * rate)) / rate
        pitch = rng.uniform(150, 400) * (1 + 0.5 * t / seconds)  # a rising glide
        voice = 0.4 * np.sin(2 * np.pi * np.cumsum(pitch) / rate) * np.hanning(len(t))
        clip = voice + 0.01 * rng.standard_normal(len(t))
        channels = np.stack([clip, 0.8 * clip], axis=1) if i % 3 == 0 else clip
        path = folder / f"utt{i:03d}.{'flac' if i % 2 else 'wav'}"
        soundfile.write(path, channels.astype(np.float32), rate, subtype="PCM_16")
        lines.append({"audio_filepath": str(path), "duration": len(t) / rate,
                      "text": f"utterance number {i}"})  # fmt: skip
    manifest = folder / "manifest.json"
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return manifest


def frame_count(features: np.ndarray) -> np.ndarray:
    """The number of spectrogram frames (time steps) of one clip, before padding."""
    return np.array([features.shape[1]], np.int64)


@pipeline_def
def speech_pipeline(manifest: str) -> Any:
    """Log-mel features, their frame counts and the transcripts of a NeMo manifest."""
    audio, rate, text = fn.readers.nemo_asr(
        manifest_filepaths=[manifest],
        downmix=True,
        random_shuffle=True,
        pad_last_batch=True,
        name="Reader",
    )
    audio = fn.audio_resample(audio, in_rate=rate, out_rate=float(RATE))
    audio = fn.preemphasis_filter(audio, preemph_coeff=0.97)
    spectrum = fn.spectrogram(audio, nfft=512, window_length=WINDOW, window_step=STEP)
    mel = fn.mel_filter_bank(spectrum, sample_rate=float(RATE), nfilter=BANDS)
    features = fn.to_decibels(mel, multiplier=10.0, cutoff_db=-80.0)
    frames = fn.python_function(features, function=frame_count)
    return fn.pad(features, axes=(1,)), frames, fn.pad(text, axes=(0,))


def run(manifest: str, batch_size: int = 8, epochs: int = 1, num_threads: int = 2) -> list[dict]:
    """Iterate over the manifest ``epochs`` times; return the PyTorch batches."""
    pipe = speech_pipeline(
        manifest, batch_size=batch_size, num_threads=num_threads, device_id=None, seed=42
    )
    loader = DALIGenericIterator(
        pipe, ["features", "frames", "text"], reader_name="Reader",
        last_batch_policy=LastBatchPolicy.PARTIAL,
    )  # fmt: skip
    batches = []
    for _ in range(epochs):
        for (batch,) in loader:
            batches.append(batch)
    return batches


def main(argv: list[str] | None = None) -> int:
    """Run the example and print one line per batch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", help="a NeMo manifest (default: a generated corpus)")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=1)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        manifest = options.manifest or str(write_corpus(Path(folder)))
        for number, batch in enumerate(run(manifest, options.batch_size, options.epochs)):
            features, frames, text = batch["features"], batch["frames"], batch["text"]
            first = bytes(text[0][text[0] > 0].tolist()).decode()
            print(f"batch {number}: features {tuple(features.shape)} {features.dtype}, "
                  f"frames {frames.tolist()}, first transcript {first!r}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
