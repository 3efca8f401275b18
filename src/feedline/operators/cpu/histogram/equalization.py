"""``equalize`` and ``clahe``, as DALI's CPU operators compute them with OpenCV's
``equalizeHist`` and ``createCLAHE``.

``equalize`` runs the compiled kernel of :mod:`~feedline.operators.cpu.histogram.bindings`
(all channels of a sample in two passes, one call), which gives OpenCV's results bit for bit;
where the compiled library is unavailable it splits the channels, equalizes each with OpenCV
and merges them, as DALI does.

``clahe`` follows DALI's recipe (for RGB images with ``luma_only``: ``cvtColor`` to CIE Lab,
CLAHE of the lightness, back to RGB) in the compiled kernels of
:mod:`~feedline.operators.cpu.histogram.bindings`, which give OpenCV's conversions and
``createCLAHE(...).apply`` bit for bit in one call per image. Where the conversions do not
match the installed OpenCV, OpenCV converts and the kernel equalizes the lightness in place in
the Lab image; where the CLAHE kernel is unavailable (or does not match), OpenCV's CLAHE object
runs instead."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.operators.cpu.common.frames import split_images, to_planes
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype, resolve_layout
from feedline.operators.cpu.histogram.bindings import clahe_lab_u8, clahe_u8, equalize_u8

__all__ = ["ClaheKernel", "EqualizeKernel", "clahe", "equalize"]

_MAX_CHANNELS = 512
#: OpenCV's Python binding takes an ``(H, W, C)`` array as a C-channel image only up to this C.
_MAX_SPLIT_CHANNELS = 255


def equalize(planes: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Equalize each channel of each plane of a uint8 ``(planes, H, W, C)`` array (into
    ``out`` if given), as DALI does with OpenCV: ``equalizeHist`` of each channel alone."""
    out = np.empty_like(planes) if out is None else out
    if equalize_u8(planes, out):
        return out
    cv2 = import_cv2("equalize")
    for plane, target in zip(planes, out, strict=True):
        if plane.shape[2] == 1:
            cv2.equalizeHist(plane[:, :, 0], dst=target[:, :, 0])
        elif plane.shape[2] <= _MAX_SPLIT_CHANNELS:
            cv2.merge([cv2.equalizeHist(c) for c in cv2.split(plane)], dst=target)
        else:
            for c in range(plane.shape[2]):
                target[:, :, c] = cv2.equalizeHist(np.ascontiguousarray(plane[:, :, c]))
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
        target = sample.output(image.shape, image.dtype)
        equalize(planes, to_planes(target, split))
        return target


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
    image: np.ndarray,
    clip_limit: float,
    tiles_x: int,
    tiles_y: int,
    luma_only: bool,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """CLAHE of a uint8 ``HW`` or ``HWC`` (1 or 3 channels, RGB) image, into ``out`` if given."""
    cv2 = import_cv2("clahe")
    clip_limit = float(np.float32(clip_limit))
    out = np.empty_like(image) if out is None else out
    pixels = image.reshape(*image.shape[:2], -1)
    targets = out.reshape(pixels.shape)
    if pixels.shape[2] == 1 or not luma_only:
        if clahe_u8(pixels, targets, -1, clip_limit, tiles_x, tiles_y):
            return out
        engine = _CLAHE.get(clip_limit, tiles_x, tiles_y)
        if pixels.shape[2] == 1:
            engine.apply(image.reshape(image.shape[:2]), dst=out.reshape(image.shape[:2]))
        else:
            cv2.merge([engine.apply(c) for c in cv2.split(image)], dst=out)
        return out
    if clahe_lab_u8(image, out, clip_limit, tiles_x, tiles_y):
        return out
    lab = cv2.cvtColor(image, cv2.COLOR_RGB2Lab)
    if not clahe_u8(lab, lab, 0, clip_limit, tiles_x, tiles_y):
        engine = _CLAHE.get(clip_limit, tiles_x, tiles_y)
        cv2.insertChannel(engine.apply(cv2.extractChannel(lab, 0)), lab, 0)
    cv2.cvtColor(lab, cv2.COLOR_Lab2RGB, dst=out)
    return out


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
        out = sample.output(image.shape, image.dtype)
        return clahe(
            image, args["clip_limit"], args["tiles_x"], args["tiles_y"], args["luma_only"], out
        )
