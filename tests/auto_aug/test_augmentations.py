"""Each standard augmentation against a NumPy or PIL reference, at several magnitude bins."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageEnhance

from feedline.auto_aug import augmentations as a

from .conftest import run_on

BINS = 11


def apply(aug, images, magnitude_bin, num_bins=BINS, **kwargs):
    return run_on(
        images, lambda d: aug(d, magnitude_bin=magnitude_bin, num_magnitude_bins=num_bins, **kwargs)
    )


def magnitudes(low, high, num_bins=BINS):
    return np.linspace(low, high, num_bins, dtype=np.float32)


@pytest.mark.parametrize("magnitude_bin", [0, 2, 5, 10])
def test_posterize_keeps_the_high_bits(images, magnitude_bin):
    aug = a.posterize.augmentation(mag_range=(0, 8))
    bits = int(np.clip(np.round(magnitudes(0, 8)[magnitude_bin]), 1, 8))
    mask = np.uint8((0xFF << (8 - bits)) & 0xFF)
    for out, image in zip(apply(aug, images, magnitude_bin), images, strict=True):
        np.testing.assert_array_equal(out, image & mask)


def test_poster_mask_clamps_to_one_to_eight_bits():
    assert a.poster_mask_uint8(0) == 0b1000_0000
    assert a.poster_mask_uint8(4) == 0b1111_0000
    assert a.poster_mask_uint8(8) == 0xFF
    assert a.poster_mask_uint8(12) == 0xFF
    assert a.poster_mask_uint8(3).dtype == np.uint8


@pytest.mark.parametrize("magnitude_bin", [0, 3, 8, 10])
def test_solarize_inverts_values_at_or_above_the_threshold(images, magnitude_bin):
    threshold = magnitudes(256, 0)[magnitude_bin]
    for out, image in zip(apply(a.solarize, images, magnitude_bin), images, strict=True):
        np.testing.assert_array_equal(out, np.where(image < threshold, image, 255 - image))


@pytest.mark.parametrize("magnitude_bin", [0, 4, 10])
def test_solarize_add_shifts_values_below_128(images, magnitude_bin):
    shift = np.uint8(magnitudes(0, 110)[magnitude_bin])
    for out, image in zip(apply(a.solarize_add, images, magnitude_bin), images, strict=True):
        expected = np.where(image < 128, (image + shift).astype(np.uint8), image)
        np.testing.assert_array_equal(out, expected)


def test_solarize_add_rejects_shifts_from_128():
    with pytest.raises(Exception, match="accepts shifts from 0 to 128"):
        a.solarize_add_shift(128)


def test_invert_and_identity(images):
    for out, image in zip(run_on(images, lambda d: a.invert(d)), images, strict=True):
        np.testing.assert_array_equal(out, 255 - image)
    for out, image in zip(run_on(images, lambda d: a.identity(d)), images, strict=True):
        np.testing.assert_array_equal(out, image)


def test_auto_contrast_stretches_each_channel(images):
    flat = np.full_like(images[0], 77)
    batch = [*images, flat]
    for out, image in zip(run_on(batch, lambda d: a.auto_contrast(d)), batch, strict=True):
        low = image.min(axis=(0, 1), keepdims=True).astype(np.float64)
        high = image.max(axis=(0, 1), keepdims=True).astype(np.float64)
        spread = high - low
        scale = np.where(spread > 0, 255 / np.where(spread > 0, spread, 1), 1)
        expected = (image - np.where(spread > 0, low, 0)) * scale
        assert np.abs(out.astype(np.float64) - expected).max() <= 1
    np.testing.assert_array_equal(out, flat)


def test_equalize_follows_opencv(images):
    cv2 = pytest.importorskip("cv2", reason="the OpenCV reference needs opencv-python-headless")
    for out, image in zip(run_on(images, lambda d: a.equalize(d)), images, strict=True):
        expected = np.stack([cv2.equalizeHist(image[..., c]) for c in range(3)], axis=-1)
        np.testing.assert_array_equal(out, expected)


ENHANCERS = {
    "brightness": ImageEnhance.Brightness,
    "contrast": ImageEnhance.Contrast,
    "color": ImageEnhance.Color,
    "sharpness": ImageEnhance.Sharpness,
}


@pytest.mark.parametrize("name", sorted(ENHANCERS))
@pytest.mark.parametrize("magnitude_bin", [0, 3, 7, 10])
def test_enhancements_match_pil_with_paper_ranges(images, name, magnitude_bin):
    to_param = a.sharpness_kernel_shifted if name == "sharpness" else None
    aug = getattr(a, name).augmentation((0.1, 1.9), False, to_param)
    factor = float(magnitudes(0.1, 1.9)[magnitude_bin])
    for out, image in zip(apply(aug, images, magnitude_bin), images, strict=True):
        expected = np.asarray(ENHANCERS[name](Image.fromarray(image)).enhance(factor))
        # PIL leaves the 1px border of Sharpness unfiltered; compare the interior.
        diff = np.abs(out.astype(int) - expected.astype(int))[1:-1, 1:-1]
        assert diff.max() <= 2, (name, factor)


@pytest.mark.parametrize("sign", [0, 1])
def test_enhancement_signs_mirror_around_one(images, sign):
    from feedline import fn, types
    from feedline.auto_aug.core import signed_bin

    def graph(data):
        signs = fn.random.uniform(values=[sign], dtype=types.INT32)
        return a.brightness(data, magnitude_bin=signed_bin(5, signs), num_magnitude_bins=BINS)

    factor = 1 + (-1) ** sign * float(magnitudes(0, 0.9)[5])
    for out, image in zip(run_on(images, graph), images, strict=True):
        expected = np.asarray(ImageEnhance.Brightness(Image.fromarray(image)).enhance(factor))
        assert np.abs(out.astype(int) - expected.astype(int)).max() <= 1


def test_sharpness_kernel_is_identity_at_zero_and_sums_to_one():
    identity = np.zeros((3, 3), np.float32)
    identity[1, 1] = 1
    np.testing.assert_allclose(a.sharpness_kernel(0), identity)
    for magnitude in (-0.9, 0.3, 0.9):
        assert a.sharpness_kernel(magnitude).sum() == pytest.approx(1)
    np.testing.assert_allclose(a.sharpness_kernel_shifted(1.4), a.sharpness_kernel(0.4))


@pytest.mark.parametrize("name", ["translate_x_no_shape", "translate_y_no_shape"])
def test_translation_by_whole_pixels_shifts_and_fills(images, name):
    aug = getattr(a, name).augmentation(mag_range=np.array([3.0]), randomly_negate=False)
    outs = run_on(images, lambda d: aug(d, magnitude_bin=0, fill_value=9, interp_type=None))
    axis = 1 if name.startswith("translate_x") else 0
    for out, image in zip(outs, images, strict=True):
        expected = np.full_like(image, 9)
        if axis == 1:
            expected[:, 3:] = image[:, :-3]
        else:
            expected[3:] = image[:-3]
        np.testing.assert_array_equal(out, expected)


def test_relative_translation_uses_the_shape(images):
    aug = a.translate_x.augmentation(mag_range=np.array([0.25]), randomly_negate=False)
    width = images[0].shape[1]
    outs = run_on(images, lambda d: aug(d, magnitude_bin=0, shape=images[0].shape[:2]))
    shift = int(width * 0.25)
    for out, image in zip(outs, images, strict=True):
        np.testing.assert_array_equal(out[:, shift:], image[:, :-shift])
        assert (out[:, :shift] == 128).all()


@pytest.mark.parametrize("name", ["shear_x", "shear_y", "rotate"])
def test_geometric_augmentations_are_identity_at_magnitude_zero(images, name):
    aug = getattr(a, name).augmentation(randomly_negate=False)
    for out, image in zip(apply(aug, images, 0), images, strict=True):
        np.testing.assert_array_equal(out, image)


def test_shear_x_moves_rows_by_their_height(images):
    aug = a.shear_x.augmentation(mag_range=np.array([1.0]), randomly_negate=False)
    image = np.zeros((8, 16, 3), np.uint8)
    image[:, 0] = 255
    (out,) = run_on([image], lambda d: aug(d, magnitude_bin=0, fill_value=0))
    columns = [int(np.argmax(out[row, :, 0])) for row in range(1, 8) if out[row, :, 0].max()]
    assert columns == sorted(columns) and columns[-1] > columns[0]
