"""``roi_random_crop``: window rules, errors, reproducibility."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError, fn
from feedline.operators.cpu.crops.windows import roi_window_start
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.catalogue_testing import build, feed


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(1, 30)), max_size=3),
    st.integers(0, 2**32),
)
def test_roi_window_holds_or_lies_in_the_roi(dims: list[tuple[int, int, int]], seed: int) -> None:
    roi_start = np.array([d[0] for d in dims], np.int64)
    roi_end = roi_start + np.array([d[1] for d in dims], np.int64)
    crop = np.array([d[2] for d in dims], np.int64)
    start = roi_window_start(roi_start, roi_end, crop, None, np.random.default_rng(seed))
    end = start + crop
    larger = crop >= roi_end - roi_start
    assert np.all(np.where(larger, start <= roi_start, start >= roi_start))
    assert np.all(np.where(larger, end >= roi_end, end <= roi_end))


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 40), st.integers(0, 40), st.integers(0, 40), st.integers(0, 2**32))
def test_roi_window_stays_in_bounds_with_in_shape(
    crop: int, start: int, length: int, seed: int
) -> None:
    size = max(crop, start + length)
    out = roi_window_start(
        np.array([start]),
        np.array([start + length]),
        np.array([crop]),
        np.array([size]),
        np.random.default_rng(seed),
    )
    assert 0 <= out[0] <= size - crop


def test_roi_random_crop_forms() -> None:
    data = [np.zeros((12, 12, 3), np.uint8)] * 2
    (with_end, _), (with_shape, _), (bounded, _), (from_input, _) = build(
        lambda: (
            fn.roi_random_crop(crop_shape=[10, 10], roi_start=[5, 5], roi_end=[8, 9]),
            fn.roi_random_crop(crop_shape=[10, 10], roi_start=[5, 5], roi_shape=[30, 40]),
            fn.roi_random_crop(
                crop_shape=[10, 10], roi_start=[5, 5], roi_shape=[3, 4], in_shape=[12, 12]
            ),
            fn.roi_random_crop(
                feed(data), crop_shape=[10, 10, 3], roi_start=[5, 5, 0], roi_shape=[3, 4, 3]
            ),
        )
    )
    assert with_end[0].dtype == np.int64 and with_end[0].shape == (2,)
    assert all(-2 <= s[0] <= 5 and -1 <= s[1] <= 5 for s in with_end)
    assert all(5 <= s[0] <= 25 and 5 <= s[1] <= 35 for s in with_shape)
    assert all(0 <= s[0] <= 2 and 0 <= s[1] <= 2 for s in bounded + from_input)


def test_roi_random_crop_bounds_by_the_inputs_leading_dimensions() -> None:
    data = [np.zeros((12, 40, 3), np.uint8)] * 2
    ((inside, _),) = build(
        lambda: fn.roi_random_crop(
            feed(data), crop_shape=[10, 10], roi_start=[0, 0], roi_end=[12, 40]
        )
    )
    assert all(0 <= s[0] <= 2 and 0 <= s[1] <= 30 for s in inside)
    with pytest.raises((OperatorError, ValueError), match="ROI can't be out of bounds"):
        build(
            lambda: fn.roi_random_crop(
                feed(data), crop_shape=[10, 10], roi_start=[0, 0], roi_end=[30, 30]
            )
        )


def test_roi_random_crop_per_sample_arguments() -> None:
    starts = [np.array([0], np.int32), np.array([100], np.int32)]
    ((out, _),) = build(
        lambda: fn.roi_random_crop(crop_shape=[5], roi_start=feed(starts), roi_shape=[5])
    )
    assert [int(o[0]) for o in out] == [0, 100]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"roi_end": [8, 9], "roi_shape": [3, 4]}, "Either ROI end or ROI shape"),
        ({}, "Either ROI end or ROI shape"),
        ({"roi_shape": [3, 4, 1]}, "roi_shape has 3 values, expected 2"),
        ({"roi_shape": [3, 4], "in_shape": [5, 12]}, "Cropping shape can't be bigger"),
        ({"roi_shape": [30, 4], "in_shape": [12, 12]}, "ROI can't be out of bounds"),
        ({"roi_shape": [3, 4], "in_shape": [-12, 12]}, "Input shape can't be negative"),
    ],
)
def test_roi_random_crop_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        build(lambda: fn.roi_random_crop(crop_shape=[10, 10], roi_start=[5, 5], **kwargs))


def test_roi_random_crop_rejects_in_shape_with_an_input() -> None:
    data = [np.zeros((12, 12), np.uint8)] * 2
    with pytest.raises((OperatorError, ValueError), match="incompatible with providing an input"):
        build(
            lambda: fn.roi_random_crop(
                feed(data),
                crop_shape=[10, 10],
                roi_start=[5, 5],
                roi_shape=[3, 4],
                in_shape=[12, 12],
            )
        )


@pytest.mark.parametrize(
    ("name", "example"),
    [
        (
            "roi_random_crop",
            OperatorExample(args={"crop_shape": [4, 4], "roi_start": [2, 2], "roi_end": [3, 9]}),
        ),
    ],
)
def test_check_operator(name: str, example: OperatorExample) -> None:
    assert "threads" in check_operator(name, example)
