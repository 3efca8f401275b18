"""``color_space_conversion`` between RGB, BGR, GRAY and YCbCr (uint8, as in DALI).

* RGB→GRAY uses DALI's 15-bit fixed point ``(9798 R + 19235 G + 3735 B + 2**14) >> 15``
  (BT.601 luma 0.299/0.587/0.114), bit-exact with DALI.
* YCbCr is BT.601 "studio swing" (Y in [16, 235], Cb/Cr in [16, 240]), as in DALI::

      Y  =  16 + ( 65.481 R + 128.553 G +  24.966 B) / 255
      Cb = 128 + (-37.797 R -  74.203 G + 112.0   B) / 255
      Cr = 128 + (112.0   R -  93.786 G -  18.214 B) / 255

  and its exact inverse; results are rounded to nearest and saturated (within one level of DALI).
* GRAY→colour replicates the channel; GRAY↔YCbCr scales between [0, 255] and [16, 235].
* A conversion to the same space returns a copy (DALI rejects it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import ImageType
from feedline.operators.cpu.color.adjust import channel_axis
from feedline.operators.cpu.common.tensors import check_dtype, check_not_empty, saturate_cast

__all__ = ["ColorSpaceConversionKernel", "convert_color"]

_RGB2YCBCR = (
    np.array([[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0], [112.0, -93.786, -18.214]])
    / 255.0
)
_YCBCR_OFFSET = np.array([16.0, 128.0, 128.0])
_YCBCR2RGB = np.linalg.inv(_RGB2YCBCR)
_GRAY_WEIGHTS = np.array([9798, 19235, 3735], dtype=np.int32)
_CHANNELS = {ImageType.RGB: 3, ImageType.BGR: 3, ImageType.YCbCr: 3, ImageType.GRAY: 1}


def _rgb_to_gray(rgb: np.ndarray) -> np.ndarray:
    total = rgb.astype(np.int32) @ _GRAY_WEIGHTS + (1 << 14)
    return (total >> 15).astype(np.uint8)[..., None]


def _rgb_to_ycbcr(rgb: np.ndarray) -> np.ndarray:
    return saturate_cast(
        rgb.astype(np.float32) @ _RGB2YCBCR.T.astype(np.float32) + _YCBCR_OFFSET.astype(np.float32),
        np.dtype(np.uint8),
    )


def _ycbcr_to_rgb(ycbcr: np.ndarray) -> np.ndarray:
    centred = ycbcr.astype(np.float32) - _YCBCR_OFFSET.astype(np.float32)
    return saturate_cast(centred @ _YCBCR2RGB.T.astype(np.float32), np.dtype(np.uint8))


def _gray_to_ycbcr(gray: np.ndarray) -> np.ndarray:
    luma = saturate_cast(gray.astype(np.float32) * np.float32(219 / 255) + 16, np.dtype(np.uint8))
    out = np.full((*gray.shape[:-1], 3), 128, np.uint8)
    out[..., :1] = luma
    return out


def _ycbcr_to_gray(ycbcr: np.ndarray) -> np.ndarray:
    luma = (ycbcr[..., :1].astype(np.float32) - 16) * np.float32(255 / 219)
    return saturate_cast(luma, np.dtype(np.uint8))


def convert_color(image: np.ndarray, source: ImageType, target: ImageType) -> np.ndarray:
    """Convert a channel-last uint8 ``image`` from ``source`` to ``target`` colour space."""
    if source == target:
        return image.copy()
    if source == ImageType.BGR:
        return convert_color(image[..., ::-1], ImageType.RGB, target)
    if target == ImageType.BGR:
        return np.ascontiguousarray(convert_color(image, source, ImageType.RGB)[..., ::-1])
    if source == ImageType.RGB:
        if target == ImageType.GRAY:
            return _rgb_to_gray(image)
        return _rgb_to_ycbcr(image)
    if source == ImageType.GRAY:
        if target == ImageType.RGB:
            return np.repeat(image, 3, axis=-1)
        return _gray_to_ycbcr(image)
    if target == ImageType.RGB:
        return _ycbcr_to_rgb(image)
    return _ycbcr_to_gray(image)


class ColorSpaceConversionKernel(SampleKernel):
    """Per-sample ``color_space_conversion`` of uint8 images (channel axis from the layout)."""

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Convert one image."""
        (image,) = inputs
        op = "color_space_conversion"
        source, target = ImageType(args["image_type"]), ImageType(args["output_type"])
        for name, value in (("image_type", source), ("output_type", target)):
            if value not in _CHANNELS:
                raise ValueError(
                    f"{op}: argument {name!r} = {value.name} is not a colour space; expected "
                    "RGB, BGR, GRAY or YCbCr"
                )
        check_not_empty(op, image)
        check_dtype(op, image, (np.uint8,))
        axis = channel_axis(op, sample.layouts[0], image)
        if image.shape[axis] != _CHANNELS[source]:
            raise ValueError(
                f"{op}: {source.name} input needs {_CHANNELS[source]} channel(s), got "
                f"{image.shape[axis]} (shape {image.shape}, layout {sample.layouts[0]!r})"
            )
        moved = np.moveaxis(image, axis, -1)
        return np.ascontiguousarray(np.moveaxis(convert_color(moved, source, target), -1, axis))
