"""``AffineTransformer``: one random affine transform for the images, points and matrices it finds.

Per sample one 2x3 matrix is built: the chain of transformation steps (see
:mod:`~feedline.plugins.structured.steps.affine_steps`) moves the content inside the input
viewport, a resize maps that viewport to ``output_hw`` (stretch, pad or crop, anchored at a
corner or the centre), and an optional jitter about the output centre (``prob_flip``,
``scale_range``, ``translation_range``) follows. The matrix warps every image
(``warp_affine``), moves every point field (rows of ``x, y`` pairs) and box field (rows of
``x1, y1, x2, y2``, kept ordered), and is multiplied onto every projection matrix, so they stay
aligned. Wrap the step to give each camera its own transform.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from functools import partial
from typing import Any

import numpy as np

from feedline.plugins.structured.paths import Name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps import affine_steps
from feedline.plugins.structured.steps.affine_steps import TransformationStep, translation_matrix
from feedline.plugins.structured.steps.base import FieldNotFoundError, FormatError, PipelineStepBase
from feedline.plugins.structured.steps.image import pipeline_has_gpu
from feedline.types import DataType, InterpType

__all__ = [
    "AffineTransformer",
    "ResizingAnchor",
    "ResizingMode",
    "build_matrix",
    "transform_boxes",
    "transform_points",
    "transform_projection",
]


class ResizingMode(Enum):
    """How the input viewport becomes the output size when their aspect ratios differ."""

    #: Scale each axis to the output size (the content is distorted).
    STRETCH = 0
    #: Keep the aspect ratio and fit inside the output (the rest is padding).
    PAD = 1
    #: Keep the aspect ratio and fill the output (the overhang is cropped).
    CROP = 2


class ResizingAnchor(Enum):
    """The point of the input viewport that lands on the same point of the output (PAD, CROP)."""

    #: The centres coincide.
    CENTER = 0
    #: The top-left corners coincide.
    TOP_OR_LEFT = 1
    #: The bottom-right corners coincide.
    BOTTOM_OR_RIGHT = 2


def _enum_member(value: Any, enum: type[Enum], what: str) -> Enum:
    if isinstance(value, enum):
        return value
    if isinstance(value, str) and value.upper() in enum.__members__:
        return enum[value.upper()]
    names = ", ".join(repr(n.lower()) for n in enum.__members__)
    raise ValueError(f"AffineTransformer: {what} must be a {enum.__name__} or one of {names}")


def resize_matrix(
    input_hw: Sequence[float],
    output_hw: Sequence[float],
    mode: ResizingMode,
    anchor: ResizingAnchor | None,
) -> np.ndarray:
    """The 3x3 matrix taking the input viewport to the output image."""
    ratio_y, ratio_x = output_hw[0] / input_hw[0], output_hw[1] / input_hw[1]
    if mode is ResizingMode.STRETCH:
        return np.diag([ratio_x, ratio_y, 1.0])
    factor = min(ratio_x, ratio_y) if mode is ResizingMode.PAD else max(ratio_x, ratio_y)
    fraction = {
        ResizingAnchor.TOP_OR_LEFT: 0.0,
        ResizingAnchor.CENTER: 0.5,
        ResizingAnchor.BOTTOM_OR_RIGHT: 1.0,
    }[anchor]
    dx = (output_hw[1] - factor * input_hw[1]) * fraction
    dy = (output_hw[0] - factor * input_hw[0]) * fraction
    return translation_matrix(dx, dy) @ np.diag([factor, factor, 1.0])


def output_jitter(
    draws: np.ndarray,
    output_hw: Sequence[float],
    prob_flip: float,
    scale_range: tuple[float, float],
    translation_range: tuple[float, float],
) -> np.ndarray:
    """Scale, mirror and shift about the output centre, from four numbers in ``[0, 1)``.

    ``draws`` holds the scale, the x and y shifts (fractions of the output size) and the flip.
    """
    scale = affine_steps.in_range(draws[0], *scale_range)
    dx = affine_steps.in_range(draws[1], *translation_range) * output_hw[1]
    dy = affine_steps.in_range(draws[2], *translation_range) * output_hw[0]
    mirror = -1.0 if draws[3] < prob_flip else 1.0
    centre = affine_steps.viewport_centre(output_hw)
    linear = np.diag([mirror * scale, scale])
    return translation_matrix(dx, dy) @ affine_steps.about_point(linear, centre)


def build_matrix(
    *sizes_and_draws: np.ndarray,
    steps: Sequence[TransformationStep],
    output_hw: tuple[int, int],
    mode: ResizingMode,
    anchor: ResizingAnchor | None,
    jitter: dict | None,
) -> np.ndarray:
    """The 2x3 float32 matrix of one sample.

    Args:
        sizes_and_draws: the ``(height, width, ...)`` sizes of the sample's images (all must be
            equal), then, when there is any, the vector of uniform draws.
        steps: the transformation chain.
        output_hw: the output size.
        mode: the resizing mode.
        anchor: the resizing anchor.
        jitter: ``output_jitter``'s settings, or None.

    Raises:
        ValueError: the images have different sizes.
    """
    count = sum(s.num_draws for s in steps) + (4 if jitter else 0)
    sizes = sizes_and_draws[:-1] if count else sizes_and_draws
    draws = np.asarray(sizes_and_draws[-1], np.float64).ravel() if count else np.zeros(0)
    hw = [tuple(float(v) for v in np.asarray(s).ravel()[:2]) for s in sizes]
    for other in hw[1:]:
        if other != hw[0]:
            raise ValueError(
                "Defined sizes of images do not match. Example unmatched sizes: "
                f"{hw[0][0]:g}, {hw[0][1]:g} | {other[0]:g}, {other[1]:g}"
            )
    matrix, offset = np.eye(3), 0
    for step in steps:
        matrix = step(matrix, hw[0], draws[offset : offset + step.num_draws])
        offset += step.num_draws
    matrix = resize_matrix(hw[0], output_hw, mode, anchor) @ matrix
    if jitter:
        matrix = output_jitter(draws[offset:], output_hw, **jitter) @ matrix
    return matrix[:2].astype(np.float32)


def transform_points(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Apply ``matrix`` to rows of ``x, y`` pairs (``(N, 2k)``) and return float32.

    Raises:
        ValueError: a row length that is not a multiple of two.
    """
    pts = np.asarray(points, np.float64)
    if pts.size == 0:
        return pts.astype(np.float32)
    if pts.shape[-1] % 2:
        raise ValueError(
            f"AffineTransformer: point rows must hold x, y pairs, got rows of {pts.shape[-1]}"
        )
    pairs = pts.reshape(-1, 2)
    moved = pairs @ matrix[:, :2].T.astype(np.float64) + matrix[:, 2]
    return moved.reshape(pts.shape).astype(np.float32)


def transform_boxes(boxes: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Apply ``matrix`` to ``x1, y1, x2, y2`` rows, keeping ``x1 <= x2`` and ``y1 <= y2``."""
    moved = transform_points(boxes, matrix)
    if moved.size == 0:
        return moved
    corners = moved.reshape(-1, 2, 2)
    low, high = corners.min(axis=1), corners.max(axis=1)
    return np.concatenate([low, high], axis=1).reshape(moved.shape).astype(np.float32)


def transform_projection(projection: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``matrix`` (2x3, as a 3x3 with a last row ``0, 0, 1``) times a 3xN projection matrix.

    A 4xN projection (homogeneous, e.g. a 4x4 ``lidar2img``) has its first three rows
    transformed and keeps its last.

    Raises:
        ValueError: a projection with another number of rows.
    """
    values = np.asarray(projection, np.float64)
    if values.ndim != 2 or values.shape[0] not in (3, 4):
        raise ValueError(
            f"AffineTransformer: projection matrices must have 3 or 4 rows, got {values.shape}"
        )
    full = np.eye(values.shape[0])
    full[:2, :3] = np.asarray(matrix, np.float64)
    return (full @ values).astype(np.float32)


def _as_names(names: Name | Sequence[Name] | None) -> list[Name]:
    if names is None:
        return []
    return [names] if isinstance(names, str | int) else list(names)


def _range(value: Sequence[float], what: str) -> tuple[float, float]:
    pair = tuple(float(v) for v in value)
    if len(pair) != 2 or pair[0] > pair[1]:
        raise ValueError(f"AffineTransformer: {what} must be (min, max), got {pair}")
    return pair


class AffineTransformer(PipelineStepBase):
    """Random affine change and resize of images, with their points, boxes and projections.

    The positional order and the names are ACCV-Lab's; the step classes are reachable as
    attributes (``AffineTransformer.Rotation``, ``AffineTransformer.ResizingMode``, ...).

    Args:
        output_hw: the output image size ``(height, width)``.
        resizing_mode: a :class:`ResizingMode` (or its name: ``"stretch"``, ``"pad"``,
            ``"crop"``).
        resizing_anchor: a :class:`ResizingAnchor` (or its name); required for PAD and CROP,
            must be None for STRETCH.
        image_field_names: the image fields (HWC) to warp; their size is the input viewport.
        image_hw_field_names: fields holding the input size ``(height, width)`` instead of
            images; they are set to ``output_hw``. Give exactly one of the two.
        projection_matrix_field_names: 3xN matrices into pixel coordinates; the transform is
            multiplied onto them.
        point_field_names: FLOAT rows of ``x, y`` pairs in pixels.
        transformation_steps: the chain of :class:`TransformationStep`; None only resizes.
        transform_image_on_gpu: warp on the GPU when the pipeline has one (a CPU-only pipeline
            warps on the CPU).
        box_field_names: FLOAT ``x1, y1, x2, y2`` rows, reordered after mirroring.
        prob_flip: after the resize, mirror horizontally about the output centre.
        scale_range: after the resize, a random extra scale about the output centre.
        translation_range: after the resize, a random shift per axis, as a fraction of the
            output size.
        interp_type: image interpolation.
        fill_value: the value of pixels outside the input image.
    """

    TransformationStep = affine_steps.TransformationStep
    Translation = affine_steps.Translation
    ShiftInsideOriginalImage = affine_steps.ShiftInsideOriginalImage
    ShiftToAlignWithOriginalImageBorder = affine_steps.ShiftToAlignWithOriginalImageBorder
    Rotation = affine_steps.Rotation
    UniformScaling = affine_steps.UniformScaling
    NonUniformScaling = affine_steps.NonUniformScaling
    Shearing = affine_steps.Shearing
    Selection = affine_steps.Selection
    ResizingMode = ResizingMode
    ResizingAnchor = ResizingAnchor

    def __init__(
        self,
        output_hw: Sequence[int],
        resizing_mode: ResizingMode | str = ResizingMode.STRETCH,
        resizing_anchor: ResizingAnchor | str | None = None,
        image_field_names: Name | Sequence[Name] | None = None,
        image_hw_field_names: Name | Sequence[Name] | None = None,
        projection_matrix_field_names: Name | Sequence[Name] | None = None,
        point_field_names: Name | Sequence[Name] | None = None,
        transformation_steps: Sequence[TransformationStep] | None = None,
        transform_image_on_gpu: bool = True,
        *,
        box_field_names: Name | Sequence[Name] | None = None,
        prob_flip: float = 0.0,
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
        self._mode = _enum_member(resizing_mode, ResizingMode, "resizing_mode")
        self._anchor = (
            None
            if resizing_anchor is None
            else _enum_member(resizing_anchor, ResizingAnchor, "resizing_anchor")
        )
        if self._mode is ResizingMode.STRETCH and self._anchor is not None:
            raise ValueError(
                "When using STRETCH resizing mode, `resizing_anchor` has to be set to `None`."
            )
        if self._mode is not ResizingMode.STRETCH and self._anchor is None:
            raise ValueError(
                "When not using STRETCH resizing mode, a `resizing_anchor` has to be selected."
            )
        self._images = _as_names(image_field_names)
        self._sizes = _as_names(image_hw_field_names)
        if bool(self._images) == bool(self._sizes):
            raise ValueError(
                "AffineTransformer: give exactly one of 'image_field_names' and "
                "'image_hw_field_names' (the one source of the image size)"
            )
        self._matrices = _as_names(projection_matrix_field_names)
        self._points = _as_names(point_field_names)
        self._boxes = _as_names(box_field_names)
        self._steps = list(transformation_steps or ())
        reached: set[type] = set()
        for step in self._steps:
            if not isinstance(step, TransformationStep):
                raise TypeError(
                    f"AffineTransformer: transformation_steps must be TransformationStep "
                    f"objects, got {type(step).__name__}"
                )
            reached = step.check_prev_types_compatible_and_add_current_type(reached)
        if not 0.0 <= float(prob_flip) <= 1.0:
            raise ValueError(f"AffineTransformer: prob_flip must be in [0, 1], got {prob_flip}")
        scale = _range(scale_range, "scale_range")
        if scale[0] <= 0:
            raise ValueError(f"AffineTransformer: scale_range must be 0 < min <= max, got {scale}")
        shift = _range(translation_range, "translation_range")
        jitter = {"prob_flip": float(prob_flip), "scale_range": scale, "translation_range": shift}
        self._jitter = (
            jitter if (prob_flip, scale, shift) != (0.0, (1.0, 1.0), (0.0, 0.0)) else None
        )
        self._hw = hw
        self._on_gpu = bool(transform_image_on_gpu)
        self._interp = interp_type
        self._fill = float(fill_value)

    def _find(
        self,
        data: SampleDataGroup,
        names: list[Name],
        kind: str,
        dtype: tuple[DataType, ...] | None = None,
    ) -> list[tuple[Name, ...]]:
        """The paths of the data fields with ``names``, each of a type in ``dtype``.

        Raises:
            FieldNotFoundError: a name without any field (upstream's ``KeyError`` message).
            FormatError: a field of another type.
        """
        paths: list[tuple[Name, ...]] = []
        for name in names:
            found = [
                p
                for p in data.find_all_occurrences(name)
                if not data.path_exists_and_is_data_group_field(p)
            ]
            if not found:
                raise FieldNotFoundError(
                    f"No occurrences of {kind} with name `{name}` found (the name / one of the "
                    "names specified in the constructor)."
                )
            for path in found:
                actual = data.get_type_of_item_in_path(path)
                if dtype is not None and actual not in dtype:
                    allowed = " or ".join(d.name for d in dtype)
                    raise FormatError(
                        f"{self!r}: {kind} field {'/'.join(map(str, path))!r} has type "
                        f"{actual.name}, expected {allowed}"
                    )
            paths += found
        return paths

    def _fields(self, data: SampleDataGroup) -> dict[str, list[tuple[Name, ...]]]:
        floats = (DataType.FLOAT,)
        return {
            "images": self._find(data, self._images, "images", (DataType.UINT8, DataType.FLOAT)),
            "sizes": self._find(data, self._sizes, "image sizes"),
            "matrices": self._find(data, self._matrices, "projection matrices", floats),
            "points": self._find(data, self._points, "point sets", floats),
            "boxes": self._find(data, self._boxes, "boxes", floats),
        }

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        self._fields(data_empty)
        return data_empty

    def _matrix(self, data: SampleDataGroup, fields: dict[str, list[tuple[Name, ...]]]) -> Any:
        """The per-sample 2x3 matrix node, from the image sizes and the uniform draws."""
        from feedline import fn

        if fields["images"]:
            sizes = [fn.shapes(data.get_item_in_path(p)) for p in fields["images"]]
        else:
            sizes = [data.get_item_in_path(p) for p in fields["sizes"]]
        count = sum(s.num_draws for s in self._steps) + (4 if self._jitter else 0)
        draws = [fn.random.uniform(range=[0.0, 1.0], shape=[count])] if count else []
        function = partial(
            build_matrix,
            steps=self._steps,
            output_hw=self._hw,
            mode=self._mode,
            anchor=self._anchor,
            jitter=self._jitter,
        )
        return fn.python_function(*sizes, *draws, function=function)

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        fields = self._fields(data)
        matrix = self._matrix(data, fields)
        to_gpu = self._on_gpu and pipeline_has_gpu()
        for path in fields["images"]:
            image = data.get_item_in_path(path)
            warped = fn.warp_affine(
                image.gpu() if to_gpu else image,
                matrix=matrix,
                size=list(self._hw),
                inverse_map=False,
                fill_value=self._fill,
                interp_type=self._interp,
            )
            data.set_item_in_path(path, warped)
        moves = (
            (fields["matrices"], transform_projection),
            (fields["points"], transform_points),
            (fields["boxes"], transform_boxes),
        )
        for paths, function in moves:
            for path in paths:
                moved = fn.python_function(data.get_item_in_path(path), matrix, function=function)
                data.set_item_in_path(path, moved)
        for path in fields["sizes"]:
            dtype = data.get_type_of_item_in_path(path)
            data.set_item_in_path(path, fn.constant(idata=list(self._hw), dtype=dtype))
        return data

    def __repr__(self) -> str:
        return f"AffineTransformer(output_hw={self._hw}, images={self._images or self._sizes})"
