"""``flip``: against explicit index arithmetic, on real and generated images, all layouts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import OperatorError
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.geometry.flip import FLIP_LAYOUTS, flip
from tests.operators.cpu.image_samples import (
    PerSample,
    generated_image,
    real_images,
    run_op,
    use_transforms,
)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_transforms(empty_plugin_system)


def reference_flip(data: np.ndarray, layout: str, flags: dict[str, bool]) -> np.ndarray:
    """out[i] = in[mirror(i)] computed from coordinate grids, axis by layout letter."""
    coords = list(np.indices(data.shape))
    for letter, wanted in flags.items():
        axis = layout.find(letter)
        if wanted and axis >= 0:
            coords[axis] = data.shape[axis] - 1 - coords[axis]
    return data[tuple(coords)]


def test_real_photos_match_mirrored_views() -> None:
    images = real_images("file_tree", 3)
    out, layout = run_op("flip", images)
    assert layout == "HWC"
    for img, got in zip(images, out, strict=True):
        np.testing.assert_array_equal(got, img[:, ::-1])
    out, _ = run_op("flip", images, horizontal=0, vertical=1)
    for img, got in zip(images, out, strict=True):
        np.testing.assert_array_equal(got, img[::-1])


def test_coco_images_both_axes() -> None:
    images = real_images("coco_dali_dummy", 2)
    out, _ = run_op("flip", images, horizontal=1, vertical=1)
    for img, got in zip(images, out, strict=True):
        np.testing.assert_array_equal(got, img[::-1, ::-1])


@settings(max_examples=60, deadline=None)
@given(
    layout=st.sampled_from(FLIP_LAYOUTS),
    seed=st.integers(0, 2**16),
    horizontal=st.booleans(),
    vertical=st.booleans(),
    depthwise=st.booleans(),
)
def test_flip_matches_reference_for_every_layout(
    layout: str, seed: int, horizontal: bool, vertical: bool, depthwise: bool
) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(rng.integers(1, 5)) for _ in layout)
    data = rng.integers(-100, 100, shape).astype(np.int16)
    got = flip(data, layout, horizontal, vertical, depthwise)
    expected = reference_flip(data, layout, {"W": horizontal, "H": vertical, "D": depthwise})
    np.testing.assert_array_equal(got, expected)
    assert got.flags.c_contiguous


def test_data_without_layout_is_taken_as_hwc_or_fhwc() -> None:
    rng = np.random.default_rng(1)
    image = generated_image(rng, 6, 9)
    (out,), layout = run_op("flip", [image], layout=None)
    assert layout == "HWC"  # labelled as DALI labels it
    np.testing.assert_array_equal(out, image[:, ::-1])
    frames = np.stack([image, image[::-1]])
    (out,), _ = run_op("flip", [frames], layout=None, horizontal=0, vertical=1)
    np.testing.assert_array_equal(out, frames[:, ::-1])


def test_chw_and_depthwise_no_op_on_images() -> None:
    rng = np.random.default_rng(2)
    image = generated_image(rng, 5, 7)
    chw = np.ascontiguousarray(image.transpose(2, 0, 1))
    (out,), layout = run_op("flip", [chw], layout="CHW")
    assert layout == "CHW"
    np.testing.assert_array_equal(out, chw[:, :, ::-1])
    (out,), _ = run_op("flip", [image], horizontal=0, depthwise=1)
    np.testing.assert_array_equal(out, image)


def test_per_sample_flags_and_dtypes() -> None:
    rng = np.random.default_rng(3)
    images = [generated_image(rng, 4, 6).astype(np.float32) / 255 for _ in range(3)]
    out, _ = run_op("flip", images, horizontal=PerSample([0, 1, 2]), vertical=PerSample([1, 0, 0]))
    np.testing.assert_array_equal(out[0], images[0][::-1])
    np.testing.assert_array_equal(out[1], images[1][:, ::-1])
    np.testing.assert_array_equal(out[2], images[2][:, ::-1])
    assert all(o.dtype == np.float32 for o in out)


@pytest.mark.parametrize(
    ("sample", "layout", "message"),
    [
        (
            np.zeros((4, 5, 3), np.uint8),
            "XYZ",
            'The layout "XYZ" does not match any of the allowed layouts',
        ),
        (np.zeros((4,), np.uint8), None, "The number of dimensions 1 does not match"),
    ],
)
def test_bad_inputs_name_the_problem(sample: np.ndarray, layout: str | None, message: str) -> None:
    with pytest.raises(OperatorError, match=message) as info:
        run_op("flip", [sample], layout=layout)
    assert "flip" in str(info.value)
    assert "sample 0" in str(info.value)
