"""``equalize`` and ``clahe`` with OpenCV's ``equalizeHist`` and ``createCLAHE``, as DALI's CPU
operators run them."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.frames import from_planes, split_images, to_planes
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype, resolve_layout

__all__ = ["ClaheKernel", "EqualizeKernel", "clahe", "equalize"]

_MAX_CHANNELS = 512


def equalization_lut(histogram: np.ndarray) -> np.ndarray:
    """The look-up table OpenCV's ``equalizeHist`` builds from a 256-bin ``histogram``.

    With ``i0`` the lowest value present and ``N`` the pixel count, value ``v >= i0`` maps to
    ``round((cdf(v) - hist[i0]) * (255 / (N - hist[i0])))`` in float32, halves to even; a
    channel with one value keeps it.
    """
    present = np.flatnonzero(histogram)
    if present.size == 0:
        return np.arange(256, dtype=np.uint8)
    first = present[0]
    histogram = histogram.astype(np.int64)
    total = int(histogram.sum())
    if histogram[first] == total:
        return np.full(256, first, np.uint8)
    scale = np.float32(255.0) / np.float32(total - histogram[first])
    counts = (np.cumsum(histogram) - histogram[first]).astype(np.float32)
    lut = np.clip(np.rint(counts * scale), 0, 255).astype(np.uint8)
    lut[:first] = 0
    return lut


def equalize(planes: np.ndarray) -> np.ndarray:
    """Equalize each channel of each plane of a uint8 ``(planes, H, W, C)`` array."""
    cv2 = import_cv2("equalize")
    out = np.empty_like(planes)
    channels = planes.shape[3]
    for p, plane in enumerate(planes):
        if channels == 1:
            out[p, :, :, 0] = cv2.equalizeHist(plane[:, :, 0])
            continue
        luts = np.stack(
            [
                equalization_lut(cv2.calcHist([plane], [c], None, [256], [0, 256]).ravel())
                for c in range(channels)
            ]
        )
        if channels <= 4:
            cv2.LUT(plane, luts.T[:, None, :].copy(), dst=out[p])
        else:
            out[p] = np.take_along_axis(luts.T, plane.reshape(-1, channels), 0).reshape(plane.shape)
    return out


class EqualizeKernel(SampleKernel):
    """Per-sample ``equalize`` (and ``experimental.equalize``)."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Equalize one image or video."""
        op = self.ctx.schema.name
        (image,) = inputs
        split = split_images(op, sample.layouts[0], image.ndim)
        check_dtype(op, image, (np.uint8,))
        planes = to_planes(image, split)
        if not 1 <= planes.shape[3] <= _MAX_CHANNELS:
            raise ValueError(
                f"{op}: images with 1 to {_MAX_CHANNELS} channels are supported, got "
                f"{planes.shape[3]}"
            )
        return from_planes(equalize(planes), split, image.shape)


class _ClaheCache(threading.local):
    """One OpenCV CLAHE object per thread and parameters (the objects are not thread-safe)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[float, int, int], Any] = {}

    def get(self, clip_limit: float, tiles_x: int, tiles_y: int) -> Any:
        key = (clip_limit, tiles_x, tiles_y)
        if key not in self.objects:
            cv2 = import_cv2("clahe")
            self.objects[key] = cv2.createCLAHE(clip_limit, (tiles_x, tiles_y))
        return self.objects[key]


_CLAHE = _ClaheCache()


def clahe(
    image: np.ndarray, clip_limit: float, tiles_x: int, tiles_y: int, luma_only: bool
) -> np.ndarray:
    """CLAHE of a uint8 ``HW`` or ``HWC`` (1 or 3 channels, RGB) image."""
    cv2 = import_cv2("clahe")
    engine = _CLAHE.get(float(np.float32(clip_limit)), tiles_x, tiles_y)
    if image.ndim == 2 or image.shape[2] == 1:
        return engine.apply(np.ascontiguousarray(image.reshape(image.shape[:2]))).reshape(
            image.shape
        )
    if luma_only:
        lab = cv2.cvtColor(image, cv2.COLOR_RGB2Lab)
        lab[:, :, 0] = engine.apply(np.ascontiguousarray(lab[:, :, 0]))
        return cv2.cvtColor(lab, cv2.COLOR_Lab2RGB)
    channels = [engine.apply(np.ascontiguousarray(image[:, :, c])) for c in range(3)]
    return np.stack(channels, axis=-1)


class ClaheKernel(SampleKernel):
    """Per-sample ``clahe``."""

    def setup(self) -> None:
        """Check the tile counts, the clip limit and the number of bins."""
        args = self.ctx.args
        for name in ("tiles_x", "tiles_y"):
            if args[name] <= 0:
                raise ValueError(f"clahe: {name} must be positive, got {args[name]}")
        if args["clip_limit"] <= 0:
            raise ValueError(f"clahe: clip_limit must be positive, got {args['clip_limit']}")
        bins = args["bins"]
        if bins <= 0 or bins & (bins - 1):
            raise ValueError(f"clahe: bins must be a power of 2, got {bins}")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Equalize one image."""
        (image,) = inputs
        resolve_layout("clahe", sample.layouts[0], image.ndim, ("HWC",), {3: "HWC"})
        check_dtype("clahe", image, (np.uint8,))
        channels = image.shape[2]
        if channels not in (1, 3):
            raise ValueError(f"clahe: images with 1 or 3 channels are supported, got {channels}")
        return clahe(image, args["clip_limit"], args["tiles_x"], args["tiles_y"], args["luma_only"])
