"""Errors shared by the operator families, as the operators raise them (every plugin loaded)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from feedline import OperatorError
from tests.operators.cpu.image_samples import run_op


@pytest.mark.parametrize(
    ("op", "kwargs", "anchor", "shape"),
    [
        (
            "slice",
            {"start": (-5, -6), "shape": (73, 72), "axis_names": "HW"},
            "-5 x -6 x 0",
            "73 x 72 x 3",
        ),
        ("crop", {"crop": (80, 160)}, "-20 x -40 x 0", "80 x 160 x 3"),
        ("crop_mirror_normalize", {"crop": (80, 160)}, "-20 x -40 x 0", "80 x 160 x 3"),
    ],
)
def test_a_window_out_of_bounds_is_reported_in_dalis_words(op, kwargs, anchor, shape) -> None:
    """slice, crop and crop_mirror_normalize share DALI's message: the whole sample's shape, and
    the window's anchor and shape over every axis (unsliced axes whole)."""
    expected = (
        "Slice can't be placed out of bounds with current policy. Got: input_shape="
        f"{{40 x 80 x 3}}, slice_anchor={{{anchor}}}, slice_shape={{{shape}}}"
    )
    with pytest.raises(OperatorError, match=re.escape(expected)):
        run_op(op, [np.zeros((40, 80, 3), np.uint8)], **kwargs)
