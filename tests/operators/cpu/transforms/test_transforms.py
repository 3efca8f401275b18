"""``transforms.*``: the matrices map points as each transform's definition says."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn, pipeline_def
from feedline.testing import OperatorExample, check_operator

finite = st.floats(-50, 50, allow_nan=False, width=32)


def build(graph: Callable[[], Any], batch_size: int = 2, num_threads: int = 2) -> list:
    """Run ``graph`` in a one-iteration pipeline; each output as (samples, layout)."""

    @pipeline_def(batch_size=batch_size, num_threads=num_threads, device_id=None)
    def pipe() -> Any:
        return graph()

    built = pipe()
    built.build()
    outputs = built.run()
    return [([np.array(o.at(i)) for i in range(len(o))], o.layout()) for o in outputs]


def feed(samples: Sequence[np.ndarray], layout: str | None = None) -> Any:
    arrays = [np.asarray(s) for s in samples]
    return fn.external_source(source=lambda: arrays, batch=True, layout=layout)


def apply(matrix: np.ndarray, point: Sequence[float]) -> np.ndarray:
    """Map ``point`` with an ``(ndim, ndim + 1)`` affine matrix."""
    return matrix[:, :-1].astype(np.float64) @ np.asarray(point, np.float64) + matrix[:, -1]


def single(graph: Callable[[], Any]) -> np.ndarray:
    ((samples, layout),) = build(graph, batch_size=1)
    assert layout == "**"
    assert samples[0].dtype == np.float32
    return samples[0]


@given(st.lists(finite, min_size=1, max_size=3), st.lists(finite, min_size=3, max_size=3))
@settings(max_examples=25, deadline=None)
def test_translation_moves_every_point_by_the_offset(offset: list, point: list) -> None:
    matrix = single(lambda: fn.transforms.translation(offset=offset))
    ndim = len(offset)
    assert matrix.shape == (ndim, ndim + 1)
    np.testing.assert_allclose(
        apply(matrix, point[:ndim]), np.add(point[:ndim], offset), rtol=1e-5, atol=1e-4
    )


@given(
    st.lists(finite, min_size=2, max_size=2),
    st.lists(finite, min_size=2, max_size=2),
    st.lists(finite, min_size=2, max_size=2),
)
@settings(max_examples=25, deadline=None)
def test_scale_keeps_the_center_and_scales_distances(factors: list, center: list, point: list):
    matrix = single(lambda: fn.transforms.scale(scale=factors, center=center))
    np.testing.assert_allclose(apply(matrix, center), center, rtol=1e-5, atol=1e-3)
    moved = apply(matrix, point) - np.asarray(center)
    np.testing.assert_allclose(
        moved, np.multiply(factors, np.subtract(point, center)), rtol=1e-5, atol=1e-2
    )


@given(st.floats(-360, 360, width=32), st.lists(finite, min_size=2, max_size=2))
@settings(max_examples=25, deadline=None)
def test_2d_rotation_turns_counter_clockwise_about_the_center(angle: float, center: list) -> None:
    matrix = single(lambda: fn.transforms.rotation(angle=angle, center=center))
    np.testing.assert_allclose(apply(matrix, center), center, atol=1e-3)
    turned = apply(matrix, np.add(center, [1.0, 0.0])) - center
    radians = np.deg2rad(angle)
    np.testing.assert_allclose(turned, [np.cos(radians), np.sin(radians)], atol=1e-5)


def test_3d_rotation_follows_the_right_hand_rule_and_keeps_the_axis() -> None:
    matrix = single(lambda: fn.transforms.rotation(angle=90, axis=[0, 0, 5]))
    np.testing.assert_allclose(apply(matrix, [1, 0, 0]), [0, 1, 0], atol=1e-6)
    tilted = single(lambda: fn.transforms.rotation(angle=37, axis=[1, 2, 2], center=[1, 1, 1]))
    np.testing.assert_allclose(apply(tilted, [2, 3, 3]), [2, 3, 3], atol=1e-5)  # on the axis
    linear = tilted[:, :3].astype(np.float64)
    np.testing.assert_allclose(linear @ linear.T, np.eye(3), atol=1e-6)
    assert np.linalg.det(linear) == pytest.approx(1.0, abs=1e-6)


def test_shear_factors_and_angles() -> None:
    two = single(lambda: fn.transforms.shear(shear=[0.5, 0.2], center=[3, 4]))
    np.testing.assert_allclose(two, [[1, 0.5, -2], [0.2, 1, -0.6]], atol=1e-6)
    three = single(lambda: fn.transforms.shear(shear=[1, 2, 3, 4, 5, 6]))
    np.testing.assert_array_equal(three[:, :3], [[1, 1, 2], [3, 1, 4], [5, 6, 1]])
    angles = single(lambda: fn.transforms.shear(angles=[45, -30]))
    np.testing.assert_allclose(angles[:, :2], [[1, 1], [-np.tan(np.pi / 6), 1]], atol=1e-6)


@given(
    st.lists(st.tuples(finite, finite, finite, finite), min_size=3, max_size=3),
    st.booleans(),
)
@settings(max_examples=25, deadline=None)
def test_crop_maps_one_box_onto_the_other(boxes: list, absolute: bool) -> None:
    from_start, from_end, to_start, to_end = (list(v) for v in zip(*boxes, strict=True))
    if absolute:
        from_start, from_end = np.minimum(from_start, from_end), np.maximum(from_start, from_end)
        to_start, to_end = np.minimum(to_start, to_end), np.maximum(to_start, to_end)
    elif any(abs(a - b) < 1e-3 for a, b in zip(from_start, from_end, strict=True)):
        return  # a flat box has no inverse: checked separately
    if np.any(np.abs(np.subtract(from_end, from_start)) < 1e-3):
        return
    matrix = single(
        lambda: fn.transforms.crop(
            from_start=list(map(float, from_start)),
            from_end=list(map(float, from_end)),
            to_start=list(map(float, to_start)),
            to_end=list(map(float, to_end)),
            absolute=absolute,
        )
    )
    assert matrix.shape == (3, 4)
    np.testing.assert_allclose(apply(matrix, from_start), to_start, rtol=1e-3, atol=0.05)
    np.testing.assert_allclose(apply(matrix, from_end), to_end, rtol=1e-3, atol=0.05)


def test_crop_broadcasts_single_values_and_flat_boxes_give_infinity() -> None:
    matrix = single(lambda: fn.transforms.crop(from_start=[10, 20, 30], from_end=110))
    np.testing.assert_allclose(apply(matrix, [110, 110, 110]), [1, 1, 1], atol=1e-6)
    flat = single(lambda: fn.transforms.crop(from_start=[1, 2], from_end=[1, 3]))
    assert np.isinf(flat[0, 0]) and flat[1, 1] == 1.0


@given(st.lists(finite, min_size=2, max_size=2), st.booleans())
@settings(max_examples=20, deadline=None)
def test_combine_and_reverse_order_apply_transforms_in_sequence(point: list, reverse: bool):
    def graph() -> Any:
        shift = fn.transforms.translation(offset=[1, 2])
        grow = fn.transforms.scale(scale=[2, 3])
        turn = fn.transforms.rotation(angle=90)
        return (
            fn.transforms.combine(shift, grow, turn, reverse_order=reverse),
            fn.transforms.rotation(fn.transforms.scale(shift, scale=[2, 3]), angle=90),
            fn.transforms.translation(grow, offset=[1, 2], reverse_order=True),
        )

    (combined, _), (chained, _), (translated, _) = build(graph, batch_size=1)
    steps = [np.add(point, [1, 2]), None, None]
    steps[1] = np.multiply(steps[0], [2, 3])
    steps[2] = [-steps[1][1], steps[1][0]]
    if reverse:  # the last transform first
        first = [-point[1], point[0]]
        want = np.add(np.multiply(first, [2, 3]), [1, 2])
    else:
        want = steps[2]
    np.testing.assert_allclose(apply(combined[0], point), want, atol=1e-3)
    np.testing.assert_allclose(apply(chained[0], point), steps[2], atol=1e-3)
    # reverse_order: the input (scale) is applied after the translation
    np.testing.assert_allclose(apply(translated[0], point), steps[1], atol=1e-3)


def test_per_sample_arguments_and_coord_transform() -> None:
    angles = [np.float32(90), np.float32(180)]
    points = [np.array([[1, 0], [0, 2]], np.float32)] * 2

    def graph() -> Any:
        matrix = fn.transforms.rotation(angle=feed(angles))
        return matrix, fn.coord_transform(feed(points), MT=matrix)

    (matrices, layout), (moved, _) = build(graph)
    assert layout == "**" and [m.shape for m in matrices] == [(2, 3), (2, 3)]
    np.testing.assert_allclose(moved[0], [[0, 1], [-2, 0]], atol=1e-6)
    np.testing.assert_allclose(moved[1], [[-1, 0], [0, -2]], atol=1e-6)


def test_scale_dimensions_come_from_scale_input_or_ndim() -> None:
    assert single(lambda: fn.transforms.scale(scale=2)).shape == (1, 2)
    assert single(lambda: fn.transforms.scale(scale=2, ndim=3)).shape == (3, 4)
    (((out,), _),) = build(
        lambda: fn.transforms.scale(feed([np.eye(2, 3, dtype=np.float32)]), scale=2), 1
    )
    np.testing.assert_array_equal(out, [[2, 0, 0], [0, 2, 0]])


def test_sequences_of_input_transforms_give_sequences() -> None:
    frames = np.stack([np.eye(2, 3, dtype=np.float32) * (k + 1) for k in range(3)])
    (((out,), layout),) = build(
        lambda: fn.transforms.translation(feed([frames], "F**"), offset=[1, 2]), 1
    )
    assert layout == "F**" and out.shape == (3, 2, 3)
    np.testing.assert_array_equal(out[2], [[3, 0, 1], [0, 3, 2]])


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        (
            lambda: fn.transforms.translation(feed([np.eye(2, 3, dtype=np.float32)]), offset=[1]),
            "the input describes a 2D transform but the arguments describe a 1D transform",
        ),
        (
            lambda: fn.transforms.translation(feed([np.eye(2, 3)]), offset=[1, 2]),
            "input 0 must be float32 transforms, got float64",
        ),
        (
            lambda: fn.transforms.translation(feed([np.eye(3, dtype=np.float32)]), offset=[1, 2]),
            r"must hold \(ndim, ndim \+ 1\) matrices",
        ),
        (lambda: fn.transforms.scale(scale=2, center=[1, 2]), "argument 'center' has 2 values"),
        (lambda: fn.transforms.rotation(angle=9, center=[1, 2, 3]), "cannot be interpreted"),
        (lambda: fn.transforms.shear(shear=[1, 2, 3]), r"D \* \(D - 1\) values"),
        (lambda: fn.transforms.crop(from_start=[1, 2], from_end=[1, 2, 3]), "same number"),
        (
            lambda: fn.transforms.combine(
                fn.transforms.translation(offset=[1, 2]), fn.transforms.scale(scale=[1, 2, 3])
            ),
            "all input transforms must have the same shape",
        ),
    ],
)
def test_bad_arguments_name_the_problem(graph: Callable[[], Any], message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        build(graph, batch_size=1)


@pytest.mark.parametrize("given", [{}, {"shear": [1, 2], "angles": [1, 2]}])
def test_shear_needs_exactly_one_of_shear_and_angles(given: dict) -> None:
    with pytest.raises(ValueError, match="one and only one of the arguments 'shear' and 'angles'"):
        build(lambda: fn.transforms.shear(**given), batch_size=1)


def test_combine_needs_two_inputs() -> None:
    with pytest.raises(TypeError, match="expected at least 2 input"):
        build(lambda: fn.transforms.combine(fn.transforms.translation(offset=[1])), 1)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("translation", {"offset": [1.0, 2.0]}),
        ("scale", {"scale": [2.0, 3.0], "center": [1.0, 1.0]}),
        ("rotation", {"angle": 30.0, "axis": [0.0, 1.0, 1.0]}),
        ("shear", {"angles": [10.0, 20.0]}),
        ("crop", {"from_start": [5.0, 5.0], "from_end": [50.0, 60.0]}),
    ],
)
def test_check_operator(name: str, args: dict) -> None:
    assert "threads" in check_operator(f"transforms.{name}", OperatorExample(args=args))


def test_check_operator_combine() -> None:
    rng = np.random.default_rng(1)
    batch = [rng.normal(size=(2, 3)).astype(np.float32) for _ in range(3)]
    example = OperatorExample([batch, batch[::-1]], args={"reverse_order": True})
    assert "threads" in check_operator("transforms.combine", example)


def test_per_frame_arguments_give_one_matrix_per_frame() -> None:
    angles = [np.array([0, 90, 180], np.float32)]
    frames = np.stack([np.eye(2, 3, dtype=np.float32) * (k + 1) for k in range(3)])

    def graph() -> Any:
        per_frame = fn.per_frame(feed(angles))
        return (
            fn.transforms.rotation(angle=per_frame),
            fn.transforms.rotation(feed([frames], "F**"), angle=per_frame),
            fn.transforms.rotation(feed([frames], "F**"), angle=fn.per_frame(feed([[90.0]]))),
        )

    (alone, layout), (composed, _), (single_frame, _) = build(graph, batch_size=1)
    assert layout == "F**" and alone[0].shape == (3, 2, 3)
    np.testing.assert_allclose(apply(alone[0][1], [1, 0]), [0, 1], atol=1e-6)
    np.testing.assert_allclose(apply(composed[0][2], [1, 0]), [-3, 0], atol=1e-5)
    np.testing.assert_allclose(apply(single_frame[0][2], [1, 0]), [0, 3], atol=1e-5)


def test_per_frame_values_must_match_the_frames() -> None:
    frames = np.stack([np.eye(2, 3, dtype=np.float32)] * 2)

    def graph() -> Any:
        angle = fn.per_frame(feed([np.array([0, 90, 180], np.float32)]))
        return fn.transforms.rotation(feed([frames], "F**"), angle=angle)

    message = "contains 3 per-frame parameters, but there are 2 frames in the corresponding sample"
    with pytest.raises(OperatorError, match=message):
        build(graph, batch_size=1)


def test_per_sample_shear_may_be_a_matrix() -> None:
    factors = [np.array([[0.5], [0.25]], np.float32), np.array([[1.0], [-1.0]], np.float32)]
    ((out, _),) = build(lambda: fn.transforms.shear(shear=feed(factors)), batch_size=2)
    np.testing.assert_allclose(out[0][:, :2], [[1, 0.5], [0.25, 1]])
    np.testing.assert_allclose(out[1][:, :2], [[1, 1], [-1, 1]])
