"""``equalize`` and ``clahe``: the histogram-equalization formula, layouts and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from feedline import OperatorError
from tests.operators.cpu.image_samples import generated_image, run_op


def equalized(channel: np.ndarray) -> np.ndarray:
    """v -> round(255 * (cdf(v) - cdf_min) / (N - cdf_min)); a one-valued channel is kept.

    The scale ``255 / (N - cdf_min)`` and the product are single precision, as in OpenCV (and
    so DALI): a tie such as 7 * 255 / 14 = 127.5 lands on 127.49999 in float32 and rounds down.
    """
    counts = np.bincount(channel.ravel(), minlength=256)
    cdf = np.cumsum(counts)
    lowest = cdf[counts > 0][0]
    if lowest == channel.size:
        return channel.copy()
    scale = np.float32(255.0) / np.float32(channel.size - lowest)
    lut = np.rint((cdf - lowest).astype(np.float32) * scale)
    return np.clip(lut, 0, 255).astype(np.uint8)[channel]


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.uint8, st.tuples(st.integers(1, 12), st.integers(1, 12), st.integers(1, 4))))
@example(np.array([[2, 2, 2, 2, 2], [2, 0, 2, 1, 1], [1, 1, 1, 1, 1]], np.uint8)[:, :, None])
def test_each_channel_follows_the_equalization_formula(image: np.ndarray) -> None:
    (out,), layout = run_op("equalize", [image], "HWC")
    assert layout == "HWC"
    for c in range(image.shape[2]):
        np.testing.assert_array_equal(out[:, :, c], equalized(image[:, :, c]))


def test_layouts_sequences_and_the_legacy_name() -> None:
    rng = np.random.default_rng(7)
    video = rng.integers(0, 120, (2, 6, 5, 3), dtype=np.uint8)
    (frames,), _ = run_op("equalize", [video], "FHWC")
    planar = np.ascontiguousarray(video.transpose(0, 3, 1, 2))
    (fchw,), layout = run_op("experimental.equalize", [planar], "FCHW")
    assert layout == "FCHW"
    np.testing.assert_array_equal(fchw.transpose(0, 2, 3, 1), frames)
    (gray,), _ = run_op("equalize", [video[0, :, :, 0]], "HW")
    np.testing.assert_array_equal(gray, frames[0, :, :, 0])
    assert frames.max() == 255 and frames.min() == 0


def test_equalize_takes_uint8_only() -> None:
    with pytest.raises(OperatorError, match="float32"):
        run_op("equalize", [np.zeros((4, 4, 3), np.float32)], "HWC")


def test_clahe_matches_opencv_and_lifts_local_contrast() -> None:
    import cv2

    rng = np.random.default_rng(8)
    image = (generated_image(rng, 48, 64) // 4 + 60).astype(np.uint8)
    engine = cv2.createCLAHE(2.5, (4, 3))
    (per_channel,), _ = run_op("clahe", [image], "HWC", tiles_x=4, tiles_y=3, clip_limit=2.5,
                               luma_only=False)  # fmt: skip
    for c in range(3):
        expected = engine.apply(np.ascontiguousarray(image[:, :, c]))
        np.testing.assert_array_equal(per_channel[:, :, c], expected)
    assert per_channel.std() > image.std()
    (luma,), _ = run_op("clahe", [image], "HWC", tiles_x=4, tiles_y=3, clip_limit=2.5)
    lab = cv2.cvtColor(image, cv2.COLOR_RGB2Lab)
    lab[:, :, 0] = engine.apply(np.ascontiguousarray(lab[:, :, 0]))
    np.testing.assert_array_equal(luma, cv2.cvtColor(lab, cv2.COLOR_Lab2RGB))
    (gray,), _ = run_op("clahe", [image[:, :, :1].copy()], "HWC", tiles_x=4, tiles_y=3,
                        clip_limit=2.5)  # fmt: skip
    np.testing.assert_array_equal(gray, per_channel[:, :, :1])


@pytest.mark.parametrize(
    ("shape", "kwargs", "message"),
    [
        ((8, 8, 4), {}, "1 or 3 channels"),
        ((8, 8, 3), {"tiles_x": 0}, "tiles_x"),
        ((8, 8, 3), {"bins": 100}, "power of 2"),
        ((8, 8, 3), {"clip_limit": 0.0}, "clip_limit"),
    ],
)
def test_clahe_errors(shape: tuple, kwargs: dict, message: str) -> None:
    args = {"tiles_x": 2, "tiles_y": 2, "clip_limit": 2.0, **kwargs}
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op("clahe", [np.zeros(shape, np.uint8)], "HWC", **args)
