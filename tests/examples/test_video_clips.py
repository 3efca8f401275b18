"""The video example runs end to end on generated videos."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT

torch = pytest.importorskip("torch", reason="the example hands out torch tensors")
av = pytest.importorskip("av", reason="the example decodes videos (feedline[video])")


def load_example() -> ModuleType:
    path = Path(REPO_ROOT) / "examples" / "video_clips.py"
    spec = importlib.util.spec_from_file_location("video_clips", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_epoch_of_channel_first_clips(tmp_path: Path) -> None:
    example = load_example()
    root = example.write_videos(tmp_path, per_class=2)
    batches = example.run(str(root), batch_size=3)
    total = sum(len(batch["labels"]) for batch in batches)
    expected = 0
    for video in sorted(root.glob("*/*.mp4")):
        with av.open(str(video)) as container:
            frames = sum(1 for _ in container.decode(video=0))
        span = (example.FRAMES - 1) * example.STRIDE + 1
        expected += len(range(0, frames - span + 1, example.FRAMES))
    assert total == expected
    for batch in batches:
        clips, labels = batch["clips"], batch["labels"]
        assert clips.dtype == torch.float32 and tuple(clips.shape[1:3]) == (3, example.FRAMES)
        assert min(clips.shape[3:]) == example.SHORTER
        assert float(clips.min()) >= 0.0 and float(clips.max()) <= 1.0
        assert set(labels.flatten().tolist()) <= {0, 1}
        # the class is visible in the background level: 30 (left) or 70 (right) out of 255
        corner = clips[:, 0, 0, 0, 0] * 255
        for value, label in zip(corner.tolist(), labels.flatten().tolist(), strict=True):
            assert abs(value - (30 + 40 * label)) < 6
