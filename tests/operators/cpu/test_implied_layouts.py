"""Data without a layout through DALI's image operators: the output is labelled with the layout
the operator takes it to have (every plugin loaded, as a user's program has them)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.operators.cpu.image_samples import run_op


@pytest.mark.parametrize(
    ("op", "kwargs", "implied"),
    [
        ("brightness_contrast", {"brightness": 2.0}, {3: "HWC", 4: "FHWC"}),
        ("hsv", {"saturation": 0.5}, {3: "HWC", 4: "FHWC"}),
        ("flip", {}, {3: "HWC", 4: "FHWC"}),
        ("resize", {"size": (4, 4)}, {3: "HWC", 4: "FHWC"}),
        ("rotate", {"angle": 10.0}, {3: "HWC", 4: "FHWC"}),
        ("crop", {"crop": (2, 2)}, {3: "HWC", 4: "DHWC"}),
    ],
)
def test_data_without_a_layout_comes_out_labelled_as_dali_labels_it(op, kwargs, implied) -> None:
    """DALI's image operators take 3-D data without a layout as HWC (4-D as FHWC, or DHWC for
    crop) and their output carries that layout; other ranks stay without one."""
    for ndim, layout in implied.items():
        shape = (2, 6, 7, 3)[4 - ndim :]
        _, got = run_op(op, [np.zeros(shape, np.uint8)] * 2, "", **kwargs)
        assert got == layout, (op, ndim)
    if op == "brightness_contrast":
        _, got = run_op(op, [np.zeros((6, 7), np.uint8)], "", **kwargs)
        assert got == ""
