"""``AffineTransformer``: one random affine transform for the images, boxes and points it finds.

The transform maps the input image to ``output_hw``: a resize (stretch, fit with padding, or
fill with cropping), then about the output centre a random scale, a random horizontal flip and a
random translation (a fraction of the output size). One matrix per sample is applied to every
image (``warp_affine``) and to every point field (rows of ``x, y`` pairs) and box field (rows of
``x1, y1, x2, y2``, kept ordered after a flip) under the processed (sub-)tree, so they stay
aligned. Wrap the step to give each camera its own transform.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from feedline.plugins.structured.paths import Name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import FormatError, PipelineStepBase
from feedline.plugins.structured.steps.structural import find_data_fields
from feedline.types import DataType, InterpType

__all__ = ["AffineTransformer", "affine_matrix", "transform_boxes", "transform_points"]

_MODES = ("stretch", "pad", "crop")


def affine_matrix(
    image: np.ndarray,
    draws: np.ndarray,
    flip: np.ndarray,
    *,
    output_hw: tuple[int, int],
    mode: str,
    scale_range: tuple[float, float],
    translation_range: tuple[float, float],
) -> np.ndarray:
    """The 2x3 float32 matrix mapping input pixel coordinates to output ones.

    ``draws`` holds three numbers in [0, 1) (scale, x and y translation), ``flip`` is 0 or 1.
    """
    height, width = image.shape[:2]
    out_h, out_w = output_hw
    sx, sy = out_w / max(width, 1), out_h / max(height, 1)
    if mode == "pad":
        sx = sy = min(sx, sy)
    elif mode == "crop":
        sx = sy = max(sx, sy)
    scale = scale_range[0] + float(draws[0]) * (scale_range[1] - scale_range[0])
    low, high = translation_range
    tx = (low + float(draws[1]) * (high - low)) * out_w
    ty = (low + float(draws[2]) * (high - low)) * out_h
    mirror = -1.0 if int(flip) else 1.0
    # centre the input, resize, scale and mirror, then move to the output centre and translate
    a = np.array([[mirror * scale * sx, 0.0], [0.0, scale * sy]])
    centre_in = np.array([width / 2.0, height / 2.0])
    centre_out = np.array([out_w / 2.0 + tx, out_h / 2.0 + ty])
    offset = centre_out - a @ centre_in
    return np.hstack([a, offset[:, None]]).astype(np.float32)


def transform_points(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Apply ``matrix`` to rows of ``x, y`` pairs (``(N, 2k)``) and return float32."""
    pts = np.asarray(points, np.float32)
    if pts.size == 0:
        return pts.astype(np.float32, copy=True)
    pairs = pts.reshape(-1, 2)
    moved = pairs @ matrix[:, :2].T + matrix[:, 2]
    return moved.reshape(pts.shape).astype(np.float32)


def transform_boxes(boxes: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Apply ``matrix`` to ``x1, y1, x2, y2`` rows, keeping ``x1 <= x2`` and ``y1 <= y2``."""
    moved = transform_points(boxes, matrix)
    if moved.size == 0:
        return moved
    corners = moved.reshape(-1, 2, 2)
    low, high = corners.min(axis=1), corners.max(axis=1)
    return np.concatenate([low, high], axis=1).reshape(moved.shape).astype(np.float32)


class AffineTransformer(PipelineStepBase):
    """Random resize/scale/flip/translation of images with their boxes and points.

    Args:
        output_hw: the output image size ``(height, width)``.
        resizing_mode: ``"stretch"`` (both axes to the output size), ``"pad"`` (fit inside,
            keep the aspect ratio) or ``"crop"`` (fill the output, keep the aspect ratio).
        image_field_names: names of the image fields (HWC); at least one must exist, all of one
            sample must have the same size (the first one sets the transform).
        box_field_names: names of FLOAT box fields (``x1, y1, x2, y2`` rows in pixels).
        point_field_names: names of FLOAT point fields (rows of ``x, y`` pairs in pixels).
        prob_flip: probability of a horizontal flip.
        scale_range: the extra scale factor about the centre, drawn uniformly.
        translation_range: the shift, as a fraction of the output size, drawn uniformly per axis.
        interp_type: image interpolation.
        fill_value: the value of pixels outside the input image.
    """

    def __init__(
        self,
        output_hw: Sequence[int],
        resizing_mode: str = "stretch",
        image_field_names: Name | Sequence[Name] = "image",
        box_field_names: Name | Sequence[Name] = (),
        point_field_names: Name | Sequence[Name] = (),
        prob_flip: float = 0.5,
        scale_range: Sequence[float] = (1.0, 1.0),
        translation_range: Sequence[float] = (0.0, 0.0),
        interp_type: InterpType = InterpType.INTERP_LINEAR,
        fill_value: float = 0.0,
    ) -> None:
        hw = tuple(int(v) for v in output_hw)
        if len(hw) != 2 or min(hw) < 1:
            raise ValueError(
                f"AffineTransformer: output_hw must be two sizes >= 1, got {output_hw}"
            )
        if resizing_mode not in _MODES:
            raise ValueError(
                f"AffineTransformer: resizing_mode must be one of {_MODES}, got {resizing_mode!r}"
            )
        if not 0.0 <= float(prob_flip) <= 1.0:
            raise ValueError(f"AffineTransformer: prob_flip must be in [0, 1], got {prob_flip}")
        scale = tuple(float(v) for v in scale_range)
        shift = tuple(float(v) for v in translation_range)
        if len(scale) != 2 or not 0 < scale[0] <= scale[1]:
            raise ValueError(f"AffineTransformer: scale_range must be 0 < min <= max, got {scale}")
        if len(shift) != 2 or shift[0] > shift[1]:
            raise ValueError(
                f"AffineTransformer: translation_range must be (min, max), got {shift}"
            )
        self._hw = hw
        self._mode = resizing_mode
        self._images = _as_names(image_field_names)
        self._boxes = _as_names(box_field_names)
        self._points = _as_names(point_field_names)
        if not self._images:
            raise ValueError("AffineTransformer: give at least one image field name")
        self._prob_flip = float(prob_flip)
        self._scale = scale
        self._shift = shift
        self._interp = interp_type
        self._fill = float(fill_value)

    def _fields(self, data: SampleDataGroup) -> tuple[list, list, list]:
        images = [p for n in self._images for p in find_data_fields(data, n, repr(self))]
        boxes = [
            p for n in self._boxes for p in find_data_fields(data, n, repr(self), DataType.FLOAT)
        ]
        points = [
            p for n in self._points for p in find_data_fields(data, n, repr(self), DataType.FLOAT)
        ]
        for path in images:
            if data.get_type_of_item_in_path(path) not in (DataType.UINT8, DataType.FLOAT):
                raise FormatError(f"{self!r}: image fields must be UINT8 or FLOAT")
        return images, boxes, points

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        self._fields(data_empty)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from functools import partial

        from feedline import fn

        images, boxes, points = self._fields(data)
        draws = fn.random.uniform(range=[0.0, 1.0], shape=[3])
        flip = fn.random.coin_flip(probability=self._prob_flip)
        make_matrix = partial(
            affine_matrix,
            output_hw=self._hw,
            mode=self._mode,
            scale_range=self._scale,
            translation_range=self._shift,
        )
        first = data.get_item_in_path(images[0])
        matrix = fn.python_function(first, draws, flip, function=make_matrix)
        for path in images:
            warped = fn.warp_affine(
                data.get_item_in_path(path),
                matrix=matrix,
                size=list(self._hw),
                inverse_map=False,
                fill_value=self._fill,
                interp_type=self._interp,
            )
            data.set_item_in_path(path, warped)
        for paths, function in ((boxes, transform_boxes), (points, transform_points)):
            for path in paths:
                moved = fn.python_function(data.get_item_in_path(path), matrix, function=function)
                data.set_item_in_path(path, fn.cast(moved, dtype=DataType.FLOAT))
        return data

    def __repr__(self) -> str:
        return f"AffineTransformer(output_hw={self._hw}, images={self._images})"


def _as_names(names: Name | Sequence[Name]) -> list[Name]:
    return [names] if isinstance(names, str | int) else list(names)
