"""Graph functions for structured pipelines: take data nodes, add operators, return data nodes.

These are ACCV-Lab's ``numba_operators``, under their names and with their arguments. Upstream
compiles each with Numba into DALI's ``numba_function``; here each is one CPU
``python_function`` over a vectorised NumPy kernel of
:mod:`feedline.plugins.structured.array_functions`, so Numba is not needed. The ``num_dims`` and
``data_type`` arguments upstream's Numba operators need are accepted and checked against the
data when it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from feedline.core.types import to_numpy_dtype
from feedline.plugins.structured import array_functions as kernels
from feedline.types import DataType

__all__ = [
    "_apply_matrix_2d_input_ensured",
    "apply_matrix",
    "check_bbox_visibiity",
    "check_minimum_bbox_size",
    "check_points_in_box",
    "crop_coordinates",
    "ensure_range",
    "get_center_from_bboxes",
    "get_radii_from_bboxes",
    "get_rot_mat_from_rot_vector",
    "get_scaling_mat_from_vector",
    "get_translation_mat_from_vector",
    "pad_to_size",
    "remove_inactive",
    "replace_nans",
]


def _checked(
    kernel: Callable[..., Any], who: str, num_dims: int | None, data_type: DataType | None
) -> Callable[..., Any]:
    """``kernel`` behind a check that its first input has ``num_dims`` dims and ``data_type``."""
    expected = None if data_type is None else to_numpy_dtype(data_type)

    def run(data: np.ndarray, *rest: np.ndarray) -> Any:
        if num_dims is not None and data.ndim != num_dims:
            raise ValueError(f"{who}: expected {num_dims}-D data, got shape {data.shape}")
        if expected is not None and data.dtype != expected:
            raise TypeError(f"{who}: expected data of type {expected}, got {data.dtype}")
        return kernel(data, *rest)

    return run


def _call(kernel: Callable[..., Any], *inputs: Any) -> Any:
    from feedline import fn

    return fn.python_function(*inputs, function=kernel)


def _positive_dims(num_dims: int, who: str) -> None:
    if num_dims <= 0:
        raise ValueError(f"{who}: num_dims must be greater than 0, got {num_dims}")


def pad_to_size(input: Any, num_dims: int, data_type: DataType, size: int) -> Any:
    """``input`` cut or zero-padded to ``size`` along the first axis."""
    _positive_dims(num_dims, "pad_to_size")
    kernel = partial(kernels.pad_first_axis, size=int(size))
    return _call(_checked(kernel, "pad_to_size", num_dims, data_type), input)


def remove_inactive(
    data: Any, active_mask: Any, masked_dimension: int, num_dims: int, data_type: DataType
) -> Any:
    """The elements of ``data`` along ``masked_dimension`` whose mask entry is true."""
    _positive_dims(num_dims, "remove_inactive")
    if not 0 <= masked_dimension < num_dims:
        raise ValueError(
            f"remove_inactive: masked_dimension must be in [0, {num_dims}), got {masked_dimension}"
        )
    kernel = partial(kernels.keep_active, axis=int(masked_dimension))
    return _call(_checked(kernel, "remove_inactive", num_dims, data_type), data, active_mask)


def ensure_range(
    data: Any,
    min_value: float,
    max_value: float,
    period: float,
    num_dims: int,
    data_type: DataType,
) -> Any:
    """Periodic values (angles) moved by whole periods into ``[min_value, max_value]``."""
    if period <= 0:
        raise ValueError(f"ensure_range: period must be positive, got {period}")
    kernel = partial(kernels.wrap_into_range, low=min_value, high=max_value, period=float(period))
    return _call(_checked(kernel, "ensure_range", num_dims, data_type), data)


def replace_nans(
    data: Any, replacement_value: float, num_dims: int, data_type: DataType = DataType.FLOAT
) -> Any:
    """``data`` with every NaN replaced by ``replacement_value``."""
    _positive_dims(num_dims, "replace_nans")

    def kernel(values: np.ndarray) -> np.ndarray:
        return np.where(np.isnan(values), values.dtype.type(replacement_value), values)

    return _call(_checked(kernel, "replace_nans", num_dims, data_type), data)


def check_bbox_visibiity(
    bboxes: Any, depths: Any, image_hw: Any, shrink_bbox_to_obtain_int_coords: bool = False
) -> Any:
    """Per box, whether nearer boxes leave some of it visible in the image (a BOOL mask).

    Args:
        bboxes: FLOAT ``(N, 4)`` rows ``x1, y1, x2, y2`` (corners in any order).
        depths: FLOAT ``(N,)`` distances; nearer boxes cover farther ones.
        image_hw: INT32 ``(height, width)``.
        shrink_bbox_to_obtain_int_coords: round box edges inwards (else outwards).
    """
    kernel = partial(kernels.visible_boxes, shrink=bool(shrink_bbox_to_obtain_int_coords))
    return _call(
        _checked(kernel, "check_bbox_visibiity", 2, DataType.FLOAT), bboxes, depths, image_hw
    )


def check_minimum_bbox_size(bboxes: Any, min_size: float, image_hw: Any) -> Any:
    """Per box clipped to the image, whether both sides are at least ``min_size`` (BOOL)."""
    kernel = partial(kernels.large_enough_boxes, min_size=float(min_size))
    return _call(_checked(kernel, "check_minimum_bbox_size", 2, DataType.FLOAT), bboxes, image_hw)


def check_points_in_box(points: Any, min_point: Sequence[float], max_point: Sequence[float]) -> Any:
    """Per point (row), whether every coordinate is within ``[min_point, max_point]`` (BOOL)."""
    low, high = np.asarray(min_point, np.float64), np.asarray(max_point, np.float64)

    def kernel(values: np.ndarray) -> np.ndarray:
        return np.all((values >= low) & (values <= high), axis=1)

    return _call(_checked(kernel, "check_points_in_box", 2, DataType.FLOAT), points)


def crop_coordinates(
    points: Any, min_point_np: Sequence[float], max_point_np: Sequence[float], dtype: DataType
) -> Any:
    """Each column of ``points`` clipped to its ``[min, max]`` (e.g. boxes as two points)."""
    low, high = np.asarray(min_point_np), np.asarray(max_point_np)

    def kernel(values: np.ndarray) -> np.ndarray:
        return np.clip(values, low, high).astype(values.dtype)

    return _call(_checked(kernel, "crop_coordinates", 2, dtype), points)


def get_rot_mat_from_rot_vector(rot_vector: Any, as_homog: bool = False, eps: float = 1e-7) -> Any:
    """The rotation matrix (3x3, or 4x4 with ``as_homog``) of a Rodrigues vector."""
    kernel = partial(kernels.rotation_from_vector, as_homog=bool(as_homog), eps=float(eps))
    return _call(_checked(kernel, "get_rot_mat_from_rot_vector", 1, DataType.FLOAT), rot_vector)


def get_translation_mat_from_vector(translation: Any) -> Any:
    """The 4x4 homogeneous translation matrix of a 3-vector."""
    kernel = _checked(
        kernels.translation_from_vector, "get_translation_mat_from_vector", 1, DataType.FLOAT
    )
    return _call(kernel, translation)


def get_scaling_mat_from_vector(scaling: Any, as_homog: bool = False) -> Any:
    """The diagonal scaling matrix (3x3, or 4x4 with ``as_homog``) of three factors."""
    kernel = partial(kernels.scaling_from_vector, as_homog=bool(as_homog))
    return _call(_checked(kernel, "get_scaling_mat_from_vector", 1, DataType.FLOAT), scaling)


def _apply_matrix(to_apply_to: Any, matrix: Any, flags: tuple[bool, ...], ndim: int | None) -> Any:
    kernel = partial(kernels.matrix_applied, **dict(zip(_FLAG_NAMES, flags, strict=True)))
    checked = _checked(kernel, "apply_matrix", ndim, DataType.FLOAT)
    return _call(checked, to_apply_to, matrix)


_FLAG_NAMES = (
    "homogeneous",
    "data_transposed",
    "matrix_transposed",
    "matrix_inverted",
    "from_right",
)


def _apply_matrix_2d_input_ensured(
    to_apply_to: Any,
    matrix: Any,
    in_homog: bool,
    to_apply_to_is_transposed: bool,
    matrix_is_transposed: bool,
    matrix_is_inverted: bool,
    multiply_matrix_from_right: bool,
) -> Any:
    """:func:`apply_matrix` for 2-D data only (ACCV-Lab exports this helper too)."""
    flags = (
        in_homog,
        to_apply_to_is_transposed,
        matrix_is_transposed,
        matrix_is_inverted,
        multiply_matrix_from_right,
    )
    return _apply_matrix(to_apply_to, matrix, tuple(bool(f) for f in flags), 2)


def apply_matrix(
    to_apply_to: Any,
    matrix: Any,
    make_apply_to_homog: bool,
    to_apply_to_is_transposed: bool,
    matrix_is_transposed: bool,
    matrix_is_inverted: bool,
    multiply_matrix_from_right: bool,
) -> Any:
    """A matrix applied to a vector (1-D, a column) or to a matrix of points (FLOAT).

    Args:
        to_apply_to: the data.
        matrix: the matrix.
        make_apply_to_homog: add a row of ones first, divide by the last row after.
        to_apply_to_is_transposed: the data holds one point per row (transposed around it).
        matrix_is_transposed: use the matrix transposed.
        matrix_is_inverted: use the matrix inverted.
        multiply_matrix_from_right: ``data @ matrix`` instead of ``matrix @ data``.
    """
    flags = (
        make_apply_to_homog,
        to_apply_to_is_transposed,
        matrix_is_transposed,
        matrix_is_inverted,
        multiply_matrix_from_right,
    )
    return _apply_matrix(to_apply_to, matrix, tuple(bool(f) for f in flags), None)


def get_center_from_bboxes(bboxes: Any, dtype_in: DataType = DataType.FLOAT) -> Any:
    """FLOAT ``(N, 2)`` midpoints of ``x1, y1, x2, y2`` rows."""
    return _call(_checked(kernels.box_centres, "get_center_from_bboxes", 2, dtype_in), bboxes)


def get_radii_from_bboxes(
    bboxes: Any,
    dtype_bboxes: DataType = DataType.FLOAT,
    scaling_factor: float = 0.8,
    centers: Any | None = None,
    dtype_center: DataType = DataType.FLOAT,
) -> Any:
    """FLOAT ``(N,)``: ``scaling_factor`` times the distance from the centre to the nearest edge.

    ``centers`` defaults to the boxes' midpoints; a centre outside its box gives 0.
    """
    if centers is None:
        centers = get_center_from_bboxes(bboxes, dtype_in=dtype_bboxes)
    centre_type = to_numpy_dtype(dtype_center)

    def kernel(boxes: np.ndarray, centres: np.ndarray) -> np.ndarray:
        if centres.dtype != centre_type:
            raise TypeError(
                "get_radii_from_bboxes: expected centers of type "
                f"{centre_type}, got {centres.dtype}"
            )
        return kernels.box_radii(boxes, centres, float(scaling_factor))

    return _call(_checked(kernel, "get_radii_from_bboxes", 2, dtype_bboxes), bboxes, centers)
