"""The speech example runs end to end on a generated corpus and its features are log-mels."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.conftest import REPO_ROOT

torch = pytest.importorskip("torch", reason="the example hands out torch tensors")
soundfile = pytest.importorskip("soundfile", reason="the example decodes audio (feedline[audio])")


def load_example() -> ModuleType:
    path = Path(REPO_ROOT) / "examples" / "speech_pipeline.py"
    spec = importlib.util.spec_from_file_location("speech_pipeline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_two_epochs_of_padded_log_mel_batches(tmp_path: Path) -> None:
    example = load_example()
    manifest = example.write_corpus(tmp_path, count=10)
    batches = example.run(str(manifest), batch_size=4, epochs=2)
    assert len(batches) == 6  # 4 + 4 + 2 per epoch (PARTIAL)
    seen = []
    for batch in batches:
        features, frames, text = batch["features"], batch["frames"], batch["text"]
        assert features.dtype == torch.float32 and features.shape[1] == example.BANDS
        assert features.shape[2] == int(frames.max())
        assert float(features.max()) <= 0.0 and float(features.min()) >= -80.0 - 1e-3
        for row in text.numpy():
            seen.append(bytes(row[row > 0]).decode())
    assert sorted(seen) == sorted([f"utterance number {i}" for i in range(10)] * 2)


def test_frame_counts_follow_the_16khz_duration(tmp_path: Path) -> None:
    example = load_example()
    manifest = example.write_corpus(tmp_path, count=4)
    lines = [line for line in manifest.read_text().splitlines() if line]
    batch = example.run(str(manifest), batch_size=4)[0]
    import json

    durations = {json.loads(line)["text"]: json.loads(line)["duration"] for line in lines}
    for row, frames in zip(batch["text"].numpy(), batch["frames"].numpy(), strict=True):
        seconds = durations[bytes(row[row > 0]).decode()]
        samples = int(np.ceil(round(seconds * 1e6) / 1e6 * example.RATE - 1e-9))
        assert int(frames[0]) == samples // example.STEP + 1


def test_main_prints_batches(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_example().main(["--batch-size", "6"]) == 0
    assert capsys.readouterr().out.count("batch ") == 2
