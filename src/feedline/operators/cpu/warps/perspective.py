"""``experimental.warp_perspective`` with OpenCV's ``warpPerspective``, as DALI's CPU operator.

For ``pixel_origin="corner"`` the matrix ``M`` becomes ``T(-0.5) @ (M @ T(0.5))`` in float32
(``T``: a translation), which moves OpenCV's pixel-centre origin to the corner.
"""

from __future__ import annotations

from collections.abc import Mapping
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

__all__ = ["WarpPerspectiveKernel", "corner_to_center", "warp_perspective"]

_OP = "experimental.warp_perspective"
_TYPES = (np.uint8, np.int16, np.uint16, np.float32)
_SHIFT = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]], np.float32)
_SHIFT_BACK = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1]], np.float32)


def corner_to_center(matrix: np.ndarray) -> np.ndarray:
    """A corner-origin matrix in OpenCV's centre-origin convention (float32 arithmetic)."""
    return _SHIFT_BACK @ (matrix.astype(np.float32) @ _SHIFT)


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
    cv2 = import_cv2(_OP)
    flags = {
        InterpType.INTERP_NN: cv2.INTER_NEAREST,
        InterpType.INTERP_LINEAR: cv2.INTER_LINEAR,
        InterpType.INTERP_CUBIC: cv2.INTER_CUBIC,
    }[InterpType(interp)]
    if inverse_map:
        flags |= cv2.WARP_INVERSE_MAP
    borders = {
        "constant": cv2.BORDER_CONSTANT,
        "replicate": cv2.BORDER_REPLICATE,
        "reflect": cv2.BORDER_REFLECT,
        "reflect_101": cv2.BORDER_REFLECT_101,
        "wrap": cv2.BORDER_WRAP,
    }
    matrix = np.asarray(matrix, np.float32).reshape(3, 3)
    if corner:
        matrix = corner_to_center(matrix)
    out = cv2.warpPerspective(
        image, matrix, (size[1], size[0]), flags=flags, borderMode=borders[border],
        borderValue=tuple(fill),
    )  # fmt: skip
    return out.reshape(size + image.shape[2:])


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
        has_arg = len(args["matrix"] or ()) > 0 or "matrix" in self.ctx.tensor_args
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
        matrix = _matrix(inputs[1] if len(inputs) > 1 else args["matrix"], len(inputs) > 1)
        fill = _fill(args["fill_value"], channels)
        size = _size(args["size"], planes.shape[1:3])
        out = [
            warp_perspective(
                plane, matrix, size, interp=args["interp_type"], border=args["border_mode"],
                fill=fill, inverse_map=args["inverse_map"],
                corner=args["pixel_origin"] == "corner",
            )
            for plane in planes
        ]  # fmt: skip
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
        raise ValueError(
            f'{_OP}: Argument "matrix" expected shape 3 x 3 but got {matrix.size} values, which '
            "can't be interpreted as the expected shape."
        )
    return matrix.astype(np.float32).reshape(3, 3)


def _fill(values: Any, channels: int) -> tuple[float, ...]:
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


def _size(value: Any, default: tuple[int, ...]) -> tuple[int, int]:
    values = np.ravel(value if value is not None else ())
    if len(values) == 0:
        return int(default[0]), int(default[1])
    if len(values) != 2:
        raise ValueError(f'{_OP}: Argument "size" expected shape 2 but got {len(values)} values')
    # DALI rounds half away from zero (roundf) and keeps at least one pixel.
    height, width = (max(int(np.trunc(float(v) + np.copysign(0.5, float(v)))), 1) for v in values)
    return height, width
