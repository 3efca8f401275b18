"""``check_operator`` examples of the image-processing families (filters, histogram, warps,
distortions), merged into ``builtin_examples.EXAMPLES``."""

from __future__ import annotations

import numpy as np

from feedline import types
from feedline.testing import OperatorExample

_RNG = np.random.default_rng(2028)


def _images(channels: int = 3) -> list[np.ndarray]:
    shapes = [(24 + 4 * i, 32 - 2 * i) for i in range(3)]
    return [_RNG.integers(0, 256, (*hw, channels), dtype=np.uint8) for hw in shapes]


def _filters() -> list[np.ndarray]:
    return [_RNG.normal(0, 0.3, (k, k)).astype(np.float32) for k in (3, 5, 1)]


def _maps(axis: int) -> list[np.ndarray]:
    maps = []
    for image in _images():
        y, x = np.mgrid[0 : image.shape[0], 0 : image.shape[1]].astype(np.float32)
        maps.append((x, y)[axis] * np.float32(0.9) + np.float32(1.3))
    return maps


IMAGES, HWC = [_images()], ["HWC"]
GRAY = [[image[:, :, 0].copy() for image in _images()]]
MATRIX = [1.05, 0.1, -2.0, 0.05, 0.95, 1.0, 0.001, 0.0005, 1.0]

IMAGE_EXAMPLES: dict[str, OperatorExample] = {
    "filter": OperatorExample([IMAGES[0], _filters()], HWC, {"border": "wrap"}),
    "experimental.filter": OperatorExample([IMAGES[0], _filters()], HWC, {"mode": "valid"}),
    "laplacian": OperatorExample(IMAGES, HWC, {"window_size": 5, "normalized_kernel": True}),
    "experimental.median_blur": OperatorExample(IMAGES, HWC, {"window_size": [3, 5]}),
    "experimental.erode": OperatorExample(IMAGES, HWC, {"mask_size": [5, 3]}),
    "experimental.dilate": OperatorExample(IMAGES, HWC, {"iterations": 2}),
    "equalize": OperatorExample(IMAGES, HWC),
    "experimental.equalize": OperatorExample(GRAY, ["HW"]),
    "clahe": OperatorExample(IMAGES, HWC, {"tiles_x": 4, "tiles_y": 2, "clip_limit": 2.0}),
    "debayer": OperatorExample(GRAY, ["HW"], {"blue_position": [0, 1]}),
    "experimental.debayer": OperatorExample(
        GRAY, ["HW"], {"blue_position": [1, 1], "algorithm": "edgeaware_ocv"}
    ),
    "experimental.warp_perspective": OperatorExample(IMAGES, HWC, {"matrix": MATRIX}),
    "experimental.remap": OperatorExample([IMAGES[0], _maps(0), _maps(1)], HWC),
    "water": OperatorExample(IMAGES, HWC, {"ampl_x": 4.0, "interp_type": types.INTERP_LINEAR}),
    "sphere": OperatorExample(IMAGES, HWC),
    "jpeg_compression_distortion": OperatorExample(IMAGES, HWC, {"quality": 20}),
    "noise.shot": OperatorExample(IMAGES, HWC, {"factor": 8.0}),
    "noise.salt_and_pepper": OperatorExample(IMAGES, HWC, {"prob": 0.2}),
}
