"""Point steps: cropping coordinates to a box, and a per-point inside-the-box mask."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.plugins.structured.paths import Name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import (
    FieldNotFoundError,
    FormatError,
    PipelineStepBase,
)
from feedline.plugins.structured.values import numpy_type
from feedline.types import DataType

__all__ = ["CoordinateCropper", "PointsInRangeCheck"]


def _corners(minimum: Sequence[float], maximum: Sequence[float], owner: str) -> tuple:
    low = np.asarray(minimum, np.float64).reshape(-1)
    high = np.asarray(maximum, np.float64).reshape(-1)
    if low.shape != high.shape or np.any(low > high):
        raise ValueError(
            f"{owner}: minimum_point {list(low)} and maximum_point {list(high)} must have one "
            "value per dimension, minimum <= maximum"
        )
    return low, high


def _point_fields(data: SampleDataGroup, name: Name, step: PipelineStepBase, what: str) -> list:
    paths = [
        p
        for p in data.find_all_occurrences(name)
        if not data.path_exists_and_is_data_group_field(p)
    ]
    if not paths:
        raise FieldNotFoundError(
            f"{step!r}: No fields containing points to {what} found (searched under name {name!r})"
        )
    return paths


def _constant(values: np.ndarray, dtype: DataType) -> Any:
    from feedline import fn

    np_type = np.dtype(numpy_type(dtype))
    if np_type.kind == "f":
        return fn.constant(fdata=values.tolist(), shape=[len(values)], dtype=dtype)
    return fn.constant(idata=values.astype(np.int64).tolist(), shape=[len(values)], dtype=dtype)


class CoordinateCropper(PipelineStepBase):
    """Clamps every point (rows of ``D`` coordinates) of the named fields into a box.

    Args:
        points_fields_name: the name of the point fields (all of them are processed).
        minimum_point: the box's lower corner, one value per dimension.
        maximum_point: its upper corner.
    """

    def __init__(
        self,
        points_fields_name: Name,
        minimum_point: Sequence[float],
        maximum_point: Sequence[float],
    ) -> None:
        self._name = points_fields_name
        self._low, self._high = _corners(minimum_point, maximum_point, "CoordinateCropper")

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        _point_fields(data_empty, self._name, self, "crop")
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import math as fmath

        for path in _point_fields(data, self._name, self, "crop"):
            dtype = data.get_type_of_item_in_path(path)
            low, high = _constant(self._low, dtype), _constant(self._high, dtype)
            points = data.get_item_in_path(path)
            data.set_item_in_path(path, fmath.min(fmath.max(points, low), high))
        return data

    def __repr__(self) -> str:
        return f"CoordinateCropper({self._name!r})"


def _inside(points: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    points = points.reshape(-1, len(low)) if points.size else points.reshape(0, len(low))
    return np.all((points >= low) & (points <= high), axis=-1)


class PointsInRangeCheck(PipelineStepBase):
    """Adds, beside every point field with the name, a BOOL field: which points lie in the box.

    Args:
        points_fields_name: the name of the point fields.
        is_inside_field_name: the name of the new sibling field (must not exist yet).
        minimum_point: the box's lower corner, one value per dimension.
        maximum_point: its upper corner (both inclusive).
    """

    def __init__(
        self,
        points_fields_name: Name,
        is_inside_field_name: Name,
        minimum_point: Sequence[float],
        maximum_point: Sequence[float],
    ) -> None:
        self._name = points_fields_name
        self._result = is_inside_field_name
        self._low, self._high = _corners(minimum_point, maximum_point, "PointsInRangeCheck")

    def _parents(self, data: SampleDataGroup) -> list[tuple[SampleDataGroup, tuple]]:
        found = []
        for path in _point_fields(data, self._name, self, "check"):
            parent = data.get_parent_of_path(path)
            if parent.has_child(self._result):
                raise FormatError(
                    f"{self!r}: Cannot add is_inside flag as field with name {self._result!r}: "
                    f"a sibling of the points at {path} already has that name"
                )
            found.append((parent, path))
        return found

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        for parent, _ in self._parents(data_empty):
            parent.add_data_field(self._result, DataType.BOOL)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        low, high = self._low, self._high
        for parent, path in self._parents(data):
            mask = fn.python_function(
                data.get_item_in_path(path), function=lambda p: _inside(p, low, high)
            )
            parent.add_data_field(self._result, DataType.BOOL)
            parent[self._result] = mask
        return data

    def __repr__(self) -> str:
        return f"PointsInRangeCheck({self._name!r}, {self._result!r})"
