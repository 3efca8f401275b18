"""Visibility of 2-D bounding boxes: occlusion by nearer boxes and a minimum size.

The two checks are plain NumPy functions (``occlusion_visibility``, ``minimum_size_mask``),
run per sample through ``fn.python_function``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.plugins.structured.paths import Name, Path
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import PipelineStepBase
from feedline.types import DataType

__all__ = ["VisibleBboxSelector", "minimum_size_mask", "occlusion_visibility"]


def _ordered_corners(bboxes: np.ndarray) -> tuple[np.ndarray, ...]:
    boxes = np.asarray(bboxes, np.float32).reshape(-1, 4)
    low_x, high_x = np.minimum(boxes[:, 0], boxes[:, 2]), np.maximum(boxes[:, 0], boxes[:, 2])
    low_y, high_y = np.minimum(boxes[:, 1], boxes[:, 3]), np.maximum(boxes[:, 1], boxes[:, 3])
    return low_x, low_y, high_x, high_y


def occlusion_visibility(
    bboxes: np.ndarray, depths: np.ndarray, image_hw: Sequence[int]
) -> np.ndarray:
    """Which boxes keep at least one pixel after nearer boxes are painted over them.

    Boxes (``[x1, y1, x2, y2]``, corners in any order) are rasterised outwards to whole pixels
    (``floor`` of the low, ``ceil`` of the high corner), clipped to the image and painted from
    the farthest to the nearest (equal depths: the later box in front); a box is visible when a
    pixel shows it at the end. Boxes entirely outside the image are never visible.
    """
    height, width = (int(v) for v in np.asarray(image_hw).reshape(-1)[:2])
    low_x, low_y, high_x, high_y = _ordered_corners(bboxes)
    x0, y0 = np.floor(low_x).astype(np.int64), np.floor(low_y).astype(np.int64)
    x1, y1 = np.ceil(high_x).astype(np.int64), np.ceil(high_y).astype(np.int64)
    canvas = np.full((max(height, 0), max(width, 0)), -1, np.int64)
    for index in np.argsort(-np.asarray(depths).reshape(-1), kind="stable"):
        if x0[index] > width or x1[index] < 0 or y0[index] > height or y1[index] < 0:
            continue
        canvas[max(y0[index], 0) : y1[index], max(x0[index], 0) : x1[index]] = index
    visible = np.zeros(len(low_x), bool)
    shown = np.unique(canvas)
    visible[shown[shown >= 0]] = True
    return visible


def minimum_size_mask(
    bboxes: np.ndarray, minimum_size: float, image_hw: Sequence[int]
) -> np.ndarray:
    """Which boxes, clipped to the image, are at least ``minimum_size`` high and wide."""
    height, width = (np.float32(v) for v in np.asarray(image_hw).reshape(-1)[:2])
    boxes = np.asarray(bboxes, np.float32).reshape(-1, 4)
    xs = np.clip(boxes[:, 0::2], np.float32(0), width)
    ys = np.clip(boxes[:, 1::2], np.float32(0), height)
    widths, heights = np.abs(xs[:, 1] - xs[:, 0]), np.abs(ys[:, 1] - ys[:, 0])
    minimum = np.float64(minimum_size)  # not rounded to float32 (a tiny minimum stays above 0)
    return (widths.astype(np.float64) >= minimum) & (heights.astype(np.float64) >= minimum)


class VisibleBboxSelector(PipelineStepBase):
    """Adds a BOOL mask of the visible 2-D boxes (not hidden behind nearer boxes and/or not too
    small); the boxes themselves are left as they are.

    The data must hold exactly one field with each of the names used (boxes, depths, image or
    image size); wrap the step in a sub-tree selection step to process several sets of boxes.

    Args:
        bboxes_field_name: the boxes, one ``[min_x, min_y, max_x, max_y]`` row each.
        resulting_mask_field_path: where to add the mask (relative to the processed root).
        image_field_name: an image (``HWC``) whose size is used; exactly one of this,
            ``image_hw_field_name`` and ``image_hw`` is set.
        image_hw_field_name: a field holding ``[height, width]``.
        image_hw: a fixed ``[height, width]``.
        check_for_bbox_occlusion: hide boxes completely covered by nearer boxes.
        check_for_minimum_size: hide boxes smaller than ``minimum_bbox_size`` (after clipping to
            the image) in height or width.
        depths_field_name: the boxes' depths (needed for the occlusion check).
        minimum_bbox_size: the minimum size (needed for the size check).

    Raises:
        AssertionError: the arguments do not fit together (upstream's messages).
    """

    def __init__(
        self,
        bboxes_field_name: Name,
        resulting_mask_field_path: Name | Path,
        image_field_name: Name | None = None,
        image_hw_field_name: Name | None = None,
        image_hw: Sequence[int] | None = None,
        check_for_bbox_occlusion: bool = True,
        check_for_minimum_size: bool = True,
        depths_field_name: Name | None = None,
        minimum_bbox_size: float | None = None,
    ) -> None:
        sources = (image_field_name, image_hw_field_name, image_hw)
        if sum(source is not None for source in sources) != 1:
            raise AssertionError(
                "Exactly one of 'image_field_name', 'image_hw_field_name', or 'image_hw' must be "
                "set (single source of truth)"
            )
        if not (check_for_bbox_occlusion or check_for_minimum_size):
            raise AssertionError(
                "At least one of the parameters `check_for_bbox_occlusion` and "
                "`check_for_minimum_size` has to be `True`"
            )
        if check_for_minimum_size and minimum_bbox_size is None:
            raise AssertionError(
                "If ``check_for_minimum_size==True``, the parameter ``minimum_size`` has to be set "
                "to a non-None value"
            )
        if check_for_bbox_occlusion and depths_field_name is None:
            raise AssertionError(
                "If ``check_for_bbox_occlusion==True``, the parameter ``depths_field_name`` has to "
                "be set to a non-None value"
            )
        self._bboxes = bboxes_field_name
        self._depths = depths_field_name
        self._image = image_field_name
        self._image_hw_field = image_hw_field_name
        self._image_hw = None if image_hw is None else [int(v) for v in image_hw]
        self._result = resulting_mask_field_path
        self._occlusion = check_for_bbox_occlusion
        self._minimum_size = check_for_minimum_size
        self._minimum = minimum_bbox_size

    def _unique(self, data: SampleDataGroup, name: Name, what: str) -> None:
        count = data.get_num_occurrences(name)
        if count == 0:
            raise ValueError(f"No {what} found with name: '{name}'.")
        if count > 1:
            raise ValueError(
                f"More than one occurence of {what} found with name: '{name}'. Field needs to "
                "have an unique name."
            )

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        count = data_empty.get_num_occurrences(self._bboxes)
        if count == 0:
            raise ValueError(f"No bounding box fields found with name: '{self._bboxes}'.")
        if count > 1:
            raise ValueError(
                f"More than one occurence of box fields found with name: '{self._bboxes}'. Field "
                "needs to have an unique name."
            )
        if self._image is not None:
            self._unique(data_empty, self._image, "image field")
        elif self._image_hw is None:
            self._unique(data_empty, self._image_hw_field, "image size field")
        if self._occlusion:
            self._unique(data_empty, self._depths, "depths field")
        self._add_result_field(data_empty)
        return data_empty

    def _add_result_field(self, data: SampleDataGroup) -> None:
        if data.path_is_single_name(self._result):
            if data.has_child(self._result):
                raise ValueError(
                    f"SampleDataGroup object already has a child with name '{self._result}'. "
                    "Cannot create the field to store results."
                )
            data.add_data_field(self._result, DataType.BOOL)
            return
        parent = data.get_parent_of_path(self._result)
        name = self._result[-1]
        if parent.has_child(name):
            raise ValueError(
                f"Group data field at path {self._result[:-1]} already has a child with name "
                f"'{name}'. Cannot create the field to store results."
            )
        parent.add_data_field(name, DataType.BOOL)

    def _first(self, data: SampleDataGroup, name: Name) -> Any:
        return data.get_item_in_path(data.find_all_occurrences(name)[0])

    def _image_size(self, data: SampleDataGroup) -> Any:
        from feedline import fn

        if self._image_hw is not None:
            return fn.constant(idata=self._image_hw, dtype=DataType.INT32)
        if self._image is not None:
            shape = self._first(data, self._image).shape()
            return fn.cast(fn.stack(shape[-3], shape[-2]), dtype=DataType.INT32)
        return self._first(data, self._image_hw_field)

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        image_hw = self._image_size(data)
        bboxes = self._first(data, self._bboxes)
        minimum = self._minimum
        if self._occlusion and self._minimum_size:
            mask = fn.python_function(
                bboxes,
                self._first(data, self._depths),
                image_hw,
                function=lambda b, d, hw: (
                    occlusion_visibility(b, d, hw) & minimum_size_mask(b, minimum, hw)
                ),
            )
        elif self._occlusion:
            mask = fn.python_function(
                bboxes, self._first(data, self._depths), image_hw, function=occlusion_visibility
            )
        else:
            mask = fn.python_function(
                bboxes, image_hw, function=lambda b, hw: minimum_size_mask(b, minimum, hw)
            )
        self._add_result_field(data)
        data.set_item_in_path(self._result, mask)
        return data

    def __repr__(self) -> str:
        return f"VisibleBboxSelector({self._bboxes!r}, {self._result!r})"
