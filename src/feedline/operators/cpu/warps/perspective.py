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
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype

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
    """Warp one ``HW``/``HWC`` image to ``size`` (height, width)."""
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
            raise ValueError(
                f"{_OP}: unsupported interp_type {InterpType(args['interp_type']).name}; "
                "expected INTERP_NN, INTERP_LINEAR or INTERP_CUBIC"
            )
        has_arg = len(args["matrix"] or ()) > 0 or "matrix" in self.ctx.tensor_args
        if self.ctx.num_inputs > 1 and has_arg:
            raise ValueError(
                f"{_OP}: the matrix input and the `matrix` argument must not be given together"
            )
        if self.ctx.num_inputs < 2 and not has_arg:
            raise ValueError(f"{_OP}: give the matrix as the `matrix` argument or a second input")

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Warp one image or sequence."""
        image = inputs[0]
        layout = sample.layouts[0]
        if not layout and image.ndim > 2:
            raise ValueError(f"{_OP}: a {image.ndim}-D input needs a layout to tell its channels")
        if layout and "C" in layout and not layout.endswith("C"):
            raise ValueError(f"{_OP}: the channel dimension must be the last one ({layout!r})")
        check_dtype(_OP, image, _TYPES)
        channels = image.shape[-1] if layout.endswith("C") else 1
        if channels > 4:
            raise ValueError(f"{_OP}: images with more than 4 channels are not supported")
        matrix = _matrix(inputs[1] if len(inputs) > 1 else args["matrix"], len(inputs) > 1)
        fill = _fill(args["fill_value"], channels if layout.endswith("C") else -1)
        frames = image if layout.startswith("F") else image[None]
        size = _size(args["size"], frames.shape[1:3])
        out = [
            warp_perspective(
                np.ascontiguousarray(frame), matrix, size, interp=args["interp_type"],
                border=args["border_mode"], fill=fill, inverse_map=args["inverse_map"],
                corner=args["pixel_origin"] == "corner",
            )
            for frame in frames
        ]  # fmt: skip
        return np.stack(out) if layout.startswith("F") else out[0]


def _matrix(value: Any, from_input: bool) -> np.ndarray:
    matrix = np.asarray(value)
    if from_input and (matrix.shape != (3, 3) or matrix.dtype != np.float32):
        raise ValueError(
            f"{_OP}: the matrix input must hold 3x3 float32 matrices, got {matrix.dtype} "
            f"{matrix.shape}"
        )
    if matrix.size != 9:
        raise ValueError(f"{_OP}: the matrix must have 9 values (3x3), got {matrix.size}")
    return matrix.astype(np.float32).reshape(3, 3)


def _fill(values: Any, channels: int) -> tuple[float, ...]:
    values = [float(v) for v in np.ravel(values if values is not None else ())]
    if len(values) > 1:
        if channels < 0:
            raise ValueError(f"{_OP}: only a scalar fill_value can be given without channels")
        if len(values) != channels:
            raise ValueError(
                f"{_OP}: fill_value has {len(values)} values but the images have {channels} "
                "channels"
            )
        return tuple(values) + (0.0,) * (4 - len(values))
    value = values[0] if values else 0.0
    return (value,) * 4


def _size(value: Any, default: tuple[int, ...]) -> tuple[int, int]:
    values = np.ravel(value if value is not None else ())
    if len(values) == 0:
        return int(default[0]), int(default[1])
    if len(values) != 2:
        raise ValueError(f"{_OP}: size must be (height, width), got {len(values)} values")
    # DALI rounds half away from zero (roundf) and keeps at least one pixel.
    height, width = (max(int(np.trunc(float(v) + np.copysign(0.5, float(v)))), 1) for v in values)
    return height, width
