"""``experimental.warp_perspective`` with OpenCV's ``warpPerspective``, as DALI's CPU operator.

uint8 images of 1 or 3 channels with linear interpolation go through the compiled kernel of
:mod:`feedline.operators.cpu.warps.bindings` instead, which gives OpenCV's pixels bit for bit
in less time (OpenCV where the kernel is unavailable).

For ``pixel_origin="corner"`` the matrix ``M`` becomes ``T(-0.5) @ (M @ T(0.5))`` in float32
(``T``: a translation), which moves OpenCV's pixel-centre origin to the corner.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import InterpType
from feedline.operators.cpu.common.errors import ArgumentError
from feedline.operators.cpu.common.frames import (
    from_planes,
    split_images,
    stack_planes,
    to_planes,
)
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.warps.bindings import warp_perspective_u8

__all__ = [
    "WarpPerspectiveKernel",
    "corner_to_center",
    "opencv_border",
    "opencv_flags",
    "opencv_matrix",
    "warp_perspective",
]

_OP = "experimental.warp_perspective"
_TYPES = (np.uint8, np.int16, np.uint16, np.float32)
_SHIFT = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]], np.float32)
_SHIFT_BACK = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1]], np.float32)


def corner_to_center(matrix: np.ndarray) -> np.ndarray:
    """A corner-origin matrix in OpenCV's centre-origin convention (float32 arithmetic)."""
    return _SHIFT_BACK @ (matrix.astype(np.float32) @ _SHIFT)


def opencv_flags(interp: InterpType, inverse_map: bool) -> int:
    """``warpPerspective``'s flags for an interpolation type and mapping direction."""
    cv2 = import_cv2(_OP)
    flags = {
        InterpType.INTERP_NN: cv2.INTER_NEAREST,
        InterpType.INTERP_LINEAR: cv2.INTER_LINEAR,
        InterpType.INTERP_CUBIC: cv2.INTER_CUBIC,
    }[InterpType(interp)]
    return flags | cv2.WARP_INVERSE_MAP if inverse_map else flags


def opencv_border(border: str) -> int:
    """OpenCV's constant for a ``border_mode`` name."""
    cv2 = import_cv2(_OP)
    return {
        "constant": cv2.BORDER_CONSTANT,
        "replicate": cv2.BORDER_REPLICATE,
        "reflect": cv2.BORDER_REFLECT,
        "reflect_101": cv2.BORDER_REFLECT_101,
        "wrap": cv2.BORDER_WRAP,
    }[border]


def opencv_matrix(matrix: Any, corner: bool) -> np.ndarray:
    """A 3x3 float32 matrix as ``warpPerspective`` takes it (moved to the corner origin)."""
    matrix = np.asarray(matrix, np.float32).reshape(3, 3)
    return corner_to_center(matrix) if corner else matrix


def warp_perspective(
    image: np.ndarray,
    matrix: np.ndarray,
    size: tuple[int, int],
    *,
    interp: InterpType = InterpType.INTERP_LINEAR,
    border: str = "constant",
    fill: tuple[float, ...] = (0.0,) * 4,
    inverse_map: bool = True,
    corner: bool = True,
) -> np.ndarray:
    """Warp one ``HWC`` image (``HW`` also) to ``size`` (height, width)."""
    flags = opencv_flags(interp, inverse_map)
    return _warp(image, opencv_matrix(matrix, corner), size, flags, opencv_border(border), fill)


def _warp(
    image: np.ndarray,
    matrix: np.ndarray,
    size: tuple[int, int],
    flags: int,
    border: int,
    fill: tuple[float, ...],
    dst: np.ndarray | None = None,
) -> np.ndarray:
    """Warp one plane, into ``dst`` when given (of the output's shape): with the compiled
    kernel where it reproduces OpenCV (uint8 of 1 or 3 channels, linear), else with OpenCV."""
    cv2 = import_cv2(_OP)
    shape = size + image.shape[2:]
    out = np.empty(shape, image.dtype) if dst is None else dst.reshape(shape)
    linear = flags & ~cv2.WARP_INVERSE_MAP == cv2.INTER_LINEAR
    inverse = bool(flags & cv2.WARP_INVERSE_MAP)
    if not (linear and warp_perspective_u8(image, matrix, inverse, border, fill, out)):
        view = out.reshape(size) if image.ndim == 3 and image.shape[2] == 1 else out
        cv2.warpPerspective(image, matrix, (size[1], size[0]), dst=view, flags=flags,
                            borderMode=border, borderValue=fill)  # fmt: skip
    return out if dst is None else dst


class WarpPerspectiveKernel(SampleKernel):
    """Per-sample ``experimental.warp_perspective``."""

    def setup(self) -> None:
        """Check the interpolation type and that the matrix comes from one place only."""
        args = self.ctx.args
        if args["interp_type"] not in (
            InterpType.INTERP_NN,
            InterpType.INTERP_LINEAR,
            InterpType.INTERP_CUBIC,
        ):
            raise ArgumentError(
                f"{_OP}: Unknown interpolation type: {int(args['interp_type'])} (expected "
                "INTERP_NN, INTERP_LINEAR or INTERP_CUBIC)"
            )
        has_arg = len(args.get("matrix") or ()) > 0 or "matrix" in self.ctx.tensor_args
        if self.ctx.num_inputs > 1 and has_arg:
            raise ArgumentError(
                f"{_OP}: Matrix input and `matrix` argument should not be provided at the same "
                "time."
            )
        if self.ctx.num_inputs < 2 and not has_arg:
            raise ArgumentError(
                f'{_OP}: Argument "matrix" expected shape 3 x 3 but got 0 values, which can\'t '
                "be interpreted as the expected shape (give the `matrix` argument or a second "
                "input)."
            )
        self._corner = args["pixel_origin"] == "corner"
        self._flags = opencv_flags(args["interp_type"], args["inverse_map"])
        self._border = opencv_border(args["border_mode"])
        self._static_matrix = None
        if self.ctx.num_inputs < 2 and "matrix" not in self.ctx.tensor_args:
            self._static_matrix = opencv_matrix(_matrix(args["matrix"], False), self._corner)

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Warp one image or sequence."""
        image = inputs[0]
        split = split_images(_OP, sample.layouts[0], image.ndim)
        if image.dtype not in _TYPES:
            raise TypeError(
                f"{_OP}: The operator accepts the following input types: uint8, int16, uint16, "
                f"float (got {image.dtype})."
            )
        planes = to_planes(image, split)
        channels = planes.shape[-1] if split.channel_last else -1
        if channels > 4:
            raise ValueError(f"{_OP}: Images with more than 4 channels are not supported.")
        matrix = self._static_matrix
        if matrix is None:
            given = inputs[1] if len(inputs) > 1 else args["matrix"]
            matrix = opencv_matrix(_matrix(given, len(inputs) > 1), self._corner)
        fill = _fill(args["fill_value"], channels)
        size = _size(args["size"], planes.shape[1:3])
        if len(planes) == 1:  # straight into the batch's buffer
            trailing = planes.shape[3:] if split.channel_last else ()
            target = sample.output((*image.shape[: split.leading], *size, *trailing), image.dtype)
            _warp(planes[0], matrix, size, self._flags, self._border, fill, target)
            return target
        out = [_warp(plane, matrix, size, self._flags, self._border, fill) for plane in planes]
        return from_planes(stack_planes(out), split, image.shape)


def _matrix(value: Any, from_input: bool) -> np.ndarray:
    matrix = np.asarray(value)
    if from_input:
        if matrix.shape != (3, 3):
            raise ValueError(
                f"{_OP}: Expected a uniform list of 3x3 matrices. Instead got data with shape: "
                f"{matrix.shape}"
            )
        if matrix.dtype != np.float32:
            raise TypeError(f"{_OP}: Transformation matrix can be provided only as float32 values.")
    if matrix.size != 9:
        raise ArgumentError(
            f'{_OP}: Argument "matrix" expected shape 3 x 3 but got {matrix.size} values, which '
            "can't be interpreted as the expected shape."
        )
    return matrix.astype(np.float32).reshape(3, 3)


def _fill(values: Any, channels: int) -> tuple[float, ...]:
    if isinstance(values, tuple):  # a static argument: the same for every sample
        return _static_fill(values, channels)
    return _fill_values(values, channels)


def _fill_values(values: Any, channels: int) -> tuple[float, ...]:
    values = [float(v) for v in np.ravel(values if values is not None else ())]
    if len(values) > 1:
        if channels < 0:
            raise ValueError(
                f"{_OP}: Only scalar fill_value can be provided when processing data in planar "
                "layout."
            )
        if len(values) != channels:
            raise ValueError(
                f"{_OP}: Number of values provided as a fill_value should match the number of "
                f"channels. Number of channels: {channels}. Number of values provided: "
                f"{len(values)}."
            )
        return tuple(values) + (0.0,) * (4 - len(values))
    value = values[0] if values else 0.0
    return (value,) * 4


_static_fill = lru_cache(maxsize=64)(_fill_values)


def _size(value: Any, default: tuple[int, ...]) -> tuple[int, int]:
    if isinstance(value, tuple):  # a static argument: the same for every sample
        return _static_size(value, default)
    return _size_values(value, default)


def _size_values(value: Any, default: tuple[int, ...]) -> tuple[int, int]:
    values = np.ravel(value if value is not None else ())
    if len(values) == 0:
        return int(default[0]), int(default[1])
    if len(values) != 2:
        raise ValueError(f'{_OP}: Argument "size" expected shape 2 but got {len(values)} values')
    # DALI rounds half away from zero (roundf) and keeps at least one pixel.
    height, width = (max(int(np.trunc(float(v) + np.copysign(0.5, float(v)))), 1) for v in values)
    return height, width


_static_size = lru_cache(maxsize=64)(_size_values)
