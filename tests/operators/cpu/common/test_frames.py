"""How the image-processing families read layouts: spatial axes, frames, channels."""

from __future__ import annotations

import numpy as np
import pytest

from feedline.operators.cpu.common.frames import (
    PlaneSplit,
    from_planes,
    split_axes,
    split_images,
    to_planes,
)


@pytest.mark.parametrize(
    ("layout", "ndim", "expected"),
    [
        ("", 3, PlaneSplit(0, 3, False, False)),
        ("HWC", 3, PlaneSplit(0, 2, True, False)),
        ("CWH", 3, PlaneSplit(1, 2, False, False)),
        ("FCDHW", 5, PlaneSplit(2, 3, False, True)),
        ("FHWC", 4, PlaneSplit(1, 2, True, True)),
    ],
)
def test_spatial_axes_are_those_not_named_f_or_c(layout: str, ndim: int, expected) -> None:
    assert split_axes("op", layout, ndim) == expected


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("DHCW", "Only channel-first or channel-last"),
        ("FCHCW", "Only channel-first or channel-last"),
        ("HFWC", "should begin with 'F' or 'C'"),
        ("FCCHW", "more the one occurrence"),
        ("CF", "No spatial axes"),
        ("FWXYZC", "Too many dimensions, found: 4 data axes"),
    ],
)
def test_layout_errors_use_dalis_words(layout: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        split_axes("op", layout, len(layout))


def test_planes_round_trip_without_copies() -> None:
    video = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    split = split_axes("op", "FCHW", 4)
    planes = to_planes(video, split)
    assert planes.shape == (6, 4, 5, 1) and np.shares_memory(planes, video)
    np.testing.assert_array_equal(from_planes(planes, split, video.shape), video)
    assert split_images("op", "", 3) == PlaneSplit(0, 2, True, False)  # HWC
    with pytest.raises(ValueError, match="2 spatial"):
        split_images("op", "DHW", 3)
