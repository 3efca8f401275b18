"""``resize`` and ``random_resized_crop`` against DALI's observed sizes and a direct reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from feedline import fn, pipeline_def, types
from feedline.core.errors import OperatorError
from feedline.core.kernel import sample_rng
from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.image.windows import random_crop_window, resize_plan
from tests.operators.cpu.image_ops_testing import (
    PIL_TOLERANCE,
    dali_round,
    reference_resize,
    triangle_matrix,
    use_image_plugins,
)
from tests.operators.cpu.image_samples import PerSample, generated_image, real_images, run_op

RNG = np.random.default_rng(3)
NOISE = RNG.integers(0, 256, (45, 60, 3), dtype=np.uint8)


@pytest.fixture(autouse=True)
def _plugins(empty_plugin_system: PluginSystem) -> None:
    use_image_plugins(empty_plugin_system)


# Output sizes DALI 2.4 produced for a 375 x 500 image.
DALI_SIZES = [
    ({"resize_shorter": 256}, (256, 341)),
    ({"resize_shorter": 256, "max_size": (300,)}, (225, 300)),
    ({"resize_longer": 100}, (75, 100)),
    ({"resize_x": 100}, (75, 100)),
    ({"resize_y": 100}, (100, 133)),
    ({"size": (100, 0)}, (100, 133)),
    ({"size": (100, 200), "mode": "not_larger"}, (100, 133)),
    ({"size": (100, 200), "mode": "not_smaller"}, (150, 200)),
    ({"resize_x": 100, "resize_y": 50, "mode": "stretch"}, (50, 100)),
    ({"resize_x": 100, "resize_y": 50}, (50, 100)),
    ({"resize_x": 100, "resize_y": 50, "mode": "not_smaller"}, (75, 100)),
    ({"size": (100, 200), "mode": "not_smaller", "max_size": (150, 150)}, (113, 150)),
]


@pytest.mark.parametrize(("args", "expected"), DALI_SIZES)
def test_output_sizes_match_dali(args: dict, expected: tuple[int, int]) -> None:
    size, _ = resize_plan("resize", (375, 500), args)
    assert size == expected


# max_size and the axes without a requested size, as DALI 2.4 sized a 480 x 640 image: the
# default and stretch modes limit each axis on its own (the aspect ratio is not kept), stretch
# keeps an axis without a size, not_smaller/not_larger keep the aspect ratio.
DALI_LIMITED_SIZES = [
    ({"size": (600, 0), "max_size": (500,)}, (500, 500)),
    ({"size": (0, 600), "max_size": (450, 550)}, (450, 550)),
    ({"resize_x": 600, "max_size": (500,)}, (450, 500)),
    ({"resize_y": 700, "max_size": (450, 550)}, (450, 550)),
    ({"size": (300, 700), "max_size": (450, 550)}, (300, 550)),
    ({"size": (900, 0), "mode": "stretch"}, (900, 640)),
    ({"size": (900, 0), "mode": "stretch", "max_size": (500,)}, (500, 500)),
    ({"size": (700, 0), "mode": "not_smaller", "max_size": (450, 550)}, (413, 550)),
    ({"size": (0, 900), "mode": "not_larger", "max_size": (500,)}, (375, 500)),
    ({"size": (300, 900), "mode": "not_larger", "max_size": (450, 550)}, (300, 400)),
]


@pytest.mark.parametrize(("args", "expected"), DALI_LIMITED_SIZES)
def test_max_size_limits_as_dali_does(args: dict, expected: tuple[int, int]) -> None:
    size, _ = resize_plan("resize", (480, 640), args)
    assert size == expected


def test_empty_axes_and_sizes_below_one_pixel() -> None:
    """An empty axis stays empty (resize_shorter looks at the others); a size far below one
    pixel gives one pixel read from the whole region, not a region scaled up to match."""
    (out,), _ = run_op("resize", [np.zeros((0, 8, 3), np.uint8)], resize_shorter=10)
    assert out.shape == (0, 10, 3)
    (out,), _ = run_op("resize", [np.zeros((6, 0, 3), np.uint8)], resize_longer=12)
    assert out.shape == (12, 0, 3)
    size, source = resize_plan("resize", (12, 16), {"size": (1e-10,)})
    assert size == (1, 1) and source == ((0.0, 12.0), (0.0, 16.0))
    (out,), _ = run_op(
        "resize", [np.zeros((0, 12, 14, 1), np.uint8)], "DHWC", size=(20, 30, 40), mode="not_larger"
    )
    assert out.shape[0] == 0 and out.shape[-1] == 1


def test_pixels_match_reference_with_subpixel_scale() -> None:
    (got,) = run_op("resize", [NOISE], resize_shorter=32)[0]
    assert got.shape == (32, 43, 3)
    scale = 45 / 32
    kept = 43 * scale
    x0 = (60 - kept) / 2
    expected = reference_resize(NOISE, 32, 43, (0, 45), (x0, x0 + kept))
    assert np.abs(got - expected).max() <= PIL_TOLERANCE
    (exact,) = run_op("resize", [NOISE], resize_shorter=32, dtype=types.FLOAT)[0]
    np.testing.assert_allclose(exact, expected, atol=2e-3)
    (plain,) = run_op("resize", [NOISE], resize_shorter=32, subpixel_scale=False)[0]
    assert np.abs(plain - reference_resize(NOISE, 32, 43, (0, 45), (0, 60))).max() <= PIL_TOLERANCE


@pytest.mark.parametrize(
    ("kwargs", "y", "x"),
    [
        ({"roi_start": (5.0, 7.5), "roi_end": (40.0, 50.0)}, (5.0, 40.0), (7.5, 50.0)),
        (
            {"roi_start": (0.1, 0.2), "roi_end": (0.9, 0.6), "roi_relative": True},
            (4.5, 40.5),
            (12.0, 36.0),
        ),
        ({"roi_start": (45.0, 0.0), "roi_end": (0.0, 60.0)}, (45.0, 0.0), (0.0, 60.0)),
    ],
)
def test_roi_uses_the_pixels_around_it(kwargs: dict, y: tuple, x: tuple) -> None:
    (got,) = run_op("resize", [NOISE], size=(20, 25), **kwargs)[0]
    assert np.abs(got - reference_resize(NOISE, 20, 25, y, x)).max() <= PIL_TOLERANCE


def test_upscaling_is_bilinear_with_clamped_borders() -> None:
    small = NOISE[:7, :9]
    (got,) = run_op("resize", [small], size=(30, 41))[0]
    assert np.abs(got - reference_resize(small, 30, 41, (0, 7), (0, 9))).max() <= PIL_TOLERANCE


def test_real_photos_within_one_level() -> None:
    for image in real_images("file_tree", 2, max_side=200):
        (got,) = run_op("resize", [image], resize_shorter=64)[0]
        size, source = resize_plan("resize", image.shape[:2], {"resize_shorter": 64})
        expected = reference_resize(image, *size, source[0], source[1])
        assert np.abs(got - expected).max() <= PIL_TOLERANCE


def test_nearest_neighbour_picks_floor_of_the_centre() -> None:
    for size in ((17, 23), (90, 130)):
        (got,) = run_op("resize", [NOISE], size=size, interp_type=types.INTERP_NN)[0]
        ys = np.floor((np.arange(size[0]) + 0.5) * 45 / size[0]).astype(int)
        xs = np.floor((np.arange(size[1]) + 0.5) * 60 / size[1]).astype(int)
        np.testing.assert_array_equal(got, NOISE[ys][:, xs])


def test_linear_without_antialias_uses_two_taps() -> None:
    (got,) = run_op("resize", [NOISE], size=(15, 20), antialias=False, dtype=types.FLOAT)[0]

    def taps(in_size: int, out_size: int) -> np.ndarray:
        matrix = np.zeros((out_size, in_size))
        for j in range(out_size):
            pos = (j + 0.5) * in_size / out_size - 0.5
            base = math.floor(pos)
            for i, w in ((base, 1 - (pos - base)), (base + 1, pos - base)):
                matrix[j, min(max(i, 0), in_size - 1)] += w
        return matrix

    expected = np.einsum("oh,hwc->owc", taps(45, 15), np.einsum("ow,hwc->hoc", taps(60, 20), NOISE))
    np.testing.assert_allclose(got, expected, atol=1e-3)


@pytest.mark.parametrize(
    ("interp", "pil_filter"),
    [(types.INTERP_CUBIC, Image.Resampling.BICUBIC), (types.INTERP_LANCZOS3, Image.LANCZOS)],
)
def test_cubic_and_lanczos_downscale_match_pillow_inside(interp, pil_filter) -> None:
    image = generated_image(RNG, 90, 120)
    (got,) = run_op("resize", [image], size=(30, 40), interp_type=interp)[0]
    expected = np.asarray(Image.fromarray(image).resize((40, 30), pil_filter)).astype(int)
    # Pillow works in fixed point and rounds (and clips) its intermediate pass to 8 bits, which
    # the negative lobes of these filters can push 2 levels away from the float result.
    assert np.abs(got.astype(int) - expected)[3:-3, 3:-3].max() <= 2


def test_float_and_uint16_inputs_are_exact() -> None:
    as_float = NOISE.astype(np.float32) / 7
    (got,) = run_op("resize", [as_float], size=(20, 26))[0]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, reference_resize(as_float, 20, 26, (0, 45), (0, 60)), atol=1e-3)
    wide = NOISE.astype(np.uint16) * 200
    (got,) = run_op("resize", [wide], size=(20, 26))[0]
    expected = np.floor(reference_resize(wide, 20, 26, (0, 45), (0, 60)) + 0.5)
    assert got.dtype == np.uint16 and np.abs(got - expected).max() <= 1


def test_layouts_agree_with_hwc() -> None:
    (hwc,) = run_op("resize", [NOISE], size=(20, 26))[0]
    (chw,), layout = run_op("resize", [NOISE.transpose(2, 0, 1)], "CHW", size=(20, 26))
    assert layout == "CHW"
    np.testing.assert_array_equal(chw, hwc.transpose(2, 0, 1))
    (hw,), _ = run_op("resize", [NOISE[:, :, 1]], "HW", size=(20, 26))
    np.testing.assert_array_equal(hw, hwc[:, :, 1])
    (frames,), _ = run_op("resize", [np.stack([NOISE, NOISE[::-1]])], "FHWC", size=(20, 26))
    np.testing.assert_array_equal(frames[0], hwc)


def test_per_sample_sizes() -> None:
    out, _ = run_op("resize", [NOISE, NOISE], resize_x=PerSample([30.0, 12.0]))
    assert [o.shape for o in out] == [(23, 30, 3), (9, 12, 3)]  # 22.5 rounds up


@pytest.mark.parametrize(
    ("kwargs", "layout", "sample", "message"),
    [
        ({}, "HWC", NOISE, "no output size"),
        ({"size": (10, 10), "resize_x": 5.0}, "HWC", NOISE, "cannot be combined"),
        (
            {"size": (10, 10)},
            "HWCD",
            NOISE[None],
            'The layout "HWCD" does not match any of the allowed layouts',
        ),
        ({"size": (10, 10)}, "HWC", NOISE.astype(np.int8), "int8 is not supported"),
    ],
)
def test_errors_name_the_problem(kwargs: dict, layout: str, sample, message: str) -> None:
    with pytest.raises(OperatorError, match=message):
        run_op("resize", [sample], layout, **kwargs)


def expected_window(seed: int, index: int, height: int, width: int) -> tuple[int, int, int, int]:
    """The documented draw: four uniform numbers per attempt (all attempts in one draw) give
    the area (uniform), the ratio (log-uniform), then y and x; the first fit wins."""
    draws = sample_rng(seed, 0, index).random((10, 4))
    for u_area, u_ratio, u_y, u_x in draws:
        area = (0.08 + 0.92 * u_area) * height * width
        log_lo, log_hi = math.log(3 / 4), math.log(4 / 3)
        ratio = math.exp(log_lo + (log_hi - log_lo) * u_ratio)
        w, h = dali_round(math.sqrt(area * ratio)), dali_round(math.sqrt(area / ratio))
        if 0 < w <= width and 0 < h <= height:
            return math.floor(u_y * (height - h + 1)), math.floor(u_x * (width - w + 1)), h, w
    raise AssertionError("the test images always fit within 10 attempts")


def test_random_resized_crop_resizes_the_documented_window() -> None:
    images = [generated_image(RNG, 60, 80), NOISE]

    @pipeline_def(batch_size=2, num_threads=2, device_id=None)
    def pipe():
        data = fn.external_source(source=lambda: images, batch=True, layout="HWC")
        return fn.random_resized_crop(data, size=(24, 32), seed=1234)

    p = pipe()
    p.build()
    (batch,) = p.run()
    out = [batch.at(i) for i in range(2)]
    for index, (image, got) in enumerate(zip(images, out, strict=True)):
        y, x, h, w = expected_window(1234, index, *image.shape[:2])
        expected = reference_resize(image, 24, 32, (y, y + h), (x, x + w))
        assert got.shape == (24, 32, 3)
        assert np.abs(got - expected).max() <= PIL_TOLERANCE


def test_random_resized_crop_is_reproducible_and_validates() -> None:
    first, _ = run_op("random_resized_crop", [NOISE] * 4, size=16, num_threads=1, seed=9)
    second, _ = run_op("random_resized_crop", [NOISE] * 4, size=16, num_threads=2, seed=9)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="random_area"):
        run_op("random_resized_crop", [NOISE], size=16, random_area=(0.5, 0.1))
    with pytest.raises(ValueError, match="'size' needs 1 or 2"):
        run_op("random_resized_crop", [NOISE], size=(1.0, 2.0, 3.0))


@settings(max_examples=200, deadline=None)
@given(
    height=st.integers(1, 300),
    width=st.integers(1, 300),
    area=st.tuples(st.floats(0.01, 1.0), st.floats(0.01, 1.0)).map(sorted),
    ratio=st.tuples(st.floats(0.2, 5.0), st.floats(0.2, 5.0)).map(sorted),
    seed=st.integers(0, 2**32),
)
def test_random_window_always_fits(height, width, area, ratio, seed) -> None:
    y, x, h, w = random_crop_window(np.random.default_rng(seed), height, width, area, ratio)
    assert min(y, x) >= 0 and min(h, w) >= 1
    assert y + h <= height and x + w <= width


def test_triangle_reference_rows_sum_to_one() -> None:
    np.testing.assert_allclose(triangle_matrix(10, 4, 0, 10).sum(axis=1), 1.0)


VOLUME = np.random.default_rng(11).integers(0, 256, (6, 10, 12, 3), dtype=np.uint8)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"size": [3, 7, 17]}, (3, 7, 17, 3)),
        ({"resize_z": 9, "resize_x": 5}, (9, 8, 5, 3)),  # H by the geometric mean of the scales
        ({"resize_shorter": 4}, (4, 7, 8, 3)),
        ({"size": [4, 4, 4], "roi_start": [1, 2, 3], "roi_end": [5, 8, 10]}, (4, 4, 4, 3)),
    ],
)
def test_volume_output_sizes(kwargs: dict, expected: tuple[int, ...]) -> None:
    out, layout = run_op("resize", [VOLUME, VOLUME], "DHWC", **kwargs)
    assert layout == "DHWC" and out[0].shape == expected and out[0].dtype == np.uint8


def test_planar_and_sequence_volumes_match_the_interleaved_one() -> None:
    interleaved, _ = run_op("resize", [VOLUME], "DHWC", size=[9, 5, 5])
    planar, _ = run_op("resize", [np.moveaxis(VOLUME, -1, 0)], "CDHW", size=[9, 5, 5])
    np.testing.assert_array_equal(planar[0], np.moveaxis(interleaved[0], -1, 0))
    sequence, _ = run_op("resize", [np.stack([VOLUME, VOLUME])], "FDHWC", size=[9, 5, 5])
    np.testing.assert_array_equal(sequence[0], np.stack([interleaved[0]] * 2))


@settings(max_examples=10)
@given(st.integers(1, 9), st.integers(2, 20), st.integers(2, 20))
def test_a_volume_constant_along_depth_resizes_each_slice_as_an_image(
    depth: int, height: int, width: int
) -> None:
    image = NOISE[:8, :9].astype(np.float32)
    volume = np.stack([image] * 4)
    out, _ = run_op("resize", [volume], "DHWC", size=[depth, height, width])
    expected, _ = run_op("resize", [image], "HWC", size=[height, width])
    assert out[0].shape == (depth, height, width, 3)
    for plane in out[0]:
        np.testing.assert_allclose(plane, expected[0], rtol=1e-5, atol=1e-3)


def test_interp_type_per_sample_from_enum_data() -> None:
    filters = [types.INTERP_NN, types.INTERP_CUBIC]

    @pipeline_def(batch_size=2, num_threads=2, device_id=None)
    def pipe():
        data = fn.external_source(source=lambda: [NOISE, NOISE], batch=True, layout="HWC")
        chosen = fn.external_source(
            source=lambda: [
                np.asarray(f, types.to_numpy_dtype(types.INTERP_TYPE)) for f in filters
            ],
            batch=True,
        )
        return (
            fn.resize(data, size=(20, 25), interp_type=chosen),
            fn.resize(data, size=(20, 25), interp_type=filters[0]),
            fn.resize(data, size=(20, 25), interp_type=filters[1]),
        )

    p = pipe()
    p.build()
    per_sample, nearest, cubic = p.run()
    np.testing.assert_array_equal(per_sample.at(0), nearest.at(0))
    np.testing.assert_array_equal(per_sample.at(1), cubic.at(1))
    assert not np.array_equal(nearest.at(1), cubic.at(1))
