"""``experimental.remap`` with OpenCV's ``remap`` (a constant 0 border, as DALI)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import InterpType
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype, resolve_layout

__all__ = ["RemapKernel", "remap"]

_OP = "experimental.remap"
_TYPES = (np.uint8, np.int16, np.uint16, np.float32)


def remap(
    image: np.ndarray,
    mapx: np.ndarray,
    mapy: np.ndarray,
    interp: InterpType = InterpType.INTERP_LINEAR,
    corner: bool = True,
) -> np.ndarray:
    """``image[mapy, mapx]`` for an ``HWC`` image and ``HW`` float32 maps, interpolated."""
    cv2 = import_cv2(_OP)
    flags = {
        InterpType.INTERP_NN: cv2.INTER_NEAREST,
        InterpType.INTERP_LINEAR: cv2.INTER_LINEAR,
        InterpType.INTERP_CUBIC: cv2.INTER_CUBIC,
    }[InterpType(interp)]
    if corner:
        mapx = mapx - np.float32(0.5)
        mapy = mapy - np.float32(0.5)
    out = cv2.remap(image, mapx, mapy, flags, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return out.reshape(mapx.shape + image.shape[2:])


class RemapKernel(SampleKernel):
    """Per-sample ``experimental.remap``."""

    def setup(self) -> None:
        """Check the interpolation type."""
        if self.ctx.args["interp"] not in (
            InterpType.INTERP_NN,
            InterpType.INTERP_LINEAR,
            InterpType.INTERP_CUBIC,
        ):
            raise ValueError(
                f"{_OP}: unsupported interp {InterpType(self.ctx.args['interp']).name}; "
                "expected INTERP_NN, INTERP_LINEAR or INTERP_CUBIC"
            )

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Remap one image or sequence."""
        image, mapx, mapy = inputs
        layout = resolve_layout(_OP, sample.layouts[0], image.ndim, ("HWC", "FHWC"),
                                {3: "HWC", 4: "FHWC"})  # fmt: skip
        check_dtype(_OP, image, _TYPES)
        if image.shape[-1] not in (1, 3):
            raise ValueError(f"{_OP}: 1- or 3-channel images are supported, got {image.shape}")
        for name, values in (("mapx", mapx), ("mapy", mapy)):
            check_dtype(_OP, values, (np.float32,), name)
        if mapx.shape != mapy.shape:
            raise ValueError(f"{_OP}: mapx {mapx.shape} and mapy {mapy.shape} differ in shape")
        sequence = layout.startswith("F")
        frames = image if sequence else image[None]
        maps_x, maps_y = (
            _frame_maps(mapx, sequence, len(frames)),
            _frame_maps(mapy, sequence, len(frames)),
        )
        corner = args["pixel_origin"] == "corner"
        out = [
            remap(np.ascontiguousarray(f), mx, my, args["interp"], corner)
            for f, mx, my in zip(frames, maps_x, maps_y, strict=True)
        ]
        return np.stack(out) if sequence else out[0]


def _frame_maps(values: np.ndarray, sequence: bool, count: int) -> list[np.ndarray]:
    maps = values
    if maps.ndim >= 3 and maps.shape[-1] == 1:
        maps = maps[..., 0]
    if maps.ndim == 2:
        return [np.ascontiguousarray(maps)] * count
    if sequence and maps.ndim == 3 and len(maps) == count:
        return [np.ascontiguousarray(m) for m in maps]
    raise ValueError(
        f"{_OP}: maps must be HW (or HWC with one channel), or one per frame; got {values.shape}"
    )
