"""``water`` and ``sphere``: per-pixel displacements sampled as DALI's CPU operators do.

Coordinates put pixel corners at whole numbers (pixel ``i`` covers ``[i, i + 1)``). Nearest
sampling takes pixel ``floor(p)``; linear sampling interpolates between pixel centres in
float32 and rounds halves away from zero. Sources outside the image give ``fill_value``. The
maps depend only on the image size and the static arguments, so each kernel keeps them per size.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import InterpType
from feedline.operators.cpu.common.opencv import import_cv2
from feedline.operators.cpu.common.tensors import check_dtype, resolve_layout

__all__ = [
    "SphereKernel",
    "WaterKernel",
    "displace",
    "prepare_maps",
    "sphere_map",
    "water_map",
]

_TYPES = (np.uint8, np.float32)
_Maps = tuple[np.ndarray, np.ndarray]


def water_map(height: int, width: int, args: Mapping[str, Any]) -> _Maps:
    """Source coordinates ``(x', y')`` of the ``water`` distortion, float32."""
    f32 = np.float32
    y = np.arange(height, dtype=f32)[:, None]
    x = np.arange(width, dtype=f32)[None, :]
    sx = np.sin(f32(args["freq_x"]) * y + f32(args["phase_x"]))
    sy = np.cos(f32(args["freq_y"]) * x + f32(args["phase_y"]))
    return x + f32(args["ampl_x"]) * sx, y + f32(args["ampl_y"]) * sy


def sphere_map(height: int, width: int) -> _Maps:
    """Source coordinates ``(x', y')`` of the ``sphere`` distortion, float32."""
    f32 = np.float32
    mid_x, mid_y = f32(width * 0.5), f32(height * 0.5)
    distance = f32(int(max(mid_x, mid_y)))
    dy = np.arange(height, dtype=f32)[:, None] + f32(0.5) - mid_y
    dx = np.arange(width, dtype=f32)[None, :] + f32(0.5) - mid_x
    radius = np.sqrt(dx * dx + dy * dy) / distance
    return mid_x + radius * dx, mid_y + radius * dy


def prepare_maps(maps: _Maps, interp: InterpType) -> tuple[np.ndarray, np.ndarray | None]:
    """``maps`` as OpenCV's ``remap`` takes them: whole-pixel int16 ``(x, y)`` pairs for
    nearest sampling, centre-origin float32 coordinates for linear sampling."""
    mx, my = np.broadcast_arrays(*maps)
    if interp == InterpType.INTERP_NN:
        limit = 32767
        xy = np.stack([np.floor(mx), np.floor(my)], axis=-1)
        return np.clip(xy, -1, limit).astype(np.int16), None
    half = np.float32(0.5)
    return np.ascontiguousarray(mx - half), np.ascontiguousarray(my - half)


def displace(
    image: np.ndarray,
    prepared: tuple[np.ndarray, np.ndarray | None],
    interp: InterpType,
    fill_value: float,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Sample an ``HWC`` image at the coordinates :func:`prepare_maps` made (into ``out``,
    when given, for nearest sampling)."""
    cv2 = import_cv2("water/sphere")
    if image.shape[2] > 4:
        planes = [displace(image[..., c : c + 1], prepared, interp, fill_value)
                  for c in range(image.shape[2])]  # fmt: skip
        return np.concatenate(planes, axis=-1)
    fill = (float(fill_value),) * 4
    first, second = prepared
    if interp == InterpType.INTERP_NN:
        if out is not None:
            cv2.remap(image, first, None, cv2.INTER_NEAREST, dst=out.reshape(image.shape),
                      borderMode=cv2.BORDER_CONSTANT, borderValue=fill)  # fmt: skip
            return out
        result = cv2.remap(image, first, None, cv2.INTER_NEAREST,
                           borderMode=cv2.BORDER_CONSTANT, borderValue=fill)  # fmt: skip
        return result.reshape(image.shape)
    work = image if image.dtype == np.float32 else image.astype(np.float32)
    out = cv2.remap(work, first, second, cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_CONSTANT, borderValue=fill)  # fmt: skip
    out = out.reshape(image.shape)
    if image.dtype == np.uint8:
        out = np.clip(np.floor(out + np.float32(0.5)), 0, 255).astype(np.uint8)
    return out


class _DisplacementKernel(SampleKernel):
    """Shared by ``water`` and ``sphere``: argument checks, the mask and the map cache."""

    def setup(self) -> None:
        """Check the interpolation type and start the map cache."""
        interp = self.ctx.args["interp_type"]
        if interp not in (InterpType.INTERP_NN, InterpType.INTERP_LINEAR):
            raise ValueError(
                f"{self.ctx.schema.name}: unsupported interpolation type "
                f"{InterpType(interp).name}; only INTERP_NN and INTERP_LINEAR are supported"
            )
        self._maps: dict[tuple[int, int], tuple[np.ndarray, np.ndarray | None]] = {}
        self._lock = threading.Lock()

    def maps(self, height: int, width: int) -> _Maps:
        """The source coordinates for an image of this size."""
        raise NotImplementedError

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Distort one image (or pass it through when its mask is 0)."""
        op = self.ctx.schema.name
        (image,) = inputs
        resolve_layout(op, sample.layouts[0], image.ndim, ("HWC",), {3: "HWC"})
        check_dtype(op, image, _TYPES)
        if not int(np.asarray(args["mask"]).reshape(())):
            return image
        height, width = image.shape[:2]
        with self._lock:
            maps = self._maps.get((height, width))
        if maps is None:
            maps = prepare_maps(self.maps(height, width), self.ctx.args["interp_type"])
            with self._lock:
                self._maps[height, width] = maps
        out = None
        if args["interp_type"] == InterpType.INTERP_NN and image.shape[2] <= 4:
            out = sample.output(image.shape, image.dtype)
        return displace(image, maps, args["interp_type"], args["fill_value"], out)


class WaterKernel(_DisplacementKernel):
    """Per-sample ``water``."""

    def maps(self, height: int, width: int) -> _Maps:
        """The ``water`` coordinates for this size."""
        return water_map(height, width, self.ctx.args)


class SphereKernel(_DisplacementKernel):
    """Per-sample ``sphere``."""

    def maps(self, height: int, width: int) -> _Maps:
        """The ``sphere`` coordinates for this size."""
        return sphere_map(height, width)
