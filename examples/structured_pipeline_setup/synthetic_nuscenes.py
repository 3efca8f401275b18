"""A tiny NuScenes-shaped data set: scenes of samples, six cameras, 3-D objects, on disk.

:func:`write_dataset` generates one; :class:`Dataset` reads it. The layout follows NuScenes'
ideas in small: scenes are sequences of samples 0.5 s apart; each sample has an ego pose, a
lidar frame (the object frame), six calibrated cameras (``CAM_FRONT`` ...) with a JPEG each, and
3-D objects (centre, size, yaw, velocity, category, lidar and radar point counts, visibility
level 1-4). :func:`project_box` gives an object's 2-D box in a camera, as NuScenes' devkit
derives image boxes from the 3-D annotations.

File layout: ``ROOT/dataset.json`` and ``ROOT/samples/<camera>/<scene>_<index>.jpg``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

CAMERAS = (
    "CAM_FRONT",
    "CAM_FRONT_RIGHT",
    "CAM_FRONT_LEFT",
    "CAM_BACK",
    "CAM_BACK_LEFT",
    "CAM_BACK_RIGHT",
)
#: Where each camera looks, in degrees from the ego's forward axis (left positive).
CAMERA_YAWS = (0.0, -55.0, 55.0, 180.0, 110.0, -110.0)
CATEGORIES = ("car", "truck", "pedestrian", "bicycle")
#: Typical width, length and height of each category, in metres.
CATEGORY_SIZES = {
    "car": (1.9, 4.6, 1.7),
    "truck": (2.5, 7.0, 3.0),
    "pedestrian": (0.7, 0.7, 1.8),
    "bicycle": (0.6, 1.8, 1.3),
}
SAMPLE_PERIOD_US = 500_000


def camera_to_ego(yaw_degrees: float) -> np.ndarray:
    """The 4x4 pose of a camera (x right, y down, z forward) on the ego (x forward, z up)."""
    yaw = np.deg2rad(yaw_degrees)
    forward = np.array([np.cos(yaw), np.sin(yaw), 0.0])
    right = np.array([np.sin(yaw), -np.cos(yaw), 0.0])
    down = np.array([0.0, 0.0, -1.0])
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, down, forward], axis=1)
    pose[:3, 3] = [1.0 * np.cos(yaw), 1.0 * np.sin(yaw), 1.5]
    return pose


def intrinsics(image_hw: tuple[int, int]) -> np.ndarray:
    """A 3x3 pinhole matrix with a 90 degree horizontal field of view."""
    height, width = image_hw
    return np.array([[width / 2, 0.0, width / 2], [0.0, width / 2, height / 2], [0.0, 0.0, 1.0]])


def box_corners(center: np.ndarray, size: np.ndarray, yaw: float) -> np.ndarray:
    """The eight ``(x, y, z)`` corners of a box of ``(width, length, height)`` turned by ``yaw``."""
    width, length, height = size
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    local = signs * np.array([length, width, height]) / 2
    cos, sin = np.cos(yaw), np.sin(yaw)
    turn = np.array([[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]])
    return local @ turn.T + center


def lidar_to_image(camera_pose: np.ndarray, camera_matrix: np.ndarray) -> np.ndarray:
    """The 4x4 matrix from the lidar (= ego) frame to homogeneous pixel coordinates."""
    full = np.eye(4)
    full[:3, :3] = camera_matrix
    return full @ np.linalg.inv(camera_pose)


def project_box(
    corners: np.ndarray, lidar2img: np.ndarray, image_hw: tuple[int, int]
) -> tuple[np.ndarray, float] | None:
    """The ``x1, y1, x2, y2`` box (clipped to the image) and depth of corners in front of a camera.

    None when a corner is behind the camera or the box misses the image.
    """
    homogeneous = np.hstack([corners, np.ones((len(corners), 1))]) @ lidar2img.T
    depth = homogeneous[:, 2]
    if np.any(depth < 0.5):
        return None
    pixels = homogeneous[:, :2] / depth[:, None]
    low = np.clip(pixels.min(axis=0), 0, [image_hw[1], image_hw[0]])
    high = np.clip(pixels.max(axis=0), 0, [image_hw[1], image_hw[0]])
    if np.any(high - low < 1.0):
        return None
    return np.concatenate([low, high]), float(depth.mean())


@dataclass
class Sample:
    """One sample of a scene, as read from ``dataset.json``."""

    scene: str
    index: int
    timestamp_us: int
    ego_pose: np.ndarray
    image_paths: dict[str, Path]
    objects: list[dict]


class Dataset:
    """A data set written by :func:`write_dataset`.

    Args:
        root: the data set's folder.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        meta = json.loads((self.root / "dataset.json").read_text())
        self.image_hw = tuple(meta["image_hw"])
        self.camera_matrix = np.array(meta["intrinsics"])
        self.camera_poses = {cam: np.array(pose) for cam, pose in meta["camera_to_ego"].items()}
        self.samples = [
            Sample(
                scene=record["scene"],
                index=record["index"],
                timestamp_us=record["timestamp_us"],
                ego_pose=np.array(record["ego_pose"]),
                image_paths={cam: self.root / path for cam, path in record["images"].items()},
                objects=record["objects"],
            )
            for record in meta["samples"]
        ]

    def lidar2img(self, camera: str) -> np.ndarray:
        """The 4x4 lidar-to-pixel matrix of a camera."""
        return lidar_to_image(self.camera_poses[camera], self.camera_matrix)

    def sequence_lengths(self) -> list[int]:
        """The number of samples of each scene, in order (samples are stored scene by scene)."""
        scenes = [s.scene for s in self.samples]
        return [scenes.count(name) for name in dict.fromkeys(scenes)]


def _random_object(rng: np.random.Generator) -> dict:
    category = str(rng.choice(CATEGORIES))
    distance, bearing = rng.uniform(6.0, 30.0), rng.uniform(-np.pi, np.pi)
    size = np.array(CATEGORY_SIZES[category]) * rng.uniform(0.9, 1.1)
    return {
        "category": category,
        "center": [distance * np.cos(bearing), distance * np.sin(bearing), size[2] / 2],
        "size": size.tolist(),
        "yaw": float(rng.uniform(-np.pi, np.pi)),
        "velocity": rng.normal(0.0, 2.0, 2).tolist(),
        "num_lidar_pts": int(rng.integers(0, 40)),
        "num_radar_pts": int(rng.integers(0, 5)),
        "visibility": int(rng.integers(1, 5)),
    }


def _draw_camera(
    rng: np.random.Generator, objects: list[dict], lidar2img: np.ndarray, image_hw: tuple[int, int]
) -> Image.Image:
    background = rng.integers(40, 200, (3, 4, 3), dtype=np.uint8)
    image = Image.fromarray(background).resize(image_hw[::-1], Image.BILINEAR)
    draw = ImageDraw.Draw(image)
    order = sorted(objects, key=lambda o: -np.hypot(*o["center"][:2]))
    for obj in order:
        corners = box_corners(np.array(obj["center"]), np.array(obj["size"]), obj["yaw"])
        projected = project_box(corners, lidar2img, image_hw)
        if projected is not None:
            x1, y1, x2, y2 = projected[0]
            colour = tuple(int(c) for c in rng.integers(0, 256, 3))
            draw.rectangle([x1, y1, x2, y2], fill=colour)
    return image


def write_dataset(
    root: str | Path,
    num_scenes: int = 2,
    samples_per_scene: int = 4,
    objects_per_sample: int = 8,
    image_hw: tuple[int, int] = (90, 160),
    seed: int = 0,
) -> Path:
    """Generate a data set under ``root`` (reproducible for one ``seed``) and return ``root``."""
    rng = np.random.default_rng(seed)
    root = Path(root)
    camera_matrix = intrinsics(image_hw)
    poses = {cam: camera_to_ego(yaw) for cam, yaw in zip(CAMERAS, CAMERA_YAWS, strict=True)}
    samples = []
    for scene_index in range(num_scenes):
        scene = f"scene-{scene_index:04d}"
        objects = [_random_object(rng) for _ in range(objects_per_sample)]
        for index in range(samples_per_scene):
            ego_pose = np.eye(4)
            ego_pose[:3, 3] = [2.0 * index, 0.0, 0.0]
            for obj in objects:
                moved = np.array(obj["center"]) + np.array([*obj["velocity"], 0.0]) * 0.5
                obj["center"] = moved.tolist()
            images = {}
            for cam in CAMERAS:
                path = Path("samples") / cam / f"{scene}_{index:03d}.jpg"
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                lidar2img = lidar_to_image(poses[cam], camera_matrix)
                _draw_camera(rng, objects, lidar2img, image_hw).save(root / path, quality=90)
                images[cam] = str(path)
            samples.append(
                {
                    "scene": scene,
                    "index": index,
                    "timestamp_us": scene_index * 10**8 + index * SAMPLE_PERIOD_US,
                    "ego_pose": ego_pose.tolist(),
                    "images": images,
                    "objects": [dict(obj) for obj in objects],
                }
            )
    meta = {
        "image_hw": list(image_hw),
        "intrinsics": camera_matrix.tolist(),
        "camera_to_ego": {cam: pose.tolist() for cam, pose in poses.items()},
        "samples": samples,
    }
    (root / "dataset.json").write_text(json.dumps(meta))
    return root
