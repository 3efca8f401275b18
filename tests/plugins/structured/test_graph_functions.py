"""The graph functions (ACCV-Lab's ``numba_operators`` names) inside a pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import fn, pipeline_def, types
from feedline.core.errors import OperatorError
from feedline.structured.operators_impl import numba_operators as ops

BOXES = np.array([[0, 0, 10, 10], [2, 2, 4, 4], [30, 30, 40, 44]], np.float32)


def run(define, batch: int = 2) -> list[np.ndarray]:
    pipe = pipeline_def(define, batch_size=batch, num_threads=1, device_id=None)()
    pipe.build()
    outputs = [tl.as_array() if tl.is_dense_tensor() else tl.at(0) for tl in pipe.run()]
    pipe.close()
    return outputs


def constant(array: np.ndarray):
    return fn.external_source(source=lambda: [array, array], batch=True)


def test_box_functions_in_a_pipeline() -> None:
    def define():
        boxes = constant(BOXES)
        depths = constant(np.array([5.0, 1.0, 2.0], np.float32))
        hw = constant(np.array([20, 20], np.int32))
        large = ops.check_minimum_bbox_size(boxes, 3.0, hw)
        return (
            ops.check_bbox_visibiity(boxes, depths, hw),
            large,
            ops.check_points_in_box(boxes[:, 0:2], [0.0, 0.0], [20.0, 20.0]),
            ops.crop_coordinates(boxes, [0, 0, 0, 0], [20, 20, 20, 20], types.FLOAT),
            ops.get_center_from_bboxes(boxes),
            ops.get_radii_from_bboxes(boxes, scaling_factor=0.5),
            ops.remove_inactive(boxes, large, 0, 2, types.FLOAT),
            ops.pad_to_size(boxes, 2, types.FLOAT, 5),
        )

    visible, large, inside, cropped, centres, radii, kept, padded = run(define)
    assert visible[0].tolist() == [True, True, False]
    assert visible.dtype == np.bool_
    assert large[0].tolist() == [True, False, False]
    assert inside[0].tolist() == [True, True, False]
    assert cropped[0][2].tolist() == [20, 20, 20, 20]
    assert np.allclose(centres[0], [[5, 5], [3, 3], [35, 37]])
    assert np.allclose(radii[0], [2.5, 0.5, 2.5])
    assert np.allclose(kept[0], BOXES[:1])
    assert padded.shape == (2, 5, 4) and not padded[0][3:].any()


def test_matrix_functions_in_a_pipeline() -> None:
    def define():
        vector = constant(np.array([0.0, 0.0, np.pi], np.float32))
        points = constant(np.array([[1.0, 2.0, 3.0]], np.float32))
        rotation = ops.get_rot_mat_from_rot_vector(vector, as_homog=True)
        moved = ops.apply_matrix(points, rotation, True, True, False, False, False)
        return (
            rotation,
            moved,
            ops.get_translation_mat_from_vector(vector),
            ops.get_scaling_mat_from_vector(vector),
            ops.ensure_range(vector, -1.0, 1.0, 2.0, 1, types.FLOAT),
            ops.replace_nans(constant(np.array([np.nan, 1.0], np.float32)), 7.0, 1),
        )

    rotation, moved, translation, scaling, wrapped, replaced = run(define)
    assert rotation.shape == (2, 4, 4)
    assert np.allclose(moved[0], [[-1, -2, 3]], atol=1e-5)
    assert translation[0][2, 3] == pytest.approx(np.pi)
    assert np.allclose(np.diag(scaling[0]), [0, 0, np.pi])
    assert np.allclose(wrapped[0], [0, 0, np.pi - 4], atol=1e-6)
    assert replaced[0].tolist() == [7.0, 1.0]


def test_wrong_dimensions_and_types_name_the_function() -> None:
    with pytest.raises(OperatorError, match="pad_to_size: expected 3-D data"):
        run(lambda: ops.pad_to_size(constant(BOXES), 3, types.FLOAT, 4))
    with pytest.raises(OperatorError, match="crop_coordinates: expected data of type int32"):
        run(lambda: ops.crop_coordinates(constant(BOXES), [0] * 4, [1] * 4, types.INT32))
    with pytest.raises(ValueError, match="num_dims must be greater than 0"):
        ops.replace_nans(None, 0.0, 0)


def test_upstream_module_paths_reach_the_one_implementation() -> None:
    from feedline.plugins.structured import array_functions, graph_functions
    from feedline.structured.operators_impl.numba_operators import numba_operators
    from feedline.structured.operators_impl.python_operator_functions import (
        python_operator_functions,
    )

    for facade, implementation in (
        (ops, graph_functions),
        (numba_operators, graph_functions),
        (python_operator_functions, array_functions),
    ):
        assert facade.__all__ == implementation.__all__
        for name in implementation.__all__:
            assert getattr(facade, name) is getattr(implementation, name)
