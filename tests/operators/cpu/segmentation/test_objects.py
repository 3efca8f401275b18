"""``segmentation.random_object_bbox``: blobs, boxes, classes, formats, errors, determinism."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError, fn
from feedline.operators.cpu.segmentation.blobs import blob_boxes
from feedline.operators.cpu.segmentation.objects import (
    class_table,
    distinct_values,
    pick_box,
    pick_class,
)
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed

ndimage = pytest.importorskip("scipy.ndimage", reason="the reference blobs need the test extra")


def _reference_boxes(mask: np.ndarray) -> set[tuple[int, ...]]:
    """Boxes of the face-connected blobs of ``mask``, by SciPy's default (cross) structure."""
    labels, _ = ndimage.label(mask)
    return {
        tuple(s.start for s in box) + tuple(s.stop for s in box)
        for box in ndimage.find_objects(labels)
    }


def _run(samples: list[np.ndarray], num_threads: int = 2, **kwargs: Any) -> list[list[Any]]:
    """Every output of one iteration, as lists of samples (``tolist()``)."""

    def graph() -> Any:
        out = fn.segmentation.random_object_bbox(feed(samples), **kwargs)
        return tuple(out) if isinstance(out, list) else out

    outputs = build(graph, batch_size=len(samples), num_threads=num_threads)
    return [[s.tolist() for s in out] for out, _ in outputs]


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.bool_,
        hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=7),
    )
)
def test_blobs_are_face_connected_components(mask: np.ndarray) -> None:
    boxes = blob_boxes(mask)
    assert boxes.dtype == np.int32 and boxes.shape[1] == 2 * mask.ndim
    assert sorted(map(tuple, boxes.tolist())) == sorted(_reference_boxes(mask))


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]),
        hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
    )
)
def test_distinct_values_are_numpys_unique(data: np.ndarray) -> None:
    values = distinct_values(data)
    assert values.dtype == data.dtype
    np.testing.assert_array_equal(values, np.unique(data))


def test_volumes_without_scipy_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ModuleNotFoundError, match=r"feedline\[segmentation\]"):
        blob_boxes(np.ones((2, 2, 2), bool))
    assert blob_boxes(np.ones((2, 3), bool)).tolist() == [[0, 0, 2, 3]]


def test_diagonal_neighbours_are_separate_objects() -> None:
    mask = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], np.uint8)
    (boxes,) = _run([mask] * 6, format="box")
    assert {tuple(b) for b in boxes} <= {(0, 0, 1, 1), (1, 1, 2, 2), (2, 2, 3, 3)}
    assert len({tuple(b) for b in boxes}) > 1


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(["anchor_shape", "start_end", "box"]))
def test_every_box_is_a_blob_of_its_class(seed: int, layout: str) -> None:
    rng = np.random.default_rng(seed)
    samples = [rng.integers(0, 4, rng.integers(2, 9, 2)).astype(np.int16) for _ in range(4)]
    *corners, labels = _run(samples, format=layout, output_class=True)
    for index, sample in enumerate(samples):
        if layout == "box":
            box = tuple(corners[0][index])
        elif layout == "start_end":
            box = tuple(corners[0][index] + corners[1][index])
        else:
            anchor, shape = corners[0][index], corners[1][index]
            box = tuple(anchor + [a + s for a, s in zip(anchor, shape, strict=True)])
        label = labels[index]
        if label == 0:  # no foreground: the whole sample
            assert not (sample != 0).any() and box == (0, 0, *sample.shape)
        else:
            assert box in _reference_boxes(sample == label)


def test_outputs_per_format() -> None:
    mask = np.zeros((4, 5), np.uint8)
    mask[1:3, 2:4] = 1
    assert _run([mask], format="anchor_shape") == [[[1, 2]], [[2, 2]]]
    assert _run([mask], format="start_end") == [[[1, 2]], [[3, 4]]]
    assert _run([mask], format="box", output_class=True) == [[[1, 2, 3, 4]], [1]]
    ((outputs, _), (labels, _)) = build(
        lambda: tuple(
            fn.segmentation.random_object_bbox(feed([mask]), format="box", output_class=1)
        )
    )
    assert outputs[0].dtype == np.int32 and labels[0].dtype == np.int32 and labels[0].shape == ()


def test_three_and_one_dimensional_masks() -> None:
    volume = np.zeros((3, 4, 5), np.int32)
    volume[0:2, 1:3, 2:5] = 7
    assert _run([volume], format="box") == [[[0, 1, 2, 2, 3, 5]]]
    line = np.array([0, 2, 2, 0, 2], np.uint16)
    assert _run([line] * 4, format="box", k_largest=1) == [[[1, 3]] * 4]
    six = np.zeros((2, 3, 2, 3, 2, 3), np.int8)
    six[1, 1:3, :, 2, 1, 0:2] = -4
    assert _run([six], format="box") == [[[1, 1, 0, 2, 1, 0, 2, 3, 2, 3, 2, 2]]]


def test_no_foreground_covers_the_whole_input() -> None:
    mask = np.zeros((3, 4), np.uint8)
    assert _run([mask], output_class=True) == [[[0, 0]], [[3, 4]], [0]]
    busy = np.ones((3, 4), np.uint8)
    never = _run([busy] * 3, foreground_prob=0.0, output_class=True, background=5)
    assert never == [[[0, 0]] * 3, [[3, 4]] * 3, [5] * 3]


def test_threshold_and_k_largest() -> None:
    mask = np.zeros((6, 8), np.uint8)
    mask[0, 0] = 1  # 1 x 1
    mask[2:4, 0:3] = 1  # 2 x 3
    mask[5, 1:8] = 1  # 1 x 7
    assert _run([mask] * 4, format="box", k_largest=1) == [[[5, 1, 6, 8]] * 4]
    assert _run([mask] * 4, format="box", threshold=2) == [[[2, 0, 4, 3]] * 4]
    assert _run([mask] * 4, format="box", threshold=[1, 4]) == [[[5, 1, 6, 8]] * 4]
    wide = _run([mask], format="box", threshold=[3, 3], output_class=True)
    assert wide == [[[0, 0, 6, 8]], [0]]


def test_a_class_without_a_passing_blob_gives_way() -> None:
    mask = np.zeros((5, 5), np.uint8)
    mask[0, 0] = 1
    mask[2:5, 2:5] = 2
    out = _run([mask] * 6, format="box", threshold=2, output_class=True)
    assert out == [[[2, 2, 5, 5]] * 6, [2] * 6]


def test_classes_and_weights_choose_the_label() -> None:
    mask = np.array([[1, 0, 2], [0, 3, 0]], np.int32)
    labels = _run([mask] * 8, classes=[3, 2], class_weights=[0.0, 1.0], output_class=True)[-1]
    assert labels == [2] * 8
    labels = _run([mask] * 8, class_weights=[0.0, 0.0, 1.0], output_class=True)[-1]
    assert labels == [3] * 8  # weights without classes name labels 1, 2, 3


def test_ignore_class_picks_among_all_objects() -> None:
    mask = np.array([[1, 1, 2], [0, 0, 2]], np.uint8)
    (boxes,) = _run([mask] * 8, format="box", ignore_class=True, k_largest=2)
    assert {tuple(b) for b in boxes} <= {(0, 0, 1, 2), (0, 2, 2, 3)}
    (boxes,) = _run([mask] * 4, format="box", ignore_class=True, background=2)
    assert {tuple(b) for b in boxes} <= {(0, 0, 1, 2), (1, 0, 2, 2)}


@pytest.mark.parametrize(
    ("background", "classes", "weights", "expected"),
    [
        (None, None, None, (0, [], [])),
        (None, [1, 2], None, (0, [1, 2], [1.0, 1.0])),
        (None, [0, 1, 2], None, (-1, [0, 1, 2], [1.0, 1.0, 1.0])),
        (None, [0, -5], None, (-6, [0, -5], [1.0, 1.0])),
        (None, [-(2**31), 2**31 - 1, 0, 2**31 - 2], None, (2**31 - 3, None, None)),
        (None, None, [1, 2], (0, [1, 2], [1.0, 2.0])),
        (1, None, [1, 2, 3], (1, [0, 2, 3], [1.0, 2.0, 3.0])),
    ],
)
def test_class_table(
    background: int | None,
    classes: list[int] | None,
    weights: list[float] | None,
    expected: tuple[int, list[int] | None, list[float] | None],
) -> None:
    table = class_table(background, classes, weights)
    assert table.background == expected[0]
    if expected[1] is not None:
        assert (table.classes, table.weights) == (expected[1], expected[2])


def test_background_label_output_follows_the_classes() -> None:
    data = np.array([0, 1, 2, 3], np.uint32)
    labels = _run([data], foreground_prob=0.0, format="box", output_class=True, classes=[0, 1])
    assert labels[-1] == [-1]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 10, width=32), min_size=1, max_size=6), st.integers(0, 2**32))
def test_pick_class_never_picks_a_zero_weight(weights: list[float], seed: int) -> None:
    index = pick_class(weights, np.random.default_rng(seed))
    if sum(weights) > 0:
        assert index is not None and weights[index] > 0
    else:
        assert index is None


def test_pick_box_keeps_ties_in_order() -> None:
    boxes = np.array([[0, 0, 2, 2], [5, 5, 6, 6], [3, 3, 5, 5]], np.int32)
    picks = {tuple(pick_box(boxes, None, 2, np.random.default_rng(s))) for s in range(30)}
    assert picks == {(0, 0, 2, 2), (3, 3, 5, 5)}
    assert pick_box(boxes, np.array([3, 3]), None, np.random.default_rng(0)) is None


def test_per_sample_arguments() -> None:
    mask = np.array([[1, 0, 2], [0, 0, 2]], np.int32)

    def graph() -> Any:
        return tuple(
            fn.segmentation.random_object_bbox(
                feed([mask] * 2),
                format="box",
                output_class=True,
                classes=feed([np.int32([1]), np.int32([2])]),
                threshold=feed([np.int32([1, 1]), np.int32([2, 1])]),
                foreground_prob=feed([np.float32(1), np.float32(1)]),
            )
        )

    (boxes, _), (labels, _) = build(graph)
    assert [b.tolist() for b in boxes] == [[0, 0, 1, 1], [0, 2, 2, 3]]
    assert [int(x) for x in labels] == [1, 2]


def test_cache_does_not_change_the_outputs() -> None:
    rng = np.random.default_rng(3)
    samples = [rng.integers(0, 3, (6, 7)).astype(np.uint8) for _ in range(2)] * 3
    for kwargs in ({}, {"ignore_class": True}):
        plain = _run(samples, format="box", **kwargs)
        assert _run(samples, format="box", cache_objects=True, **kwargs) == plain


def test_same_boxes_for_any_number_of_threads() -> None:
    rng = np.random.default_rng(5)
    samples = [rng.integers(0, 5, (9, 9)).astype(np.int32) for _ in range(8)]
    kwargs = {"format": "box", "output_class": True, "foreground_prob": 0.7}
    assert _run(samples, num_threads=1, **kwargs) == _run(samples, num_threads=4, **kwargs)


_MASK = np.array([[1, 0, 0, 0], [1, 2, 2, 1]], np.int32)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"classes": [0, 1], "background": 0}, "Class label 0 coincides with background label"),
        (
            {"classes": [1, 2, 3], "class_weights": [1.0, 2.0]},
            r"classes.shape = \{3\}\s+weights.shape = \{2\}",
        ),
        ({"ignore_class": True, "classes": [1]}, "cannot be used when ``ignore_class`` is True"),
        ({"ignore_class": True, "output_class": True}, "cannot be used when ``ignore_class``"),
        ({"k_largest": 0}, "``k_largest`` must be at least 1; got 0"),
        ({"threshold": [1, 2, 3]}, 'Argument "threshold" expected shape 2 but got 3 values'),
        ({"format": "corners"}, "must be one of"),
    ],
)
def test_argument_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((RuntimeError, ValueError), match=message):
        _run([_MASK], **kwargs)


@pytest.mark.parametrize(
    ("sample", "message"),
    [
        (np.zeros((2, 2), np.float32), "Unsupported input type: float32"),
        (np.zeros((2, 2), np.int64), "Unsupported input type: int64"),
        (np.zeros((1,) * 7, np.uint8), "Unsupported number of dimensions 7"),
    ],
)
def test_input_errors(sample: np.ndarray, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        _run([sample])


def test_ignore_class_refuses_per_sample_classes() -> None:
    with pytest.raises(RuntimeError, match="cannot be used when ``ignore_class`` is True"):
        build(
            lambda: fn.segmentation.random_object_bbox(
                feed([_MASK]), format="box", ignore_class=True, classes=feed([np.int32([1])])
            )
        )


def test_check_operator() -> None:
    rng = np.random.default_rng(0)
    example = OperatorExample(
        [[rng.integers(0, 4, (8, 8)).astype(np.uint8) for _ in range(4)]],
        args={"format": "box", "output_class": True, "foreground_prob": 0.8},
    )
    assert "threads" in check_operator("segmentation.random_object_bbox", example)
