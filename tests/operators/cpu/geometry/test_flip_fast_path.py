"""``flip`` through OpenCV (where it applies) gives exactly NumPy's reversed copy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feedline.operators.cpu.geometry.flip import FLIP_LAYOUTS, flip

pytest.importorskip("cv2", reason="the fast path needs OpenCV (opencv-python-headless)")

DTYPES = [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float16, np.float32, np.float64]


@given(
    layout=st.sampled_from(FLIP_LAYOUTS),
    dtype=st.sampled_from(DTYPES),
    flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    data=st.data(),
)
def test_flip_equals_reversed_axes(layout, dtype, flags, data):
    shape = tuple(data.draw(st.integers(1, 5)) for _ in layout)
    image = (np.arange(np.prod(shape)).reshape(shape) % 120).astype(dtype)
    horizontal, vertical, depthwise = flags
    expected = image
    for name, wanted in (("W", horizontal), ("H", vertical), ("D", depthwise)):
        if wanted and name in layout:
            expected = np.flip(expected, layout.index(name))
    result = flip(image, layout, horizontal, vertical, depthwise)
    assert result.shape == image.shape and result.dtype == image.dtype
    np.testing.assert_array_equal(result, expected)
