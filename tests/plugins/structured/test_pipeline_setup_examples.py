"""The NuScenes-shaped example pipelines (2-D detection, StreamPETR) run on a generated data set."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from feedline.structured import processing_steps
from tests.conftest import REPO_ROOT

torch = pytest.importorskip("torch", reason="the example iterators hand out torch tensors")
sys.path.insert(0, str(Path(REPO_ROOT) / "examples"))

from structured_pipeline_setup import synthetic_nuscenes  # noqa: E402
from structured_pipeline_setup.object_detection_2d import build_2d_detection_loader  # noqa: E402
from structured_pipeline_setup.stream_petr import build_stream_petr_loader  # noqa: E402


def missing_steps(*names: str) -> list[str]:
    return [name for name in names if not hasattr(processing_steps, name)]


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("nuscenes")
    return str(synthetic_nuscenes.write_dataset(root, num_scenes=2, samples_per_scene=3, seed=4))


def test_generated_data_set_is_reproducible_and_projects_into_the_images(dataset_dir, tmp_path):
    again = synthetic_nuscenes.write_dataset(tmp_path, num_scenes=2, samples_per_scene=3, seed=4)
    assert (Path(dataset_dir) / "dataset.json").read_text() == (again / "dataset.json").read_text()
    dataset = synthetic_nuscenes.Dataset(dataset_dir)
    assert dataset.sequence_lengths() == [3, 3]
    seen = 0
    for sample in dataset.samples:
        for obj in sample.objects:
            corners = synthetic_nuscenes.box_corners(
                np.array(obj["center"]), np.array(obj["size"]), obj["yaw"]
            )
            for camera in synthetic_nuscenes.CAMERAS:
                found = synthetic_nuscenes.project_box(
                    corners, dataset.lidar2img(camera), dataset.image_hw
                )
                if found is not None:
                    seen += 1
                    box = found[0]
                    assert 0 <= box[0] < box[2] <= 160 and 0 <= box[1] < box[3] <= 90
    assert seen > 0


def check_2d_batches(batches: list[dict], batch_size: int) -> None:
    assert len(batches) == 2 * 3 * 6 // batch_size
    for batch in batches:
        assert tuple(batch["image"].shape) == (batch_size, 96, 160, 3)
        assert batch["image"].dtype == torch.float32 and float(batch["image"].max()) <= 1.0
        annotation = batch["annotation"]
        assert annotation["bboxes"].shape[:2] == annotation["categories"].shape
        assert bool((annotation["categories"] >= 0).all())


@pytest.mark.parametrize("with_heatmaps", [False, True])
def test_2d_detection_pipeline(dataset_dir: str, with_heatmaps: bool) -> None:
    if with_heatmaps and missing_steps("BoundingBoxToHeatmapConverter"):
        pytest.skip("BoundingBoxToHeatmapConverter is not in feedline.structured yet")
    loader = build_2d_detection_loader(dataset_dir, 4, with_heatmaps=with_heatmaps)
    batches = list(loader)
    check_2d_batches(batches, 4)
    if with_heatmaps:
        assert tuple(batches[0]["annotation"]["heatmap"].shape[-2:]) == (24, 40)


def isolated_boxes(boxes: np.ndarray, margin: float = 2.0) -> list[np.ndarray]:
    """Boxes (corners ordered) that overlap no other box of the image, grown by ``margin``."""
    ordered = np.concatenate(
        [np.minimum(boxes[:, :2], boxes[:, 2:]), np.maximum(boxes[:, :2], boxes[:, 2:])], axis=1
    )
    ordered = ordered[(ordered[:, 2:] - ordered[:, :2]).min(axis=1) > 0]
    alone = []
    for i, box in enumerate(ordered):
        others = np.delete(ordered, i, axis=0)
        overlap = (
            (others[:, 0] < box[2] + margin)
            & (others[:, 2] > box[0] - margin)
            & (others[:, 1] < box[3] + margin)
            & (others[:, 3] > box[1] - margin)
        )
        if not overlap.any():
            alone.append(box)
    return alone


def test_2d_boxes_follow_the_augmented_image(dataset_dir: str) -> None:
    """Objects are drawn as filled boxes: a box that overlaps no other covers one flat colour."""
    checked = 0
    for batch in build_2d_detection_loader(dataset_dir, 6, with_heatmaps=False, seed=3):
        for image, boxes in zip(batch["image"], batch["annotation"]["bboxes"], strict=True):
            for x1, y1, x2, y2 in isolated_boxes(boxes.numpy()):
                x1, y1 = max(int(x1) + 2, 0), max(int(y1) + 2, 0)
                x2, y2 = min(int(x2) - 2, 160), min(int(y2) - 2, 96)
                inner = image[y1:y2, x1:x2]
                if inner.shape[0] > 2 and inner.shape[1] > 2:
                    spread = (inner.amax(dim=(0, 1)) - inner.amin(dim=(0, 1))).max()
                    assert float(spread) < 0.3, "JPEG and interpolation stay well below this"
                    checked += 1
    assert checked > 5


@pytest.mark.parametrize("full", [False, True])
def test_stream_petr_pipeline(dataset_dir: str, full: bool) -> None:
    absent = missing_steps("VisibleBboxSelector", "BEVBBoxesTransformer3D")
    if full and absent:
        pytest.skip(f"{', '.join(absent)} not in feedline.structured yet")
    loader = build_stream_petr_loader(dataset_dir, 2, with_visibility_and_bev=full)
    batches = list(loader)
    assert len(batches) >= 3
    first_times = batches[0]["timestamp"].tolist()
    for batch in batches:
        assert set(batch["cams"]) == set(range(6))
        for cam in batch["cams"].values():
            assert tuple(cam["image"].shape) == (2, 96, 160, 3)
            assert tuple(cam["lidar2img"].shape) == (2, 4, 4)
            centres = cam["gt_boxes_2d"]["centers"]
            assert bool(((centres >= 0) & (centres <= torch.tensor([160.0, 96.0]))).all())
        boxes = batch["gt_boxes"]
        assert boxes["translations"].shape[:2] == boxes["categories"].shape
    second_times = batches[1]["timestamp"].tolist()
    assert all(b - a == pytest.approx(0.5) for a, b in zip(first_times, second_times, strict=True))
