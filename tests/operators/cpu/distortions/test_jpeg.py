"""``jpeg_compression_distortion``: a real JPEG round trip at the requested quality."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError
from tests.operators.cpu.image_samples import PerSample, real_images, run_op


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def test_lower_quality_loses_more_and_matches_a_jpeg_file() -> None:
    import cv2

    image = real_images(count=1)[0]
    qualities = [1, 10, 50, 95]
    out, _ = run_op("jpeg_compression_distortion", [image] * 4, "HWC",
                    quality=PerSample([np.int32(q) for q in qualities]))  # fmt: skip
    scores = [psnr(o, image) for o in out]
    assert scores == sorted(scores) and scores[-1] > 30 > 25 > scores[0]
    _, encoded = cv2.imencode(".jpg", image[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 50])
    np.testing.assert_array_equal(out[2], cv2.imdecode(encoded, cv2.IMREAD_COLOR)[:, :, ::-1])


def test_quality_is_clamped_and_sequences_run_frame_by_frame() -> None:
    image = real_images(count=1, max_side=64)[0]
    (clamped,), _ = run_op("jpeg_compression_distortion", [image], "HWC", quality=0)
    (lowest,), _ = run_op("jpeg_compression_distortion", [image], "HWC", quality=1)
    np.testing.assert_array_equal(clamped, lowest)
    video = np.stack([image, image[::-1].copy()])
    (frames,), layout = run_op("jpeg_compression_distortion", [video], "FHWC", quality=30)
    (first,), _ = run_op("jpeg_compression_distortion", [image], "HWC", quality=30)
    assert layout == "FHWC"
    np.testing.assert_array_equal(frames[0], first)


@pytest.mark.parametrize(
    ("image", "message"),
    [(np.zeros((8, 8, 1), np.uint8), "3-channel"), (np.zeros((8, 8, 3), np.float32), "float32")],
)
def test_jpeg_errors(image: np.ndarray, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        run_op("jpeg_compression_distortion", [image], "HWC")
