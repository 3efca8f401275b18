"""Crop windows: the degenerate cases of ``random_crop_window``."""

import numpy as np

from feedline.operators.cpu.image.windows import random_crop_window


def test_an_empty_image_gives_the_whole_empty_window() -> None:
    rng = np.random.default_rng(0)
    assert random_crop_window(rng, 0, 0) == (0, 0, 0, 0)
    assert random_crop_window(rng, 0, 5) == (0, 0, 0, 5)
