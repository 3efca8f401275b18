"""Data providers over the synthetic NuScenes-shaped data set, one per use case.

:class:`Detection2DProvider` yields one camera image per sample with its 2-D boxes;
:class:`StreamPETRProvider` yields all six cameras of a sample with their projection matrices,
2-D boxes, 3-D objects and the ego pose, for sequence-wise sampling.
"""

from __future__ import annotations

import numpy as np

from feedline.structured.inputs import DataProvider
from feedline.structured.pipeline import SampleDataGroup
from feedline.types import DALIDataType

from .synthetic_nuscenes import CAMERAS, CATEGORIES, Dataset, box_corners, project_box

#: Category names to ids (None: an unnamed object).
CATEGORY_IDS = {name: index for index, name in enumerate(CATEGORIES)} | {None: -1}


def _encoded(path) -> np.ndarray:
    return np.fromfile(path, dtype=np.uint8)


def _camera_objects(dataset: Dataset, objects: list[dict], camera: str) -> dict[str, list]:
    """The objects a camera sees: 2-D boxes, projected centres, depths and attributes."""
    lidar2img = dataset.lidar2img(camera)
    seen: dict[str, list] = {
        key: []
        for key in ("bboxes", "centers", "depths", "categories", "visibility", "lidar", "radar")
    }
    for obj in objects:
        centre = np.array(obj["center"])
        projected = project_box(
            box_corners(centre, np.array(obj["size"]), obj["yaw"]), lidar2img, dataset.image_hw
        )
        if projected is None:
            continue
        box, depth = projected
        pixel = lidar2img @ np.append(centre, 1.0)
        seen["bboxes"].append(box)
        seen["centers"].append(pixel[:2] / pixel[2])
        seen["depths"].append(depth)
        seen["categories"].append(obj["category"])
        seen["visibility"].append(obj["visibility"])
        seen["lidar"].append(obj["num_lidar_pts"])
        seen["radar"].append(obj["num_radar_pts"])
    return seen


def _rows(values: list, width: int) -> np.ndarray:
    return np.array(values, np.float32).reshape(-1, width)


class Detection2DProvider(DataProvider):
    """Sample ``i`` is camera ``i % 6`` of data-set sample ``i // 6``.

    Args:
        dataset: the data set.
    """

    def __init__(self, dataset: Dataset) -> None:
        self._dataset = dataset

    @property
    def sample_data_structure(self) -> SampleDataGroup:
        annotation = SampleDataGroup()
        annotation.add_data_field("bboxes", DALIDataType.FLOAT)
        annotation.add_data_field("categories", DALIDataType.INT32, CATEGORY_IDS)
        annotation.add_data_field("visibility_levels", DALIDataType.INT32)
        annotation.add_data_field("num_lidar_points", DALIDataType.INT32)
        annotation.add_data_field("num_radar_points", DALIDataType.INT32)
        sample = SampleDataGroup()
        sample.add_data_field("image", DALIDataType.UINT8)
        sample.add_data_group_field("annotation", annotation)
        return sample

    def get_number_of_samples(self) -> int:
        return len(self._dataset.samples) * len(CAMERAS)

    def get_data(self, sample_id: int) -> SampleDataGroup:
        record = self._dataset.samples[sample_id // len(CAMERAS)]
        camera = CAMERAS[sample_id % len(CAMERAS)]
        seen = _camera_objects(self._dataset, record.objects, camera)
        sample = self.sample_data_structure
        sample["image"] = _encoded(record.image_paths[camera])
        annotation = sample["annotation"]
        annotation["bboxes"] = _rows(seen["bboxes"], 4)
        annotation["categories"] = seen["categories"]
        annotation["visibility_levels"] = np.array(seen["visibility"], np.int32)
        annotation["num_lidar_points"] = np.array(seen["lidar"], np.int32)
        annotation["num_radar_points"] = np.array(seen["radar"], np.int32)
        return sample


class StreamPETRProvider(DataProvider):
    """Sample ``i`` is data-set sample ``i`` with all six cameras.

    Args:
        dataset: the data set.
    """

    def __init__(self, dataset: Dataset) -> None:
        self._dataset = dataset

    @property
    def sample_data_structure(self) -> SampleDataGroup:
        boxes_2d = SampleDataGroup()
        boxes_2d.add_data_field("bboxes", DALIDataType.FLOAT)
        boxes_2d.add_data_field("centers", DALIDataType.FLOAT)
        boxes_2d.add_data_field("depths", DALIDataType.FLOAT)
        boxes_2d.add_data_field("categories", DALIDataType.INT32, CATEGORY_IDS)
        boxes_2d.add_data_field("num_lidar_points", DALIDataType.INT32)
        camera = SampleDataGroup()
        camera.add_data_field("image", DALIDataType.UINT8)
        camera.add_data_field("lidar2img", DALIDataType.FLOAT)
        camera.add_data_field("timestamp", DALIDataType.FLOAT64)
        camera.add_data_group_field("gt_boxes_2d", boxes_2d)
        boxes_3d = SampleDataGroup()
        boxes_3d.add_data_field("translations", DALIDataType.FLOAT)
        boxes_3d.add_data_field("sizes", DALIDataType.FLOAT)
        boxes_3d.add_data_field("rotations", DALIDataType.FLOAT)
        boxes_3d.add_data_field("velocities", DALIDataType.FLOAT)
        boxes_3d.add_data_field("categories", DALIDataType.INT32, CATEGORY_IDS)
        boxes_3d.add_data_field("num_lidar_points", DALIDataType.INT32)
        sample = SampleDataGroup()
        sample.add_data_group_field_array("cams", camera, len(CAMERAS))
        sample.add_data_group_field("gt_boxes", boxes_3d)
        sample.add_data_field("ego_pose", DALIDataType.FLOAT)
        sample.add_data_field("timestamp", DALIDataType.FLOAT64)
        sample.add_data_field("prev_exists", DALIDataType.BOOL)
        return sample

    def get_number_of_samples(self) -> int:
        return len(self._dataset.samples)

    def get_data(self, sample_id: int) -> SampleDataGroup:
        record = self._dataset.samples[sample_id]
        sample = self.sample_data_structure
        for index, camera in enumerate(CAMERAS):
            seen = _camera_objects(self._dataset, record.objects, camera)
            cam = sample["cams"][index]
            cam["image"] = _encoded(record.image_paths[camera])
            cam["lidar2img"] = self._dataset.lidar2img(camera).astype(np.float32)
            cam["timestamp"] = np.float64(record.timestamp_us * 1e-6)
            boxes = cam["gt_boxes_2d"]
            boxes["bboxes"] = _rows(seen["bboxes"], 4)
            boxes["centers"] = _rows(seen["centers"], 2)
            boxes["depths"] = np.array(seen["depths"], np.float32)
            boxes["categories"] = seen["categories"]
            boxes["num_lidar_points"] = np.array(seen["lidar"], np.int32)
        objects = record.objects
        boxes_3d = sample["gt_boxes"]
        boxes_3d["translations"] = _rows([o["center"] for o in objects], 3)
        boxes_3d["sizes"] = _rows([o["size"] for o in objects], 3)
        boxes_3d["rotations"] = _rows([[o["yaw"]] for o in objects], 1)
        boxes_3d["velocities"] = _rows([[*o["velocity"], 0.0] for o in objects], 3)
        boxes_3d["categories"] = [o["category"] for o in objects]
        boxes_3d["num_lidar_points"] = np.array([o["num_lidar_pts"] for o in objects], np.int32)
        sample["ego_pose"] = record.ego_pose.astype(np.float32)
        sample["timestamp"] = np.float64(record.timestamp_us * 1e-6)
        sample["prev_exists"] = np.array(record.index > 0)
        return sample
