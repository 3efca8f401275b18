"""The standard augmentations of AutoAugment (ImageNet policy), RandAugment and
TrivialAugmentWide, written with feedline operators.

Each is an :class:`~feedline.auto_aug.core._Augmentation`: called with the samples,
``magnitude_bin`` and ``num_magnitude_bins``, it computes its parameter as
``mag_to_param(magnitudes[magnitude_bin] * (-1) ** random_sign)`` with
``magnitudes = linspace(mag_range[0], mag_range[1], num_magnitude_bins)``. The ranges here are
examples; adjust one with its ``augmentation`` method, e.g.
``shear_x.augmentation(mag_range=(0, 0.5))``. The samples are ``uint8`` images (``HWC``) or
videos (``FHWC``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline import fn, types
from feedline.auto_aug.core import augmentation
from feedline.auto_aug.core._take import take
from feedline.core.graph.nodes import DataNode

_WHITE = 255


def warp_x_param(magnitude: float) -> list[float]:
    """A horizontal (x) 2D parameter of a shear or translation."""
    return [magnitude, 0]


def warp_y_param(magnitude: float) -> list[float]:
    """A vertical (y) 2D parameter of a shear or translation."""
    return [0, magnitude]


def _extent(shape: Any, axis: int) -> Any:
    """``shape[axis]`` of a per-sample shape batch or of a plain (height, width) sequence."""
    if isinstance(shape, DataNode):
        return take(shape, axis)
    return shape[axis]


def _warp(data: DataNode, matrix: DataNode, fill_value: Any, interp_type: Any) -> DataNode:
    return fn.warp_affine(
        data, matrix=matrix, fill_value=fill_value, interp_type=interp_type, inverse_map=False
    )


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_x_param)
def shear_x(data: DataNode, shear: DataNode, fill_value: Any = 128, interp_type: Any = None):
    """Shear along x by the magnitude."""
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_y_param)
def shear_y(data: DataNode, shear: DataNode, fill_value: Any = 128, interp_type: Any = None):
    """Shear along y by the magnitude."""
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_x_param)
def translate_x(
    data: DataNode, rel_offset: DataNode, shape: Any, fill_value: Any = 128, interp_type: Any = None
):
    """Shift along x by the magnitude times the width (``shape`` is the HWC shape)."""
    offset = rel_offset * _extent(shape, 1)
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(
    mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_x_param, name="translate_x"
)
def translate_x_no_shape(
    data: DataNode, offset: DataNode, fill_value: Any = 128, interp_type: Any = None
):
    """Shift along x by the magnitude, in pixels."""
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_y_param)
def translate_y(
    data: DataNode, rel_offset: DataNode, shape: Any, fill_value: Any = 128, interp_type: Any = None
):
    """Shift along y by the magnitude times the height (``shape`` is the HWC shape)."""
    offset = rel_offset * _extent(shape, 0)
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(
    mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_y_param, name="translate_y"
)
def translate_y_no_shape(
    data: DataNode, offset: DataNode, fill_value: Any = 128, interp_type: Any = None
):
    """Shift along y by the magnitude, in pixels."""
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0, 30), randomly_negate=True)
def rotate(
    data: DataNode,
    angle: DataNode,
    fill_value: Any = 128,
    interp_type: Any = None,
    rotate_keep_size: bool = True,
):
    """Rotate by the magnitude, in degrees."""
    return fn.rotate(
        data,
        angle=angle,
        fill_value=fill_value,
        interp_type=interp_type,
        keep_size=rotate_keep_size,
    )


def shift_enhance_range(magnitude: float) -> float:
    """``1 + magnitude``: enhance factors are neutral at 1, so a signed magnitude in ``[-1, 1]``
    becomes a factor in ``[0, 2]``."""
    return 1 + magnitude


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def brightness(data: DataNode, parameter: DataNode):
    """Scale the brightness by the factor (PIL's ``ImageEnhance.Brightness``)."""
    return fn.brightness(data, brightness=parameter)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def contrast(data: DataNode, parameter: DataNode):
    """Scale the distance from the mean luma by the factor (PIL's ``ImageEnhance.Contrast``).

    The centre is the image's mean of ``0.299 R + 0.587 G + 0.114 B`` (HWC or FHWC samples).
    """
    channel_means = fn.reductions.mean(data, axis_names="HW", keep_dims=True)
    luma = types.Constant(np.array([0.299, 0.587, 0.114], dtype=np.float32))
    center = fn.reductions.sum(channel_means * luma, axis_names="C", keep_dims=True)
    return fn.cast_like(center + (data - center) * parameter, data)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def color(data: DataNode, parameter: DataNode):
    """Scale the saturation by the factor (PIL's ``ImageEnhance.Color``)."""
    return fn.saturation(data, saturation=parameter)


def sharpness_kernel(magnitude: float) -> np.ndarray:
    """The 3x3 kernel blending the image with PIL's smoothing filter; ``magnitude`` in
    ``[-1, 1]`` (positive sharpens, negative blurs)."""
    smooth = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], dtype=np.float32) / 13
    identity_kernel = np.zeros((3, 3), dtype=np.float32)
    identity_kernel[1, 1] = 1
    return (1 + magnitude) * identity_kernel - magnitude * smooth


def sharpness_kernel_shifted(magnitude: float) -> np.ndarray:
    """:func:`sharpness_kernel` for an enhance factor in ``[0, 2]`` (1 is neutral)."""
    return sharpness_kernel(magnitude - 1)


@augmentation(
    mag_range=(0, 0.9), randomly_negate=True, mag_to_param=sharpness_kernel, param_device="auto"
)
def sharpness(data: DataNode, kernel: DataNode):
    """Sharpen or blur with the kernel (PIL's ``ImageEnhance.Sharpness``; PIL leaves the 1px
    border as the input, this filters it too)."""
    return fn.experimental.filter(data, kernel)


def poster_mask_uint8(magnitude: float) -> np.ndarray:
    """The ``uint8`` mask keeping the ``round(magnitude)`` highest bits, clamped to 1..8 bits
    (no bits would blank the image, so 0 keeps one bit as the RandAugment paper's code does)."""
    bits = int(np.clip(np.round(magnitude), 1, 8))
    return np.array(np.uint8(0xFF << (8 - bits) & 0xFF), dtype=np.uint8)


@augmentation(mag_range=(0, 4), mag_to_param=poster_mask_uint8, param_device="auto")
def posterize(data: DataNode, mask: DataNode):
    """Keep only the highest bits of each value."""
    return data & mask


@augmentation(mag_range=(256, 0), param_device="auto")
def solarize(data: DataNode, threshold: DataNode):
    """Invert the values at or above the threshold."""
    inverted = types.Constant(_WHITE, dtype=types.UINT8) - data
    below = data < threshold
    return below * data + (below ^ True) * inverted


def solarize_add_shift(shift: float) -> np.ndarray:
    """The ``uint8`` shift of :func:`solarize_add`; must be below 128."""
    if shift >= 128:
        raise Exception("The solarize_add augmentation accepts shifts from 0 to 128")
    return np.uint8(shift)


@augmentation(mag_range=(0, 110), param_device="auto", mag_to_param=solarize_add_shift)
def solarize_add(data: DataNode, shift: DataNode):
    """Add the shift to the values below 128."""
    below = data < types.Constant(128, dtype=types.UINT8)
    return below * (data + shift) + (below ^ True) * data


@augmentation
def invert(data: DataNode, _: Any):
    """``255 - value``."""
    return types.Constant(_WHITE, dtype=types.UINT8) - data


@augmentation
def equalize(data: DataNode, _: Any):
    """Histogram equalization per channel (OpenCV's formula, as ``fn.experimental.equalize``;
    PIL's lookup table differs slightly)."""
    return fn.experimental.equalize(data)


@augmentation
def auto_contrast(data: DataNode, _: Any):
    """Stretch each channel's range to 0..255; channels of one value stay as they are."""
    low = fn.reductions.min(data, axis_names="HW", keep_dims=True)
    high = fn.reductions.max(data, axis_names="HW", keep_dims=True)
    spread = high - low
    varies = spread > 0
    flat = varies ^ True
    divisor = spread * varies + types.Constant(_WHITE, dtype=types.UINT8) * flat
    return fn.cast_like((data - low * varies) * (_WHITE / divisor), data)


@augmentation
def identity(data: DataNode, _: Any):
    """The samples unchanged."""
    return data
