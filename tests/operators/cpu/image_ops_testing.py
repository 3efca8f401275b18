"""Helpers for the image-operator tests: plugin set-up, encoders and independent references.

The references restate DALI's documented conventions in the most direct form (dense weight
matrices built pixel by pixel, plain index arithmetic) so that they share no code with the
kernels under test.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from PIL import Image

from feedline.core.plugins import PluginSystem
from tests.operators.cpu.families import use_families

#: Pillow's fixed-point resampling stays within one level of the exact result.
PIL_TOLERANCE = 1.0 + 1e-6


def use_image_plugins(system: PluginSystem) -> None:
    """Register the plugins these tests need: python, tensor, image, geometry and random
    families, and readers.file."""
    import feedline.readers.file as file_plugin

    use_families(system, "python", "tensor", "image", "geometry", "random")
    system.register(file_plugin, "file-reader")


def encode(image: np.ndarray | Image.Image, fmt: str = "JPEG", **options: Any) -> np.ndarray:
    """Encode ``image`` with Pillow and return the file's bytes as a uint8 array."""
    pil = image if isinstance(image, Image.Image) else Image.fromarray(np.squeeze(image))
    buffer = io.BytesIO()
    pil.save(buffer, fmt, **options)
    return np.frombuffer(buffer.getvalue(), dtype=np.uint8)


def pil_decode(data: np.ndarray, mode: str = "RGB") -> np.ndarray:
    """Pillow's decode of ``data`` converted to ``mode`` (HWC)."""
    with Image.open(io.BytesIO(data.tobytes())) as img:
        array = np.asarray(img.convert(mode))
    return array[:, :, None] if array.ndim == 2 else array


def coordinate_image(height: int, width: int) -> np.ndarray:
    """A uint8 HWC image whose pixel (y, x) encodes y and x (see :func:`decode_coordinates`)."""
    y, x = np.mgrid[0:height, 0:width]
    return np.stack([y % 256, x % 256, (y // 256) * 16 + x // 256], axis=-1).astype(np.uint8)


def decode_coordinates(pixel: np.ndarray) -> tuple[int, int]:
    """The ``(y, x)`` stored in a pixel of :func:`coordinate_image`."""
    high = int(pixel[2])
    return int(pixel[0]) + 256 * (high // 16), int(pixel[1]) + 256 * (high % 16)


def dali_round(value: float) -> int:
    """Round half away from zero."""
    return math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)


def triangle_matrix(in_size: int, out_size: int, start: float, end: float) -> np.ndarray:
    """Linear (antialiased) resampling weights, ``(out_size, in_size)``, with clamped borders.

    Output pixel ``j`` is centred at ``c = start + (j + 0.5) * s``, ``s = (end - start) / out``;
    input pixel ``i`` (centre ``i + 0.5``) weighs ``max(0, 1 - |i + 0.5 - c| / max(|s|, 1))``;
    positions outside the image count for the nearest edge pixel; rows sum to one.
    """
    scale = (end - start) / out_size
    radius = max(abs(scale), 1.0)
    matrix = np.zeros((out_size, in_size))
    for j in range(out_size):
        centre = start + (j + 0.5) * scale
        for i in range(math.floor(centre - radius) - 1, math.ceil(centre + radius) + 2):
            weight = max(0.0, 1.0 - abs(i + 0.5 - centre) / radius)
            matrix[j, min(max(i, 0), in_size - 1)] += weight
        matrix[j] /= matrix[j].sum()
    return matrix


def reference_resize(
    image: np.ndarray, out_h: int, out_w: int, y: Sequence[float], x: Sequence[float]
) -> np.ndarray:
    """DALI's antialiased linear resize of the source region ``y = (y0, y1)``, ``x = (x0, x1)``."""
    data = image.astype(np.float64)
    if data.ndim == 2:
        data = data[:, :, None]
    rows = triangle_matrix(data.shape[0], out_h, y[0], y[1])
    cols = triangle_matrix(data.shape[1], out_w, x[0], x[1])
    horizontal = np.einsum("ow,hwc->hoc", cols, data)
    return np.einsum("oh,hwc->owc", rows, horizontal)
