"""``coord_transform`` and ``coord_flip`` against element-wise formulas."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import fn, types
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.geometry.bindings import affine_points_f32
from feedline.operators.cpu.geometry.coords import (
    flip_coords,
    transform_batch,
    transform_matrix,
    transform_points,
)
from tests.operators.cpu.boxes_testing import run_pipeline, use_boxes
from tests.operators.cpu.families import use_families

coordinate = st.floats(-100, 100, allow_nan=False, width=32)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_boxes(empty_plugin_system)


def reference_transform(points: np.ndarray, m: np.ndarray, t: np.ndarray) -> np.ndarray:
    flat = points.reshape(-1, points.shape[-1]).astype(np.float64)
    out = np.zeros((flat.shape[0], m.shape[0]))
    for p, point in enumerate(flat):
        for i in range(m.shape[0]):
            out[p, i] = sum(m[i, j] * point[j] for j in range(m.shape[1])) + t[i]
    return out.reshape(*points.shape[:-1], m.shape[0])


@settings(max_examples=60)
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_transform_matches_formula(n: int, m: int, data: st.DataObject) -> None:
    points = data.draw(
        hnp.arrays(np.float32, (data.draw(st.integers(0, 5)), n), elements=coordinate)
    )
    matrix = data.draw(hnp.arrays(np.float64, (m, n), elements=st.floats(-3, 3)))
    shift = data.draw(hnp.arrays(np.float64, (m,), elements=st.floats(-3, 3)))
    expected = reference_transform(points, matrix, shift)
    for affine in (
        transform_matrix(n, matrix.ravel().tolist(), shift.tolist(), None),
        transform_matrix(n, matrix, shift, None),
        transform_matrix(n, None, None, np.concatenate([matrix, shift[:, None]], 1).ravel()),
    ):
        out = transform_points(points, affine, types.FLOAT)
        assert out.dtype == np.float32 and out.shape == (points.shape[0], m)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-3)


def test_scalar_and_default_forms() -> None:
    points = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    np.testing.assert_array_equal(
        transform_points(points, transform_matrix(3, None, None, None), types.FLOAT), points
    )
    np.testing.assert_allclose(
        transform_points(points, transform_matrix(3, 2.0, 1.0, None), types.FLOAT64),
        points * 2.0 + 1.0,
    )
    np.testing.assert_allclose(
        transform_points(points, transform_matrix(3, None, None, 0.5), types.FLOAT), points * 0.5
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((2, [1.0, 2.0, 3.0], None, None), "cannot form a matrix of 2 columns"),
        ((2, np.ones((2, 3)), None, None), "has 3 columns"),
        ((2, [1.0, 0.0, 0.0, 1.0], [1.0, 2.0, 3.0], None), "T has 3 values; M has 2 rows"),
        ((2, 1.0, None, [1.0] * 6), "MT cannot be combined"),
    ],
)
def test_transform_matrix_errors(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        transform_matrix(*args)


def test_transform_points_errors() -> None:
    affine = transform_matrix(2, None, None, None)
    with pytest.raises(TypeError, match="same as input type, which is float32"):
        transform_points(np.zeros((1, 2), np.float32), affine, types.INT32)
    with pytest.raises(TypeError, match="must be numeric"):
        transform_points(np.zeros((1, 2), np.bool_), affine, types.FLOAT)
    with pytest.raises(ValueError, match="expects 2-component points"):
        transform_points(np.zeros((1, 3), np.float32), affine, types.FLOAT)


@settings(max_examples=60)
@given(st.integers(1, 3), st.data())
def test_flip_matches_formula(ndim: int, data: st.DataObject) -> None:
    coords = data.draw(
        hnp.arrays(np.float32, (data.draw(st.integers(0, 5)), ndim), elements=coordinate)
    )
    layout = "".join(data.draw(st.permutations("xyz"))[:ndim])
    flips = {axis: data.draw(st.booleans()) for axis in "xyz"}
    centres = {axis: data.draw(st.floats(-1, 1)) for axis in "xyz"}
    out = flip_coords(coords, layout, flips, centres)
    for column, axis in enumerate(layout):
        expected = 2 * centres[axis] - coords[:, column] if flips[axis] else coords[:, column]
        np.testing.assert_allclose(out[:, column], expected, rtol=1e-5, atol=1e-4)


def test_flip_errors() -> None:
    flags = dict.fromkeys("xyz", True)
    centres = dict.fromkeys("xyz", 0.5)
    with pytest.raises(ValueError, match="layout 'xx'"):
        flip_coords(np.zeros((1, 2), np.float32), "xx", flags, centres)
    with pytest.raises(ValueError, match=r"shape \(N, 1..3\)"):
        flip_coords(np.zeros((1, 4), np.float32), "", flags, centres)
    with pytest.raises(TypeError, match="floating point"):
        flip_coords(np.zeros((1, 2), np.int32), "", flags, centres)


POINTS = [np.array([[1.0, 2.0], [3.0, 4.0]], np.float32) * (i + 1) for i in range(3)]


def test_coord_transform_in_pipeline_with_per_sample_matrix() -> None:
    matrices = [
        np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], np.float32) * (i + 1) for i in range(3)
    ]

    def define() -> Any:
        points = fn.external_source(source=lambda: POINTS, layout="NX")
        return fn.coord_transform(points, M=fn.external_source(source=lambda: matrices), T=1.0)

    (out,) = run_pipeline(define, batch_size=3)[0]
    assert out.layout() == "NX"
    for i in range(3):
        expected = reference_transform(POINTS[i], matrices[i].astype(np.float64), np.ones(3))
        np.testing.assert_allclose(out.at(i), expected)


def test_coord_transform_integer_output_of_the_input_type_rounds_and_saturates() -> None:
    affine = transform_matrix(2, [1, 0, 0, 1], [0.5, 254.5], None)
    points = np.array([[1, 2], [2, 0]], np.uint8)
    assert transform_points(points, affine, types.UINT8).tolist() == [[2, 255], [3, 255]]
    signed = np.array([[2147483647, -3]], np.int32)
    rounded = transform_points(signed, transform_matrix(2, None, [0.5, -0.5], None), types.INT32)
    assert rounded.tolist() == [[2147483647, -4]]


def test_coord_transform_integer_output_of_another_type_fails_at_run() -> None:
    def define() -> Any:
        return fn.coord_transform(fn.external_source(source=lambda: POINTS), dtype=types.UINT8)

    with pytest.raises(RuntimeError, match="output type must be the same as input type"):
        run_pipeline(define, batch_size=3)


def test_coord_flip_in_pipeline() -> None:
    def define() -> Any:
        points = fn.external_source(source=lambda: POINTS)
        return fn.coord_flip(points, layout="yx", flip_x=1, flip_y=1, center_y=0.0)

    (out,) = run_pipeline(define, batch_size=3)[0]
    for i in range(3):
        expected = np.stack([-POINTS[i][:, 0], 1.0 - POINTS[i][:, 1]], axis=1)
        np.testing.assert_allclose(out.at(i), expected)


def test_per_frame_matrices_apply_to_their_own_frame(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "manipulation")
    sequences = [np.arange(12, dtype=np.float32).reshape(3, 2, 2), np.ones((2, 2, 2), np.float32)]
    scales = [np.float32([2, 3, 4]), np.float32([5])]  # the second one serves every frame
    matrices = [np.stack([np.eye(2, dtype=np.float32) * s for s in row]) for row in scales]

    def define() -> Any:
        points = fn.external_source(source=lambda: sequences, layout="FNX")
        m = fn.per_frame(fn.external_source(source=lambda: matrices))
        flat = fn.external_source(source=lambda: [s[0] for s in sequences])
        return fn.coord_transform(points, M=m), fn.coord_transform(flat, M=m)

    framed, broadcast = run_pipeline(define, batch_size=2)[0]
    assert framed.layout() == "FNX"
    for i, sequence in enumerate(sequences):
        scale = np.broadcast_to(scales[i], (len(sequence),))
        np.testing.assert_allclose(framed.at(i), sequence * scale[:, None, None])
        expected = np.stack([sequence[0] * s for s in scales[i]])
        np.testing.assert_allclose(broadcast.at(i), expected)


def test_per_frame_matrix_count_must_match_the_frames(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "manipulation")

    def define() -> Any:
        points = fn.external_source(source=lambda: [np.ones((3, 1, 2), np.float32)], layout="F**")
        matrices = fn.external_source(source=lambda: [np.ones((2, 2, 2), np.float32)])
        return fn.coord_transform(points, M=fn.per_frame(matrices))

    with pytest.raises(RuntimeError, match="contains 2 per-frame parameters, but there are 3"):
        run_pipeline(define, batch_size=1)


_FINITE = st.floats(-1e6, 1e6, width=32)


@pytest.mark.skipif(
    affine_points_f32(np.zeros((1, 1, 2), np.float32), np.zeros((1, 2, 3))) is None,
    reason="the compiled CPU library is unavailable",
)
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.booleans(), st.data())
def test_compiled_batch_transform_equals_numpy(
    n: int, m: int, shared: bool, data: st.DataObject
) -> None:
    batch = data.draw(st.integers(1, 4))
    points = data.draw(
        hnp.arrays(np.float32, (batch, data.draw(st.integers(1, 9)), n), elements=_FINITE)
    )
    affines = data.draw(
        hnp.arrays(np.float64, (1 if shared else batch, m, n + 1), elements=st.floats(-1e3, 1e3))
    )
    compiled = transform_batch(points, affines, types.FLOAT)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("feedline.operators.cpu.geometry.coords.affine_points_f32", lambda *_: None)
        reference = transform_batch(points, affines, types.FLOAT)
    assert compiled.dtype == reference.dtype == np.float32
    np.testing.assert_array_equal(compiled, reference)


def test_batch_transform_adds_in_the_order_translation_then_components() -> None:
    # Each product alone is lost against the translation, their sum is not: the translation
    # must come first (as in the NumPy path), and the float32 rounding then sits on the tie.
    tiny = 3 * 2.0**-55
    affines = np.array([[[tiny, tiny, 1 + 2.0**-24]]])
    points = np.ones((1, 1, 2), np.float32)
    out = transform_batch(points, affines, types.FLOAT)
    assert out.item() == np.float32(1.0)
