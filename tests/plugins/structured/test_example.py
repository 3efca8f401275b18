"""The multi-camera example runs end to end: on generated images and on the bundled COCO sample."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT, sample_data

torch = pytest.importorskip("torch", reason="the example hands out torch tensors")


def load_example() -> ModuleType:
    path = Path(REPO_ROOT) / "examples" / "structured_multicamera.py"
    spec = importlib.util.spec_from_file_location("structured_multicamera", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_batches(batches: list[dict], batch_size: int, count: int, num_classes: int) -> None:
    assert len(batches) == count
    tags = [tag for batch in batches for tag in batch["tag"]]
    assert len(set(tags)) == len(tags) == batch_size * count
    for batch in batches:
        assert set(batch) == {"cams", "tag"} and set(batch["cams"]) == {0, 1}
        for cam in batch["cams"].values():
            assert cam["image"].dtype == torch.uint8
            assert tuple(cam["image"].shape) == (batch_size, 192, 256, 3)
            boxes, labels = cam["boxes"], cam["labels"]
            assert boxes.dtype == torch.float32 and labels.dtype == torch.int32
            assert boxes.shape[:2] == labels.shape and boxes.shape[2] == 4
            real = labels >= 0
            assert bool(((labels >= 1) & (labels <= num_classes) | ~real).all())
            assert bool((boxes[real][:, :2] <= boxes[real][:, 2:]).all())
            assert bool((boxes[~real] == -1).all())


def test_example_on_generated_images(capsys: pytest.CaptureFixture[str]) -> None:
    example = load_example()
    batches = example.main(["--samples", "8", "--batch-size", "4", "--threads", "1"])
    check_batches(batches, 4, 2, len(example.GENERATED_CLASSES))
    printed = capsys.readouterr().out
    assert "2 batches per epoch" in printed and "labels: DALIDataType.INT32" in printed


def test_example_on_coco(tmp_path: Path) -> None:
    # The example reads DIR/images and DIR/annotations/instances_*.json: lay the sample out so.
    root = tmp_path / "coco"
    (root / "annotations").mkdir(parents=True)
    (root / "images").symlink_to(sample_data("coco_dali_dummy", "images"))
    instances = sample_data("coco_dali_dummy", "instances.json").read_bytes()
    (root / "annotations" / "instances_dummy.json").write_bytes(instances)
    example = load_example()
    batches = example.main(["--coco", str(root), "--samples", "8", "--batch-size", "4"])
    check_batches(batches, 4, 2, 80)
