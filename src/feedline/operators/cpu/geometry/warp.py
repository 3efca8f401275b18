"""``warp_affine`` and ``rotate``: affine resampling of images with DALI's conventions.

Coordinates are continuous with ``(0, 0)`` at the top-left corner of the first pixel, so pixel
``(x, y)`` has its centre at ``(x + 0.5, y + 0.5)``. An output pixel takes the input value at
``M @ (x + 0.5, y + 0.5, 1)`` (``M`` maps destination to source): the nearest neighbour is the
pixel containing that point, linear interpolation blends the four pixels whose centres surround
it. Points outside the input take ``fill_value`` or, without one, the nearest border pixel.

Linear warps of uint8/int16 images use OpenCV's ``warpAffine`` when ``cv2`` is importable (its
fixed-point weights differ from the float32 NumPy path by at most one level on a few pixels);
everything else, and everything without OpenCV, runs in NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from feedline.core.kernel import SampleContext, SampleKernel
from feedline.core.types import InterpType
from feedline.operators.cpu.common.frames import check_frame_counts, frame_value, per_frame_args
from feedline.operators.cpu.common.tensors import (
    check_dtype,
    output_dtype,
    resolve_layout,
    saturate_cast,
)
from feedline.operators.cpu.geometry.volumes import warp_volume

__all__ = [
    "WARP_DEFAULTS",
    "WARP_LAYOUTS",
    "WARP_TYPES",
    "WarpAffineKernel",
    "check_interp",
    "check_warp_input",
    "image_size",
    "rotate_matrix",
    "rotated_size",
    "size_arg",
    "warp_affine",
]

WARP_LAYOUTS = ("HWC", "FHWC", "HW", "CHW")
WARP_DEFAULTS = {2: "HW", 3: "HWC", 4: "FHWC"}
WARP_TYPES = (np.uint8, np.int16, np.int32, np.float32)
_VOLUME_LAYOUTS = ("DHWC", "FDHWC")
#: ``warp_affine``'s arguments that may be given per frame (``fn.per_frame``).
_PER_FRAME = ("matrix", "size")
_CV2_TYPES = (np.dtype(np.uint8), np.dtype(np.int16))


def _load_cv2() -> Any:
    try:
        import cv2
    except ImportError:
        return None
    return cv2


_cv2 = _load_cv2()


def _to_fhwc(image: np.ndarray, layout: str) -> np.ndarray:
    if layout == "HW":
        return image[None, :, :, None]
    if layout == "CHW":
        return image.transpose(1, 2, 0)[None]
    if layout == "HWC":
        return image[None]
    return image


def _from_fhwc(frames: np.ndarray, layout: str) -> np.ndarray:
    if layout == "HW":
        return frames[0, :, :, 0]
    if layout == "CHW":
        return np.ascontiguousarray(frames[0].transpose(2, 0, 1))
    if layout == "HWC":
        return frames[0]
    return frames


def _source_coords(matrix: np.ndarray, out_size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Source ``(x, y)`` (float32, shape ``out_size``) of every output pixel centre."""
    out_h, out_w = out_size
    xs = np.arange(out_w, dtype=np.float64) + 0.5
    ys = np.arange(out_h, dtype=np.float64) + 0.5
    m = matrix
    src_x = (m[0, 1] * ys + m[0, 2]).astype(np.float32)[:, None] + (m[0, 0] * xs).astype(np.float32)
    src_y = (m[1, 1] * ys + m[1, 2]).astype(np.float32)[:, None] + (m[1, 0] * xs).astype(np.float32)
    return src_x.ravel(), src_y.ravel()


def _lerp_frame(
    planes: np.ndarray,
    width: int,
    x: tuple[np.ndarray, np.ndarray],
    y: tuple[np.ndarray, np.ndarray],
    ax: np.ndarray,
    ay: np.ndarray,
) -> np.ndarray:
    """Bilinear blend (float32, ``(C, N)``) of taps ``x``/``y`` (indices inside the frame)."""
    row0, row1 = y[0] * width, y[1] * width
    v00 = np.take(planes, row0 + x[0], axis=1).astype(np.float32)
    v01 = np.take(planes, row0 + x[1], axis=1).astype(np.float32)
    v10 = np.take(planes, row1 + x[0], axis=1).astype(np.float32)
    v11 = np.take(planes, row1 + x[1], axis=1).astype(np.float32)
    v01 -= v00
    v01 *= ax
    v00 += v01
    v11 -= v10
    v11 *= ax
    v10 += v11
    v10 -= v00
    v10 *= ay
    v00 += v10
    return v00


def _warp_frame_linear(
    frame: np.ndarray, src_x: np.ndarray, src_y: np.ndarray, fill_value: float | None
) -> np.ndarray:
    """Bilinear resampling of one HWC frame; returns float32 ``(C, N)``."""
    h, w, c = frame.shape
    planes = np.ascontiguousarray(frame.transpose(2, 0, 1)).reshape(c, h * w)
    fx = src_x - np.float32(0.5)
    fy = src_y - np.float32(0.5)
    # far-away points behave like the nearest border (clamp) or like any outside point (fill)
    low, high_x, high_y = (0, w - 1, h - 1) if fill_value is None else (-2, w + 1, h + 1)
    np.clip(fx, low, high_x, out=fx)
    np.clip(fy, low, high_y, out=fy)
    x0f = np.floor(fx)
    y0f = np.floor(fy)
    ax = fx - x0f
    ay = fy - y0f
    x0 = x0f.astype(np.intp)
    y0 = y0f.astype(np.intp)
    x1 = x0 + 1
    y1 = y0 + 1
    if fill_value is None:
        np.minimum(x1, w - 1, out=x1)
        np.minimum(y1, h - 1, out=y1)
        return _lerp_frame(planes, w, (x0, x1), (y0, y1), ax, ay)
    border = (x0 < 0) | (y0 < 0) | (x1 >= w) | (y1 >= h)
    clamped_x = (np.clip(x0, 0, w - 1), np.clip(x1, 0, w - 1))
    clamped_y = (np.clip(y0, 0, h - 1), np.clip(y1, 0, h - 1))
    out = _lerp_frame(planes, w, clamped_x, clamped_y, ax, ay)
    if border.any():
        sel = np.nonzero(border)[0]
        fill = np.float32(fill_value)
        taps = []
        for ys, xs in ((y0, x0), (y0, x1), (y1, x0), (y1, x1)):
            yy, xx = ys[sel], xs[sel]
            ok = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            index = np.clip(yy, 0, h - 1) * w + np.clip(xx, 0, w - 1)
            taps.append(np.where(ok, np.take(planes, index, axis=1).astype(np.float32), fill))
        bx, by = ax[sel], ay[sel]
        top = taps[0] + (taps[1] - taps[0]) * bx
        bottom = taps[2] + (taps[3] - taps[2]) * bx
        out[:, sel] = top + (bottom - top) * by
    return out


def _warp_frame_nearest(
    frame: np.ndarray, src_x: np.ndarray, src_y: np.ndarray, fill_value: float | None
) -> np.ndarray:
    """Nearest-neighbour resampling of one HWC frame; returns ``(N, C)``."""
    h, w, _ = frame.shape
    ix = np.floor(np.clip(src_x, -1, w)).astype(np.intp)
    iy = np.floor(np.clip(src_y, -1, h)).astype(np.intp)
    index = np.clip(iy, 0, h - 1) * w + np.clip(ix, 0, w - 1)
    values = np.take(frame.reshape(h * w, -1), index, axis=0)
    if fill_value is None:
        return values
    inside = ((ix >= 0) & (ix < w) & (iy >= 0) & (iy < h))[:, None]
    return np.where(inside, values.astype(np.float32), np.float32(fill_value))


def _warp_frame_cv2(
    frame: np.ndarray, matrix: np.ndarray, out_size: tuple[int, int], fill_value: float | None
) -> np.ndarray:
    """Bilinear warp of one HWC frame with OpenCV (pixel centres moved to integers)."""
    cv2 = _cv2
    shifted = matrix.copy()
    shifted[:, 2] = matrix[:, :2] @ (0.5, 0.5) + matrix[:, 2] - 0.5
    border = cv2.BORDER_REPLICATE if fill_value is None else cv2.BORDER_CONSTANT
    fill = 0.0 if fill_value is None else float(fill_value)
    out = cv2.warpAffine(
        np.ascontiguousarray(frame),
        shifted,
        (out_size[1], out_size[0]),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
        borderMode=border,
        borderValue=(fill,) * 4,
    )
    return out.reshape(out_size[0] * out_size[1], frame.shape[2])


def _can_use_cv2(
    frames: np.ndarray, interp: InterpType, fill_value: float | None, out_type: np.dtype
) -> bool:
    if _cv2 is None or interp != InterpType.INTERP_LINEAR or frames.shape[-1] > 4:
        return False
    if frames.dtype not in _CV2_TYPES or out_type != frames.dtype:
        return False
    if fill_value is None:
        return True
    low, high = np.iinfo(frames.dtype).min, np.iinfo(frames.dtype).max
    return float(fill_value).is_integer() and low <= fill_value <= high


def warp_affine(
    image: np.ndarray,
    layout: str,
    matrix: np.ndarray,
    out_size: tuple[int, int],
    interp: InterpType = InterpType.INTERP_LINEAR,
    fill_value: float | None = None,
    dtype: np.dtype | None = None,
) -> np.ndarray:
    """Resample ``image`` through the destination-to-source affine ``matrix`` (2x3, x/y order).

    Args:
        image: HWC, FHWC, HW or CHW data (every frame gets the same transform).
        layout: the layout of ``image``.
        matrix: maps output ``(x, y, 1)`` to input ``(x, y)``, coordinates as in the module doc.
        out_size: output ``(height, width)``.
        interp: ``INTERP_NN`` or ``INTERP_LINEAR``.
        fill_value: value outside the input; None clamps to the border.
        dtype: output type (default: the input's); integers are rounded and saturated.
    """
    frames = _to_fhwc(image, layout)
    out_h, out_w = out_size
    out_type = np.dtype(dtype) if dtype is not None else image.dtype
    if frames.size == 0:  # nothing to sample from: the fill value (or zeros), as DALI gives
        blank = np.full((frames.shape[0], out_h, out_w, frames.shape[3]), fill_value or 0)
        return _from_fhwc(saturate_cast(blank, out_type), layout)
    matrix = np.asarray(matrix, dtype=np.float64).reshape(2, 3)
    use_cv2 = _can_use_cv2(frames, interp, fill_value, out_type)
    if not use_cv2:
        src_x, src_y = _source_coords(matrix, out_size)
    results = []
    for frame in frames:
        if use_cv2:
            values = _warp_frame_cv2(frame, matrix, out_size, fill_value)
        elif interp == InterpType.INTERP_NN:
            values = _warp_frame_nearest(frame, src_x, src_y, fill_value)
        else:
            values = _warp_frame_linear(frame, src_x, src_y, fill_value).T
        if values.dtype != out_type:
            values = saturate_cast(values, out_type)
        results.append(values.reshape(out_h, out_w, -1))
    return _from_fhwc(np.stack(results), layout)


def rotated_size(height: int, width: int, angle: float, parity: bool = True) -> tuple[int, int]:
    """DALI's canvas for ``rotate`` without ``size``/``keep_size``.

    The rotated bounding box is rounded up (ignoring overshoots below 0.01 px) and then, with
    ``parity``, grown by one pixel where needed so that each output extent has the parity of the
    input extent it is mostly aligned with; this keeps the rotation centre on a pixel centre or
    corner as in the input.
    """
    radians = np.float32(angle) * np.float32(math.pi / 180)
    cos = abs(float(np.cos(radians)))
    sin = abs(float(np.sin(radians)))
    out_w = math.ceil(width * cos + height * sin - 0.01)
    out_h = math.ceil(width * sin + height * cos - 0.01)
    if not parity:
        return out_h, out_w
    ref_h, ref_w = (height, width) if cos > sin else (width, height)
    out_h += (out_h - ref_h) % 2
    out_w += (out_w - ref_w) % 2
    return out_h, out_w


def rotate_matrix(angle: float, in_size: tuple[int, int], out_size: tuple[int, int]) -> np.ndarray:
    """Destination-to-source matrix rotating by ``angle`` degrees counter-clockwise on screen.

    The centre of the output canvas maps to the centre of the input image.
    """
    radians = math.radians(angle)
    cos, sin = math.cos(radians), math.sin(radians)
    in_h, in_w = in_size
    out_h, out_w = out_size
    cx, cy = out_w / 2, out_h / 2
    return np.array(
        [
            [cos, -sin, in_w / 2 - cos * cx + sin * cy],
            [sin, cos, in_h / 2 - sin * cx - cos * cy],
        ]
    )


def check_interp(op: str, interp: InterpType) -> None:
    if interp not in (InterpType.INTERP_NN, InterpType.INTERP_LINEAR):
        raise ValueError(
            f"{op}: argument 'interp_type' = {InterpType(interp).name} is not supported; "
            "expected INTERP_NN or INTERP_LINEAR"
        )


def size_arg(op: str, size: Sequence[float] | None, ndim: int = 2) -> tuple[int, ...] | None:
    """The output size argument rounded to whole pixels (``ndim`` values: (H, W) or (D, H, W)),
    or None when it is not given.

    Raises:
        ValueError: the wrong number of values, or an extent below one pixel.
    """
    if size is None or len(size) == 0:
        return None
    if len(size) != ndim:
        names = "(height, width)" if ndim == 2 else "(depth, height, width)"
        raise ValueError(f"{op}: argument 'size' must have {ndim} elements {names}, got {size}")
    out = tuple(math.floor(float(s) + 0.5) for s in size)
    if min(out) < 1:
        raise ValueError(f"{op}: argument 'size' must be at least 1 pixel, got {tuple(size)}")
    return out


def check_warp_input(op: str, image: np.ndarray, layout: str, dtype: Any) -> tuple[str, np.dtype]:
    """``(layout, output type)`` of a 2-D warp's sample.

    Raises:
        ValueError: an unsupported layout.
        TypeError: an unsupported input or output type.
    """
    layout = resolve_layout(op, layout, image.ndim, WARP_LAYOUTS, WARP_DEFAULTS)
    check_dtype(op, image, WARP_TYPES)
    return layout, output_dtype(op, dtype, image.dtype, WARP_TYPES)


def image_size(image: np.ndarray, layout: str) -> tuple[int, int]:
    """``(height, width)`` of a sample in a 2-D warp layout."""
    return image.shape[layout.index("H")], image.shape[layout.index("W")]


class WarpAffineKernel(SampleKernel):
    """Per-sample ``warp_affine``; the matrix comes from ``matrix`` or the second input."""

    implied_layouts: ClassVar[Mapping[int, str]] = {3: "HWC", 4: "FHWC"}

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> np.ndarray:
        """Warp one sample (a volume, or each volume of a sequence, with a 3x4 matrix)."""
        image = inputs[0]
        volume = sample.layouts[0] in _VOLUME_LAYOUTS
        if volume:
            layout = sample.layouts[0]
            check_dtype("warp_affine", image, WARP_TYPES)
            out_type = output_dtype("warp_affine", args["dtype"], image.dtype, WARP_TYPES)
        else:
            layout, out_type = check_warp_input(
                "warp_affine", image, sample.layouts[0], args["dtype"]
            )
        check_interp("warp_affine", args["interp_type"])
        per_frame = [n for n in per_frame_args(sample.arg_layouts, layout) if n in _PER_FRAME]
        if not per_frame and not volume:
            out_size = size_arg("warp_affine", args["size"]) or image_size(image, layout)
            matrix = _affine_matrix(inputs, args, rows=2)
            interp, fill = args["interp_type"], args["fill_value"]
            return warp_affine(image, layout, matrix, out_size, interp, fill, out_type)
        frames = list(image) if layout.startswith("F") else [image]
        check_frame_counts(sample.index, {n: len(args[n]) for n in per_frame}, len(frames))
        frame_args = [
            {**args, **{n: frame_value(args[n], f) for n in per_frame}} for f in range(len(frames))
        ]
        warped = _warp_frames(inputs, frames, layout.lstrip("F"), frame_args, out_type)
        return np.stack(warped) if layout.startswith("F") else warped[0]


def _warp_frames(
    inputs: tuple[np.ndarray, ...],
    frames: list[np.ndarray],
    layout: str,
    frame_args: list[Mapping[str, Any]],
    out_type: np.dtype,
) -> list[np.ndarray]:
    """``warp_affine`` of each frame (an image, or a DHWC volume) with its own arguments; the
    frames share one output size.

    Raises:
        ValueError: per-frame sizes that differ, or a bad matrix.
    """
    volume = layout == "DHWC"
    rows = 3 if volume else 2
    sizes = {size_arg("warp_affine", a["size"], ndim=rows) for a in frame_args}
    if len(sizes) > 1:
        raise ValueError(
            f"warp_affine: the frames of a sequence must share one output size, got {sorted(sizes)}"
        )
    out_size = sizes.pop() or (frames[0].shape[:3] if volume else image_size(frames[0], layout))
    warped = []
    for frame, args in zip(frames, frame_args, strict=True):
        matrix = _affine_matrix(inputs, args, rows)
        interp, fill = args["interp_type"], args["fill_value"]
        if volume:
            warped.append(warp_volume(frame, matrix, out_size, interp, fill, out_type))
        else:
            warped.append(warp_affine(frame, layout, matrix, out_size, interp, fill, out_type))
    return warped


def _affine_matrix(
    inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], rows: int
) -> np.ndarray:
    """``warp_affine``'s destination-to-source matrix (``rows`` x ``rows + 1``: 2x3 for images,
    3x4 for volumes) from ``matrix`` or the second input, inverted when ``inverse_map`` is
    False.

    Raises:
        ValueError: no matrix, two matrices, the wrong number of values, or a singular matrix
            to invert.
    """
    if len(inputs) > 1:
        if args["matrix"]:
            raise ValueError(
                "warp_affine: give the matrix either as argument 'matrix' or as the second "
                "input, not both"
            )
        values = np.asarray(inputs[1], dtype=np.float64).ravel()
    elif args["matrix"]:
        values = np.asarray(args["matrix"], dtype=np.float64)
    else:
        raise ValueError(
            "warp_affine: argument 'matrix' (or a second input with the matrix) is required"
        )
    count = rows * (rows + 1)
    if values.size != count:
        raise ValueError(
            f"warp_affine: the matrix must have {count} elements ({rows}x{rows + 1}), got "
            f"{values.size}"
        )
    matrix = values.reshape(rows, rows + 1)
    if not args["inverse_map"]:
        full = np.vstack([matrix, np.eye(rows + 1)[rows]])
        if abs(np.linalg.det(full)) < 1e-12:
            raise ValueError(f"warp_affine: the matrix {values.tolist()} is not invertible")
        matrix = np.linalg.inv(full)[:rows]
    return matrix
