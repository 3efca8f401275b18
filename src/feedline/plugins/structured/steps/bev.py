"""Random rotation, scaling and translation of 3-D boxes and the geometry tied to them:
:class:`BEVBBoxesTransformer3D`.

The augmentation ``A = T S R`` (rotation about one axis, then uniform scaling, then translation;
4x4 homogeneous) moves the objects in world coordinates. What is defined relative to the objects
changes with it: centers ``A p``, velocities ``S R v``, sizes ``s * size``, yaw angles
``+ angle`` (wrapped to ``[-pi, pi]``), world-to-ego matrices ``A W``; matrices that map points
into another frame (ego-to-world, projection matrices and extrinsics) take ``A``'s inverse on the
right, so the projection of every moved point is the projection of the point before the move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.plugins.structured.paths import Name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import PipelineStepBase

__all__ = ["BEVBBoxesTransformer3D", "augmentation_matrices", "wrap_angles"]

_KINDS = (
    "points",
    "velocities",
    "sizes",
    "orientation",
    "proj_matrices_and_extrinsics",
    "ego_to_world",
    "world_to_ego",
)


def augmentation_matrices(
    angle: float, axis: int, scale: float, translation: Sequence[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The homogeneous rotation (about ``axis``, right-handed), scaling and translation."""
    rotation = np.eye(4)
    first, second = [a for a in range(3) if a != axis]
    if axis == 1:  # rotating about y turns z towards x
        first, second = second, first
    cos, sin = np.cos(angle), np.sin(angle)
    rotation[first, first], rotation[first, second] = cos, -sin
    rotation[second, first], rotation[second, second] = sin, cos
    scaling = np.diag([scale, scale, scale, 1.0])
    moving = np.eye(4)
    moving[:3, 3] = translation
    return rotation, scaling, moving


def wrap_angles(angles: np.ndarray) -> np.ndarray:
    """Angles moved by whole turns into ``[-pi, pi]`` (values inside are left as they are)."""
    turn = 2.0 * np.pi
    low = angles < -np.pi
    high = angles > np.pi
    out = angles.astype(np.float64)
    out[low] += np.ceil((-np.pi - out[low]) / turn) * turn
    out[high] -= np.ceil((out[high] - np.pi) / turn) * turn
    return out


def _transform_rows(rows: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``matrix`` (4x4, affine) applied to 3-vectors stored as rows (or one 1-D vector)."""
    vectors = np.asarray(rows, np.float64).reshape(-1, 3)
    moved = vectors @ matrix[:3, :3].T + matrix[:3, 3]
    return moved.reshape(np.shape(rows))


class BEVBBoxesTransformer3D(PipelineStepBase):
    """Augments 3-D boxes (and related geometry) with a random rotation, scaling and translation
    in world coordinates, in that order; one draw per sample for all the named fields.

    Every ``data_field_names_*`` argument is a name or a list of names (None: no such fields);
    every field with such a name anywhere in the data is updated.

    Args:
        data_field_names_points: box centers, ``[x, y, z]`` rows.
        data_field_names_velocities: velocities, ``[vx, vy, vz]`` rows.
        data_field_names_sizes: box sizes, ``[x, y, z]`` rows (scaled only).
        data_field_names_orientation: yaw angles in radians.
        data_field_names_proj_matrices_and_extrinsics: projection matrices (``3x4``) and
            extrinsics (``4x4``) mapping ego points; not the intrinsics.
        data_field_names_ego_to_world: ego-to-world matrices (``4x4``).
        data_field_names_world_to_ego: world-to-ego matrices (``4x4``).
        rotation_range: the range of the rotation angle (radians); None: no rotation.
        rotation_axis: 0, 1 or 2 (x, y, z); needed with ``rotation_range``.
        scaling_range: the range of the scaling factor; None: no scaling.
        translation_max_abs: the largest absolute translation per axis (3 values); None: none.

    Raises:
        AssertionError: arguments that do not fit together (upstream's messages).
    """

    def __init__(
        self,
        data_field_names_points: Name | Sequence[Name] | None,
        data_field_names_velocities: Name | Sequence[Name] | None,
        data_field_names_sizes: Name | Sequence[Name] | None,
        data_field_names_orientation: Name | Sequence[Name] | None,
        data_field_names_proj_matrices_and_extrinsics: Name | Sequence[Name] | None,
        data_field_names_ego_to_world: Name | Sequence[Name] | None,
        data_field_names_world_to_ego: Name | Sequence[Name] | None,
        rotation_range: Sequence[float] | None,
        rotation_axis: int | None,
        scaling_range: Sequence[float] | None,
        translation_max_abs: Sequence[float] | None,
    ) -> None:
        if rotation_range is not None:
            if rotation_axis is None:
                raise AssertionError(
                    "If `rotation_range` is set, `rotation_axis` needs to be set too"
                )
            if len(rotation_range) != 2:
                raise AssertionError(
                    "If `rotation_range` is set, it must have 2 elements (minimum and maximum "
                    "rotation angle)."
                )
            if rotation_axis not in (0, 1, 2):
                raise ValueError(
                    "BEVBBoxesTransformer3D: rotation_axis must be 0, 1 or 2, got "
                    f"{rotation_axis!r}"
                )
        if scaling_range is not None and len(scaling_range) != 2:
            raise AssertionError(
                "If `scaling_range` is set, it must have 2 elements (minimum and maximum scaling "
                "factor)."
            )
        if translation_max_abs is not None and len(translation_max_abs) != 3:
            raise AssertionError(
                "If `translation_max_abs` is set, it must have 3 elements (one per dimension to "
                "translate in)."
            )
        names = (
            data_field_names_points,
            data_field_names_velocities,
            data_field_names_sizes,
            data_field_names_orientation,
            data_field_names_proj_matrices_and_extrinsics,
            data_field_names_ego_to_world,
            data_field_names_world_to_ego,
        )
        self._fields: dict[str, list[Name]] = {
            kind: [] if value is None else [value] if isinstance(value, (str, int)) else list(value)
            for kind, value in zip(_KINDS, names, strict=True)
        }
        self._rotation = None if rotation_range is None else [float(v) for v in rotation_range]
        self._axis = rotation_axis
        self._scaling = None if scaling_range is None else [float(v) for v in scaling_range]
        self._translation = (
            None if translation_max_abs is None else [float(v) for v in translation_max_abs]
        )

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        for names in self._fields.values():
            for name in names:
                paths = data_empty.find_all_occurrences(name)
                if not paths:
                    raise ValueError(f"No fields found with name '{name}'")
                for path in paths:
                    if not data_empty.get_parent_of_path(path).is_data_field(name):
                        raise ValueError(
                            f"Field with name '{name}' in path `{path}` is not a data field."
                        )
        return data_empty

    @staticmethod
    def _random_in_range(low: float, high: float) -> Any:
        """A uniform draw in ``[low, high)`` (the constant when the range is empty), drawn
        through ``fn.random.uniform`` looked up at call time (tests may replace it)."""
        from feedline import fn
        from feedline.types import DataType

        if low == high:
            return low
        bounds = fn.stack(
            fn.cast(np.float32(low), dtype=DataType.FLOAT),
            fn.cast(np.float32(high), dtype=DataType.FLOAT),
        )
        return fn.random.uniform(range=bounds)

    def _draws(self) -> list[Any]:
        """Angle, scale and the three translations: graph nodes or constants."""
        angle = 0.0 if self._rotation is None else self._random_in_range(*self._rotation)
        scale = 1.0 if self._scaling is None else self._random_in_range(*self._scaling)
        limits = self._translation or [0.0, 0.0, 0.0]
        return [angle, scale, *(self._random_in_range(-m, m) for m in limits)]

    def _transform(self, kind: str, values: np.ndarray, params: Sequence[float]) -> np.ndarray:
        angle, scale, *translation = params
        rotation, scaling, moving = augmentation_matrices(
            angle, self._axis or 0, scale, translation
        )
        augmentation = moving @ scaling @ rotation
        if kind == "points":
            result = _transform_rows(values, augmentation)
        elif kind == "velocities":
            result = _transform_rows(values, scaling @ rotation)
        elif kind == "sizes":
            result = np.asarray(values, np.float64) * scale
        elif kind == "orientation":
            if self._rotation is None:
                return values
            result = wrap_angles(np.asarray(values, np.float64) + angle)
        elif kind == "world_to_ego":
            result = augmentation @ np.asarray(values, np.float64)
        else:  # matrices mapping the moved ego points: the inverse on the right
            result = np.asarray(values, np.float64) @ np.linalg.inv(augmentation)
        return result.astype(values.dtype)

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        draws = self._draws()
        nodes = [i for i, d in enumerate(draws) if not isinstance(d, (int, float))]
        constants = {i: float(d) for i, d in enumerate(draws) if i not in nodes}
        for kind, names in self._fields.items():
            for name in names:
                for path in data.find_all_occurrences(name):

                    def apply(values: np.ndarray, *drawn: np.ndarray, kind: str = kind) -> Any:
                        params = dict(constants)
                        for index, value in zip(nodes, drawn, strict=True):
                            params[index] = float(np.asarray(value).reshape(-1)[0])
                        return self._transform(kind, values, [params[i] for i in range(5)])

                    inputs = [draws[i] for i in nodes]
                    result = fn.python_function(
                        data.get_item_in_path(path), *inputs, function=apply
                    )
                    data.set_item_in_path(path, result)
        return data

    def __repr__(self) -> str:
        return f"BEVBBoxesTransformer3D({self._fields!r})"
