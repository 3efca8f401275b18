"""``experimental.warp_perspective``: identities, translations, inverse maps, sizes and errors."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import OperatorError, types
from tests.operators.cpu.image_samples import PerSample, generated_image, run_op

IDENTITY = [1, 0, 0, 0, 1, 0, 0, 0, 1]


@pytest.mark.parametrize("origin", ["corner", "center"])
@pytest.mark.parametrize("interp", [types.INTERP_NN, types.INTERP_LINEAR, types.INTERP_CUBIC])
def test_identity_keeps_the_image(origin: str, interp: types.InterpType) -> None:
    image = generated_image(np.random.default_rng(9), 12, 15)
    (out,), layout = run_op("experimental.warp_perspective", [image], "HWC", matrix=IDENTITY,
                            pixel_origin=origin, interp_type=interp)  # fmt: skip
    assert layout == "HWC"
    np.testing.assert_array_equal(out, image)


def test_a_whole_pixel_translation_moves_the_image_and_fills_the_rest() -> None:
    image = generated_image(np.random.default_rng(10), 10, 12)
    shift = [1, 0, 3, 0, 1, 2, 0, 0, 1]  # output (x, y) samples input (x + 3, y + 2)
    (out,), _ = run_op("experimental.warp_perspective", [image], "HWC", matrix=shift,
                       fill_value=[5, 6, 7])  # fmt: skip
    np.testing.assert_array_equal(out[:8, :9], image[2:, 3:])
    np.testing.assert_array_equal(out[8:, :], np.broadcast_to([5, 6, 7], (2, 12, 3)))
    (forward,), _ = run_op("experimental.warp_perspective", [image], "HWC",
                           matrix=[1, 0, -3, 0, 1, -2, 0, 0, 1], inverse_map=False,
                           fill_value=[5, 6, 7])  # fmt: skip
    np.testing.assert_array_equal(forward, out)
    (replicated,), _ = run_op("experimental.warp_perspective", [image], "HWC", matrix=shift,
                              border_mode="replicate")  # fmt: skip
    np.testing.assert_array_equal(replicated[9, 11], image[9, 11])


def test_matrix_as_input_size_and_sequences() -> None:
    rng = np.random.default_rng(11)
    image = generated_image(rng, 16, 20)
    scale = np.array([[2, 0, 0], [0, 2, 0], [0, 0, 1]], np.float32)
    (half,), _ = run_op("experimental.warp_perspective", [image], "HWC", [scale], size=[8, 10])
    assert half.shape == (8, 10, 3)
    # a 2x downscale by the inverse map samples between input pixels at (2x + 0.5, 2y + 0.5)
    expected = image.astype(np.float64).reshape(8, 2, 10, 2, 3).mean(axis=(1, 3))
    assert np.abs(half - expected).max() <= 1
    video = np.stack([image, image[::-1]])
    (frames,), layout = run_op("experimental.warp_perspective", [video], "FHWC",
                               matrix=scale.ravel().tolist(), size=[8, 10])  # fmt: skip
    assert layout == "FHWC"
    np.testing.assert_array_equal(frames[0], half)
    gray = np.ascontiguousarray(image[:, :, 0])
    (plane,), _ = run_op("experimental.warp_perspective", [gray], "HW", [scale], size=[8, 10])
    np.testing.assert_array_equal(plane, half[:, :, 0])


@pytest.mark.parametrize(
    ("image", "extra", "kwargs", "message"),
    [
        (np.zeros((4, 4, 3), np.int32), [], {"matrix": IDENTITY}, "uint8, int16, uint16, float"),
        (np.zeros((4, 4, 5), np.uint8), [], {"matrix": IDENTITY}, "more than 4 channels"),
        (np.zeros((4, 4, 3), np.uint8), [], {}, "got 0 values"),
        (np.zeros((4, 4, 3), np.uint8), [[np.eye(3, dtype=np.float32)]], {"matrix": IDENTITY},
         "should not be provided at the same time"),
        (np.zeros((4, 4, 3), np.uint8), [], {"matrix": [1, 0, 0]}, "shape 3 x 3 but got 3"),
        (np.zeros((4, 4, 3), np.uint8), [[np.eye(3)]], {}, "float32"),
        (np.zeros((4, 4, 3), np.uint8), [], {"matrix": IDENTITY, "fill_value": [1, 2]},
         "channels"),
        (np.zeros((4, 4, 3), np.uint8), [], {"matrix": IDENTITY,
                                             "interp_type": types.INTERP_GAUSSIAN}, "interp"),
    ],
)  # fmt: skip
def test_warp_perspective_errors(image, extra, kwargs, message) -> None:
    with pytest.raises((OperatorError, ValueError), match=message):
        run_op("experimental.warp_perspective", [image], "HWC", *extra, **kwargs)


def test_planar_layouts_warp_each_channel_and_take_a_scalar_fill() -> None:
    image = generated_image(np.random.default_rng(16), 12, 10)
    shift = [1, 0, 2, 0, 1, 1, 0, 0, 1]
    (hwc,), _ = run_op("experimental.warp_perspective", [image], "HWC", matrix=shift,
                       fill_value=9)  # fmt: skip
    planar = np.ascontiguousarray(image.transpose(2, 0, 1))
    (chw,), layout = run_op("experimental.warp_perspective", [planar], "CHW", matrix=shift,
                            fill_value=9)  # fmt: skip
    assert layout == "CHW"
    np.testing.assert_array_equal(chw.transpose(1, 2, 0), hwc)
    with pytest.raises(OperatorError, match="Only scalar fill_value"):
        run_op("experimental.warp_perspective", [planar], "CHW", matrix=shift, fill_value=[1, 2, 3])
    (unlabelled,), _ = run_op("experimental.warp_perspective", [image], None, matrix=shift,
                              fill_value=9)  # fmt: skip
    np.testing.assert_array_equal(unlabelled, hwc)


def test_per_sample_matrices_and_sizes() -> None:
    images = [generated_image(np.random.default_rng(i), 10, 12) for i in range(2)]
    shifts = [np.array([1, 0, dx, 0, 1, 0, 0, 0, 1], np.float32) for dx in (1, 2)]
    sizes = [np.array([6, 7], np.float32), np.array([8, 5], np.float32)]
    out, _ = run_op("experimental.warp_perspective", images, "HWC", matrix=PerSample(shifts),
                    size=PerSample(sizes))  # fmt: skip
    for image, result, (dx, (h, w)) in zip(images, out, [(1, (6, 7)), (2, (8, 5))], strict=True):
        assert result.shape == (h, w, 3)
        np.testing.assert_array_equal(result[:, : w - dx], image[:h, dx:w])
